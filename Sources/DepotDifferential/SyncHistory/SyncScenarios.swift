import Depot
import DepotSQLite
import DepotSync
import DepotTesting
import Foundation

/// The sync area's scenarios: a ``SyncServer`` on the engine under test (the
/// subject's fresh store), devices on SQLite files, the tables of
/// ``SyncHistory``. Each pins one rule a server must keep on any engine:
/// accounts, evictions, exactly-once pushes, convergence.
enum SyncScenarios {
    /// A server on the subject and one device per account named.
    struct System {
        let engines: DifferentialEngines
        let server: SyncServer
        let folder: URL
        let clients: [SyncClient]
        let transports: [InProcessSyncTransport]
        /// How failures name the server's engine.
        var engine: String { engines.subject.name }

        func close() async {
            for client in clients { await client.store.close() }
            await engines.close()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Runs `body` on a fresh system, and closes it whether or not the body throws.
    static func withSystem(_ run: DifferentialRun, accounts: [String], seed: UInt64 = 1, _ body: (System) async throws -> Void) async throws {
        let system = try await system(run, accounts: accounts, seed: seed)
        do {
            try await body(system)
        } catch {
            await system.close()
            throw error
        }
        await system.close()
    }

    static func system(_ run: DifferentialRun, accounts: [String], seed: UInt64) async throws -> System {
        let engines = try await run.makeEngines()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-scenario-\(UUID().uuidString)")
        var clients: [SyncClient] = []
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await engines.subject.store.write { db in
                try db.execute(script: SyncHistory.schema)
                try SyncServer.installSyncServer(in: db)
            }
            let tables = try SyncHistory.syncedTables()
            let server = SyncServer(store: engines.subject.store, tables: tables)
            var transports: [InProcessSyncTransport] = []
            for (index, account) in accounts.enumerated() {
                let store = try Store.sqlite(at: folder.appendingPathComponent("device\(index).sqlite").path)
                let transport = InProcessSyncTransport(server: server, account: account, seed: seed &+ UInt64(index))
                clients.append(SyncClient(store: store, tables: tables, transport: transport))
                transports.append(transport)
                try await store.write { db in
                    try db.execute(script: SyncHistory.schema)
                    try db.sync.installReplica(of: tables)
                }
            }
            return System(engines: engines, server: server, folder: folder, clients: clients, transports: transports)
        } catch {
            for client in clients { await client.store.close() }
            await engines.close()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// The titles in `table`, in code-point order (whatever the engine's collation).
    static func titles(_ store: Store, _ table: String = SyncItem.tableName) async throws -> [String] {
        try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "title") FROM \(ident: table)") }
            .sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
    }

    static func count(_ store: Store, _ table: String) async throws -> Int {
        try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: table)") ?? 0 }
    }

    /// Everything the server keeps about rows, as text: a refused push changes none of it.
    static func serverState(_ server: SyncServer) async throws -> [String] {
        let tables = ["depot_sync_server_rows", "depot_sync_server_clocks", "depot_sync_server_hidden", SyncItem.tableName, SyncFolder.tableName]
        return try await server.store.read { db in
            try tables.flatMap { table in
                try db.fetchAll(Row.self, "SELECT * FROM \(ident: table)").map { row in
                    table + ": " + zip(row.columns.names, row.values).map { "\($0)=\($1)" }.joined(separator: " ")
                }
            }
        }.sorted()
    }

    static func key(_ id: UUID) -> String { id.uuidString.lowercased() }

    // MARK: Accounts

    static func accountsStayApart(_ run: DifferentialRun) async throws {
        try await withSystem(run, accounts: ["alice", "alice", "bob"]) { system in
            let (alice, alicePhone, bob, server) = (system.clients[0], system.clients[1], system.clients[2], system.server)
            let on = system.engine
            let home = SyncFolder(id: UUID(), title: "Home")
            let paint = SyncItem(id: UUID(), folderID: home.id, title: "Paint")
            try await alice.store.write { db in try db.insert(home); try db.insert(paint) }
            _ = try await alice.sync()
            _ = try await alicePhone.sync()
            _ = try await bob.sync()
            run.expect(try await titles(alicePhone.store) == ["Paint"], "\(on): the same account's other device did not get its item")
            run.expect(try await titles(bob.store) == [], "\(on): another account read an item of alice's")
            run.expect(try await titles(bob.store, SyncFolder.tableName) == [], "\(on): another account read a folder of alice's")

            let before = try await serverState(server)
            let bobNode = try await bob.store.read { db in try db.sync.node() }
            let aliceNode = try await alice.store.read { db in try db.sync.node() }
            let stamp = SyncStamp(time: HybridTimestamp(rawValue: Int64(Date().timeIntervalSince1970 * 1000) << 16), node: bobNode)
            func row(_ values: [String: Value]) -> SyncRow { var row = SyncRow(); row.write(values, stamp: stamp); return row }
            let spy = UUID()
            let attacks: [(String, SyncPush)] = [
                ("a rename of another account's folder", SyncPush(client: bobNode, number: 1, changes: [
                    SyncChange(table: SyncFolder.tableName, key: key(home.id), row: row(["id": .uuid(home.id), "title": .text("Mine")]))])),
                ("a new item in another account's folder", SyncPush(client: bobNode, number: 1, changes: [
                    SyncChange(table: SyncItem.tableName, key: key(spy),
                               row: row(["id": .uuid(spy), "folderID": .uuid(home.id), "title": .text("Spy")]))])),
                ("a delete of another account's item", SyncPush(client: bobNode, number: 1, changes: [
                    SyncChange(table: SyncItem.tableName, key: key(paint.id), row: SyncRow(causalLength: 2))])),
                ("a move of another account's item into one's own folder", SyncPush(client: bobNode, number: 1, changes: [
                    SyncChange(table: SyncItem.tableName, key: key(paint.id),
                               row: row(["id": .uuid(paint.id), "folderID": .uuid(UUID()), "title": .text("Paint")]))])),
                ("a push under another account's device id", SyncPush(client: aliceNode, number: 2, changes: [])),
            ]
            for (attack, push) in attacks {
                do {
                    _ = try await server.handle(push, account: "bob")
                    run.record("\(on): \(attack) was accepted")
                } catch is SyncAccessDenied {
                } catch {
                    run.record("\(on): \(attack) failed with \(error), not SyncAccessDenied")
                }
            }
            run.expect(try await serverState(server) == before, "\(on): a refused push changed what the server keeps")
            let pulled = try await server.handle(SyncPull(after: .start, limit: 100), account: "bob")
            run.expect(pulled.changes.isEmpty, "\(on): a pull from the start showed bob \(pulled.changes.count) of alice's rows")
            _ = try await alice.sync()
            run.expect(try await titles(alice.store) == ["Paint"], "\(on): alice's item changed after refused pushes")
        }
    }

    // MARK: Evictions

    static func unsharedRowsLeave(_ run: DifferentialRun) async throws {
        try await withSystem(run, accounts: ["alice", "bob"]) { system in
            let (alice, bob, server) = (system.clients[0], system.clients[1], system.server)
            let on = system.engine
            let home = SyncFolder(id: UUID(), title: "Home"), work = SyncFolder(id: UUID(), title: "Work")
            try await alice.store.write { db in
                try db.insert(home); try db.insert(work)
                try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "Paint"))
                try db.insert(SyncItem(id: UUID(), folderID: work.id, title: "Report"))
            }
            _ = try await alice.sync()
            do {
                try await server.share(SyncFolder.tableName, key: key(home.id), owner: "bob", with: "bob")
                run.record("\(on): an account shared a folder it does not own")
            } catch is SyncAccessDenied {}
            try await server.share(SyncFolder.tableName, key: key(home.id), owner: "alice", with: "bob")
            run.expect(try await server.shares(of: "alice", in: SyncFolder.tableName) == [key(home.id): ["bob"]], "\(on): the share is not listed")
            _ = try await bob.sync()
            run.expect(try await titles(bob.store, SyncFolder.tableName) == ["Home"], "\(on): the shared folder, and only it, should reach bob")
            run.expect(try await titles(bob.store) == ["Paint"], "\(on): the shared folder should reach bob with what is in it")

            try await bob.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "Sand")) }
            _ = try await bob.sync()
            _ = try await alice.sync()
            run.expect(try await titles(alice.store) == ["Paint", "Report", "Sand"], "\(on): bob's item in the shared folder did not reach alice")

            // Unshared while bob edits offline: his edit is dropped, the folder leaves his device.
            try await server.unshare(SyncFolder.tableName, key: key(home.id), owner: "alice", with: "bob")
            try await bob.store.write { db in try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "title") = \("Sand, fine")") }
            _ = try await bob.sync()
            run.expect(try await titles(bob.store, SyncFolder.tableName) == [], "\(on): the unshared folder stayed on bob's device")
            run.expect(try await titles(bob.store) == [], "\(on): the unshared folder's items stayed on bob's device")
            run.expect(try await bob.pendingCount() == 0, "\(on): bob's device kept changes to push after the unshare")
            _ = try await alice.sync()
            run.expect(try await titles(alice.store) == ["Paint", "Report", "Sand"], "\(on): the owner lost a row, or got the edit made after the unshare")

            try await server.share(SyncFolder.tableName, key: key(home.id), owner: "alice", with: "bob")
            _ = try await bob.sync()
            run.expect(try await titles(bob.store) == ["Paint", "Sand"], "\(on): shared again, the folder did not come back whole")
        }
    }

    static func movedRowsLeave(_ run: DifferentialRun) async throws {
        try await withSystem(run, accounts: ["alice", "bob"]) { system in
            let (alice, bob, server) = (system.clients[0], system.clients[1], system.server)
            let on = system.engine
            let shared = SyncFolder(id: UUID(), title: "Shared"), mine = SyncFolder(id: UUID(), title: "Bob's")
            let item = SyncItem(id: UUID(), folderID: shared.id, title: "Lamp")
            try await alice.store.write { db in try db.insert(shared); try db.insert(item) }
            _ = try await alice.sync()
            try await server.share(SyncFolder.tableName, key: key(shared.id), owner: "alice", with: "bob")
            try await bob.store.write { db in try db.insert(mine) }
            _ = try await bob.sync()
            // A label on the item (its scope parent) follows it.
            try await bob.store.write { db in try db.insert(SyncLabel(itemID: item.id, folderID: shared.id)) }
            _ = try await bob.sync()
            _ = try await alice.sync()
            run.expect(try await count(alice.store, SyncLabel.tableName) == 1, "\(on): bob's label on the shared item did not reach alice")
            try await bob.store.write { db in try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "folderID") = \(mine.id)") }
            _ = try await bob.sync()
            _ = try await alice.sync()
            run.expect(try await titles(alice.store) == [], "\(on): an item moved into a folder alice does not see stayed on her device")
            run.expect(try await count(alice.store, SyncLabel.tableName) == 0, "\(on): the moved item's label stayed on alice's device")
            run.expect(try await titles(bob.store) == ["Lamp"], "\(on): the mover lost the item")
            run.expect(try await alice.pendingCount() == 0, "\(on): alice's device kept changes to push")
        }
    }

    // MARK: Exactly once

    static func pushesApplyOnce(_ run: DifferentialRun) async throws {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max / 2)
        try await withSystem(run, accounts: ["", "", ""], seed: seed) { system in
            let on = "\(system.engine), seed \(seed) (replay with DEPOT_SYNC_SEED=\(seed))"
            var faults = InProcessSyncTransport.Faults()
            (faults.dropRequest, faults.dropAnswer, faults.duplicate, faults.late) = (0.1, 0.15, 0.1, 0.05)
            for transport in system.transports { transport.faults = faults }
            var g = SeededGenerator(seed: seed)
            let folder = SyncFolder(id: UUID(uuid: g.uuid()), title: "All")
            try await system.clients[0].store.write { db in try db.insert(folder) }
            let ids = (0..<8).map { _ in UUID(uuid: g.uuid()) }
            var clients = system.clients
            for index in clients.indices { clients[index].pageSize = 2 }
            for step in 0..<240 {
                let client = clients[Int.random(in: 0..<clients.count, using: &g)], id = ids[Int.random(in: 0..<ids.count, using: &g)]
                let title = ["Milk", "Bread", "Eggs", "Tea", "Caf\u{E9}"][Int.random(in: 0..<5, using: &g)] + " \(step)"
                switch Int.random(in: 0..<10, using: &g) {
                case 0...2:
                    try await client.store.write { db in
                        guard try db.find(SyncFolder.self, id: folder.id) != nil, try db.find(SyncItem.self, id: id) == nil else { return }
                        try db.insert(SyncItem(id: id, folderID: folder.id, title: title))
                    }
                case 3...5:
                    try await client.store.write { db in
                        _ = try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "title") = \(title) WHERE \(ident: "id") = \(id)")
                    }
                case 6:
                    try await client.store.write { db in _ = try db.delete(SyncItem.self, id: id) }
                default:
                    do { _ = try await client.sync() } catch is InProcessSyncTransport.Lost {}
                }
            }
            // Quiet: no faults; everyone syncs until nothing is pending and everyone has pulled everything.
            for transport in system.transports { transport.faults = InProcessSyncTransport.Faults() }
            for _ in 0..<2 {
                for client in clients { _ = try await client.sync() }
            }
            let counts = try await system.server.pushCounts()
            for (index, client) in clients.enumerated() {
                run.expect(try await client.pendingCount() == 0, "\(on): device \(index) kept changes to push after syncing on a quiet line")
                let node = try await client.store.read { db in try db.sync.node() }
                let pushed = try await client.store.read { db in try db.fetchOne(Int64.self, "SELECT \(ident: "pushed") FROM \(ident: "depot_sync_state")") ?? 0 }
                let count = counts[node]
                run.expect(count?.lastPush == pushed && count?.applied == pushed,
                           "\(on): device \(index) had \(pushed) pushes acknowledged; the server applied \(String(describing: count?.applied)) (last \(String(describing: count?.lastPush)))")
            }
            let onServer = try await system.server.store.read { db in try db.fetchAll(SyncItem.all) }.sorted { $0.id.uuidString < $1.id.uuidString }
            for (index, client) in clients.enumerated() {
                let local = try await client.store.read { db in try db.fetchAll(SyncItem.all) }.sorted { $0.id.uuidString < $1.id.uuidString }
                run.expect(local == onServer, "\(on): device \(index) holds \(local.count) items, the server \(onServer.count), or their values differ")
            }
        }
    }
}

import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Testing
import TestSupport

@Columns
struct SyncWord: Record, Equatable {
    static let tableName = "syncWords"
    var id: String
    var meaning: String
}

/// The four ways sync lost writes silently (issue 39), each as a user meets
/// it. Each test uses only what a device and a server offer, so it fails on
/// the code that lost the write and passes on the code that keeps it.
@Suite struct SyncLossReproductionTests {
    typealias Tables = SyncParentsTests

    /// A server on an SQLite file and one device per account named, each on its own file (`device<n>.sqlite`).
    static func system(_ folder: URL, accounts: [String]) async throws -> (server: SyncServer, devices: [SyncClient]) {
        let (server, devices) = try await SyncAccountsTests.system(folder, accounts: accounts)
        return (server, devices.map(\.client))
    }

    static func titles(_ store: Store, _ table: String = "syncItems") async throws -> [String] {
        try await store.read { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \(ident: table) ORDER BY \"title\"") }
    }

    /// 1. A sharee's row stamped `Int64.max` (or ten years ahead) must not
    /// reach the owner's devices: today it drags the owner's clock to the
    /// last value, the next local edit overflows it into a REAL, and every
    /// later sync of that device fails.
    @Test(arguments: [Int64.max, (Int64(Date().timeIntervalSince1970 * 1000) + 10 * 365 * 86_400_000) << 16])
    func aShareesStampFarAheadNeverBreaksTheOwnersDevices(stamp: Int64) async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["alice", "bob"])
        let (alice, bob) = (devices[0], devices[1])
        let shared = SyncFolder(id: UUID(), title: "Shared")
        try await alice.store.write { db in try db.insert(shared) }
        try await alice.sync()
        try await server.share("syncFolders", key: shared.id.uuidString.lowercased(), owner: "alice", with: "bob")
        try await bob.sync()
        // Bob's device (or anyone speaking the protocol as bob) pushes a row stamped far ahead.
        let bobNode = try await bob.store.read { db in try db.sync.node() }
        let item = SyncItem(id: UUID(), folderID: shared.id, title: "From the future")
        var row = SyncRow()
        row.write(["id": .uuid(item.id), "folderID": .uuid(shared.id), "title": .text(item.title)],
                  stamp: SyncStamp(time: HybridTimestamp(rawValue: stamp), node: bobNode))
        let push = SyncPush(client: bobNode, number: 1, changes: [SyncChange(table: "syncItems", key: item.id.uuidString.lowercased(), row: row)])
        _ = try? await server.handle(push, account: "bob")
        // The owner syncs, edits, and syncs again: every sync works and the edit reaches the server.
        try await alice.sync()
        try await alice.store.write { db in try db.execute("UPDATE \"syncFolders\" SET \"title\" = 'Renamed'") }
        try await alice.sync()
        try await alice.sync()
        #expect(try await Self.titles(server.store, "syncFolders") == ["Renamed"], "the owner's edit reached the server")
        let kinds = try await alice.store.read { db in
            try db.fetchAll(String.self, "SELECT DISTINCT typeof(\"hlc\") FROM \"depot_sync_state\" UNION SELECT DISTINCT typeof(\"hlc\") FROM \"depot_sync_clocks\"")
        }
        #expect(kinds == ["integer"], "every stamp stays an integer")
        let clock = try await alice.store.read { db in try db.fetchOne(Int64.self, "SELECT \"hlc\" FROM \"depot_sync_state\"") } ?? 0
        let aDayAhead = (Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000) << 16
        #expect(clock < aDayAhead, "the owner's clock was not dragged ahead")
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    /// 2. A device restored from a backup (or its file copied to a second
    /// machine) writes and syncs: today its push reuses a number the
    /// original already used, the server calls it a duplicate, and the
    /// writes never reach anyone.
    @Test func aDeviceRestoredFromACopyLosesNoWriteOfEitherCopy() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["alice", "alice"])
        var original = devices[0]
        let other = devices[1]
        let home = SyncFolder(id: UUID(), title: "Home")
        try await original.store.write { db in try db.insert(home) }
        try await original.sync()
        // The backup: a copy of the file as it is now (closed first, so the file holds everything).
        await original.store.close()
        let path = folder.appendingPathComponent("device0.sqlite").path, backup = folder.appendingPathComponent("backup.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        original = SyncClient(store: try Store.sqlite(at: path), tables: Tables.tables,
                              transport: InProcessSyncTransport(server: server, account: "alice", seed: 8))
        try await original.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "X, after the backup")) }
        try await original.sync()
        // The restored copy writes and syncs.
        let restored = SyncClient(store: try Store.sqlite(at: backup), tables: Tables.tables,
                                  transport: InProcessSyncTransport(server: server, account: "alice", seed: 9))
        try await restored.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "Y, on the restored copy")) }
        try await restored.sync()
        #expect(try await restored.pendingCount() == 0)
        for device in [original, other, restored, original] { try await device.sync() }
        let expected = ["X, after the backup", "Y, on the restored copy"]
        for store in [server.store, original.store, other.store, restored.store] {
            #expect(try await Self.titles(store) == expected, "every change of both copies on every device")
        }
        for store in [original.store, other.store, restored.store, server.store] { await store.close() }
    }

    /// Found by the history checker (seeds 70002931 and 70003937): a push in
    /// flight whose body a refusal took (its stamps a day ahead) and whose every
    /// row a pull had forgotten (dropped when its folder was unshared) left the
    /// device's range of pushes fixed on nothing, so no later change of that
    /// device was ever sent, silently.
    @Test func aPushInFlightWhoseRowsWereDroppedNeverHoldsBackLaterChanges() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["alice", "bob"])
        let alice = devices[0]
        let transport = InProcessSyncTransport(server: server, account: "bob", seed: 5)
        let bob = SyncClient(store: devices[1].store, tables: Tables.tables, transport: transport)
        let shared = SyncFolder(id: UUID(), title: "Shared"), own = SyncFolder(id: UUID(), title: "Bob's")
        let item = SyncItem(id: UUID(), folderID: shared.id, title: "Alice's")
        try await alice.store.write { db in
            try db.insert(shared)
            try db.insert(item)
        }
        try await alice.sync()
        try await server.share("syncFolders", key: shared.id.uuidString.lowercased(), owner: "alice", with: "bob")
        try await bob.store.write { db in try db.insert(own) }
        try await bob.sync()
        // Bob's clock runs a day ahead; he renames alice's item, and the push is lost on its way.
        try await bob.store.write { db in
            let ahead = (Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000) << 16
            try db.execute("UPDATE \"depot_sync_state\" SET \"hlc\" = max(\"hlc\", \(ahead))")
            try db.execute("UPDATE \"syncItems\" SET \"title\" = 'Renamed by bob'")
        }
        var faults = InProcessSyncTransport.Faults()
        faults.dropRequest = 1
        transport.faults = faults
        await #expect(throws: InProcessSyncTransport.Lost.self) { try await bob.sync() }
        transport.faults = InProcessSyncTransport.Faults()
        // The folder is unshared; a pull drops bob's change to the item in it.
        try await server.unshare("syncFolders", key: shared.id.uuidString.lowercased(), owner: "alice", with: "bob")
        let pulled = try await bob.pull()
        #expect(pulled.dropped.map(\.table) == ["syncItems"], "the item in the unshared folder is dropped")
        // A later change, in bob's own folder, reaches the server.
        try await bob.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: own.id, title: "Later, in his own folder")) }
        try await bob.sync()
        try await bob.sync()
        #expect(try await Self.titles(server.store) == ["Alice's", "Later, in his own folder"], "bob's later change reached the server")
        #expect(try await bob.pendingCount() == 0, "nothing left waiting on bob's device")
        for store in [alice.store, bob.store, server.store] { await store.close() }
    }

    /// 3. Text keys Swift calls equal ("é" and "e" + U+0301, "Ω" and the
    /// ohm sign) are different rows to every engine: today the server and
    /// the other devices end with one of each pair.
    @Test(arguments: ["SQLite", "PostgreSQL"])
    func textKeysThatSwiftCallsEqualStayDifferentRows(serverEngine: String) async throws {
        guard serverEngine == "SQLite" || PostgresTestServer.shouldRun else { return }
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tables = [try SyncedTable(SyncWord.self)]
        let create: SQL = "CREATE TABLE \"syncWords\" (\"id\" TEXT PRIMARY KEY, \"meaning\" TEXT NOT NULL)"
        let serverStore = serverEngine == "SQLite"
            ? try Store.sqlite(at: folder.appendingPathComponent("server.sqlite").path) : try await PostgresTestServer.freshStore()
        try await serverStore.write { db in
            try db.execute(create)
            try SyncServer.installSyncServer(in: db)
        }
        let server = SyncServer(store: serverStore, tables: tables)
        var devices: [SyncClient] = []
        for name in ["a", "b"] {
            let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
            try await store.write { db in
                try db.execute(create)
                try db.sync.installReplica(of: tables)
            }
            var client = SyncClient(store: store, tables: tables, transport: InProcessSyncTransport(server: server, seed: 3))
            client.pageSize = 2
            devices.append(client)
        }
        let words = [("\u{E9}", "precomposed"), ("e\u{301}", "combining"), ("\u{3A9}", "omega"), ("\u{2126}", "ohm sign"),
                     ("a|\u{301}", "a bar and a combining mark"), ("Caf\u{E9}", "precomposed café"), ("Cafe\u{301}", "combining café")]
        try await devices[0].store.write { db in
            for (id, meaning) in words { try db.insert(SyncWord(id: id, meaning: meaning)) }
        }
        for device in devices + devices { try await device.sync() }
        // Compared by their bytes: Swift's == would call the pairs equal.
        func stored(_ store: Store) async throws -> [[UInt8]] {
            try await store.read { db in try db.fetchAll(SyncWord.self, "SELECT * FROM \"syncWords\"") }
                .map { Array(($0.id + "=" + $0.meaning).utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        }
        let expected = words.map { Array(($0.0 + "=" + $0.1).utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(try await stored(server.store) == expected, "the server holds every word")
        for device in devices {
            #expect(try await stored(device.store) == expected, "every device holds every word")
            #expect(try await device.pendingCount() == 0)
        }
        // An edit of one of a pair reaches the other device as an edit of that one only.
        try await devices[1].store.write { db in try db.execute("UPDATE \"syncWords\" SET \"meaning\" = 'edited' WHERE \"id\" = \("e\u{301}")") }
        for device in [devices[1], devices[0]] { try await device.sync() }
        let meanings = try await devices[0].store.read { db in
            try db.fetchAll(SyncWord.self, "SELECT * FROM \"syncWords\"").filter { $0.meaning == "edited" }.map { Array($0.id.utf8) }
        }
        #expect(meanings == [Array("e\u{301}".utf8)], "only the combining form was edited")
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    /// 4. A device moves its own row into a folder shared with it, the owner
    /// unshares the folder before the device syncs: the server drops the
    /// move, so the row stays in the device's own folder on the server;
    /// today the device then forgets the row for good. With `pullFirst`, the
    /// device hears of the unshare before it pushes the move (a pull of its
    /// own, or a move made while a sync was between its push and its pull).
    @Test(arguments: [false, true])
    func aRowMovedIntoAFolderJustUnsharedIsKeptWhereTheServerHasIt(pullFirst: Bool) async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["owner", "sharee"])
        let (owner, sharee) = (devices[0], devices[1])
        let groceries = SyncFolder(id: UUID(), title: "Groceries")
        try await owner.store.write { db in
            try db.insert(groceries)
            try db.insert(SyncItem(id: UUID(), folderID: groceries.id, title: "Milk"))
        }
        try await owner.sync()
        let own = SyncFolder(id: UUID(), title: "Mine"), note = SyncItem(id: UUID(), folderID: UUID(), title: "Keep me")
        let kept = SyncItem(id: note.id, folderID: own.id, title: note.title)
        try await sharee.store.write { db in try db.insert(own); try db.insert(kept) }
        try await sharee.sync()
        try await server.share("syncFolders", key: groceries.id.uuidString.lowercased(), owner: "owner", with: "sharee")
        try await sharee.sync()
        #expect(try await Self.titles(sharee.store) == ["Keep me", "Milk"])
        // Offline, the sharee moves its own note into the shared folder; the owner unshares it.
        try await sharee.store.write { db in
            try db.execute("UPDATE \"syncItems\" SET \"folderID\" = \(groceries.id.uuidString.lowercased()) WHERE \"id\" = \(note.id.uuidString.lowercased())")
        }
        try await server.unshare("syncFolders", key: groceries.id.uuidString.lowercased(), owner: "owner", with: "sharee")
        if pullFirst { try await sharee.pull() }
        try await sharee.sync()
        try await sharee.sync()
        #expect(try await Self.titles(sharee.store) == ["Keep me"], "the note is back where the server has it, the owner's item gone")
        let place = try await sharee.store.read { db in try db.find(SyncItem.self, id: note.id) }
        #expect(place?.folderID == own.id, "in the sharee's own folder, as on the server")
        #expect(try await Self.titles(sharee.store, "syncFolders") == ["Mine"])
        #expect(try await sharee.pendingCount() == 0)
        for device in devices { await device.store.close() }
        await server.store.close()
    }
}

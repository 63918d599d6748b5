import Depot
import DepotSQLite
import DepotSync
import Foundation
import Testing
import TestSupport

/// Accounts on one sync server: each account reads and writes only its own
/// roots and those shared with it; sharing brings a root with everything in
/// it, unsharing makes the other account's devices forget it, and a row
/// moved out of a shared root leaves the devices that no longer see it.
@Suite struct SyncAccountsTests {
    typealias Tables = SyncParentsTests

    struct Device {
        var client: SyncClient
        var store: Store { client.store }
        func sync() async throws { try await client.sync() }
    }

    /// A server and one device per account named.
    static func system(_ folder: URL, accounts: [String]) async throws -> (server: SyncServer, devices: [Device]) {
        let serverStore = try Store.sqlite(at: folder.appendingPathComponent("server.sqlite").path)
        try await serverStore.write { db in
            try db.execute(script: Tables.schema)
            try SyncServer.installSyncServer(in: db)
        }
        let server = SyncServer(store: serverStore, tables: Tables.tables)
        var devices: [Device] = []
        for (index, account) in accounts.enumerated() {
            let store = try Store.sqlite(at: folder.appendingPathComponent("device\(index).sqlite").path)
            try await store.write { db in
                try db.execute(script: Tables.schema)
                try db.sync.installReplica(of: Tables.tables)
            }
            devices.append(Device(client: SyncClient(store: store, tables: Tables.tables,
                                                     transport: InProcessSyncTransport(server: server, account: account, seed: UInt64(index)))))
        }
        return (server, devices)
    }

    static func titles(_ store: Store, _ table: String = "syncItems") async throws -> [String] {
        try await store.read { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \(ident: table) ORDER BY \"title\"") }
    }

    /// Everything the server stores about rows: a refused push changes none of it.
    static func serverState(_ server: SyncServer) async throws -> [String] {
        try await server.store.read { db in
            try db.fetchAll(String.self, """
                SELECT "tbl" || ' ' || "row_key" || ' ' || "cl" || ' ' || "version" || ' ' || "account" FROM "depot_sync_server_rows"
                UNION ALL SELECT "tbl" || ' ' || "row_key" || ' ' || "col" || ' ' || "hlc" FROM "depot_sync_server_clocks"
                UNION ALL SELECT "title" FROM "syncItems" UNION ALL SELECT "title" FROM "syncFolders" ORDER BY 1
                """)
        }
    }

    @Test func anAccountNeverReadsNorWritesAnotherAccountsRows() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["alice", "alice", "bob"])
        let (alice, alicePhone, bob) = (devices[0], devices[1], devices[2])
        let home = SyncFolder(id: UUID(), title: "Home")
        let paint = SyncItem(id: UUID(), folderID: home.id, title: "Paint")
        try await alice.store.write { db in try db.insert(home); try db.insert(paint) }
        try await alice.sync()
        try await alicePhone.sync()
        try await bob.sync()
        #expect(try await Self.titles(alicePhone.store) == ["Paint"], "the same account's other device has it")
        #expect(try await Self.titles(bob.store) == [], "another account reads nothing of it")
        #expect(try await Self.titles(bob.store, "syncFolders") == [])

        let before = try await Self.serverState(server)
        let bobNode = try await bob.store.read { db in try db.sync.node() }
        let aliceNode = try await alice.store.read { db in try db.sync.node() }
        let stamp = SyncStamp(time: HybridTimestamp(rawValue: Int64(Date().timeIntervalSince1970 * 1000) << 16), node: bobNode)
        func row(_ values: [String: Value]) -> SyncRow { var row = SyncRow(); row.write(values, stamp: stamp); return row }
        let attacks: [(String, SyncPush)] = [
            ("a rename of another account's folder", SyncPush(client: bobNode, number: 1, changes: [
                SyncChange(table: "syncFolders", key: home.id.uuidString.lowercased(), row: row(["id": .uuid(home.id), "title": .text("Mine")]))])),
            ("a new item in another account's folder", SyncPush(client: bobNode, number: 1, changes: [
                SyncChange(table: "syncItems", key: "6f1c2a52-8c3b-4d1e-9a07-5b3c2d71409e",
                           row: row(["id": .uuid(UUID(uuidString: "6f1c2a52-8c3b-4d1e-9a07-5b3c2d71409e")!), "folderID": .uuid(home.id), "title": .text("Spy")]))])),
            ("a delete of another account's item", SyncPush(client: bobNode, number: 1, changes: [
                SyncChange(table: "syncItems", key: paint.id.uuidString.lowercased(), row: SyncRow(causalLength: 2))])),
            ("a move of another account's item into one's own folder", SyncPush(client: bobNode, number: 1, changes: [
                SyncChange(table: "syncItems", key: paint.id.uuidString.lowercased(),
                           row: row(["id": .uuid(paint.id), "folderID": .uuid(UUID()), "title": .text("Paint")]))])),
            ("a push under another account's device id", SyncPush(client: aliceNode, number: 2, changes: [])),
        ]
        for (attack, push) in attacks {
            await #expect(throws: SyncAccessDenied.self, "\(attack)") { try await server.handle(push, account: "bob") }
        }
        #expect(try await Self.serverState(server) == before, "nothing of a refused push was applied")
        let pulled = try await server.handle(SyncPull(after: .start, limit: 100), account: "bob")
        #expect(pulled.changes.isEmpty, "a pull from the start sees none of alice's rows")
        try await alice.sync()
        #expect(try await Self.titles(alice.store) == ["Paint"])
    }

    @Test func aSharedFolderReachesTheOtherAccountAndLeavesItWhenUnshared() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["alice", "bob"])
        let (alice, bob) = (devices[0], devices[1])
        let home = SyncFolder(id: UUID(), title: "Home"), work = SyncFolder(id: UUID(), title: "Work")
        try await alice.store.write { db in
            try db.insert(home); try db.insert(work)
            try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "Paint"))
            try db.insert(SyncItem(id: UUID(), folderID: work.id, title: "Report"))
        }
        try await alice.sync()
        let homeKey = home.id.uuidString.lowercased()
        await #expect(throws: SyncAccessDenied.self, "only the owner shares") {
            try await server.share("syncFolders", key: homeKey, owner: "bob", with: "bob")
        }
        try await server.share("syncFolders", key: homeKey, owner: "alice", with: "bob")
        #expect(try await server.shares(of: "alice", in: "syncFolders") == [homeKey: ["bob"]])
        try await bob.sync()
        #expect(try await Self.titles(bob.store, "syncFolders") == ["Home"], "the shared folder, not the other")
        #expect(try await Self.titles(bob.store) == ["Paint"], "with what is in it")

        // Both write in the shared folder.
        let bobsItem = SyncItem(id: UUID(), folderID: home.id, title: "Sand")
        try await bob.store.write { db in try db.insert(bobsItem) }
        try await bob.sync()
        try await alice.sync()
        #expect(try await Self.titles(alice.store) == ["Paint", "Report", "Sand"])

        // Unshared while bob edits offline: his edit is dropped, the folder leaves his device.
        try await server.unshare("syncFolders", key: homeKey, owner: "alice", with: "bob")
        try await bob.store.write { db in try db.execute("UPDATE \"syncItems\" SET \"title\" = 'Sand, fine'") }
        try await bob.sync()
        #expect(try await Self.titles(bob.store, "syncFolders") == [], "forgotten, not deleted")
        #expect(try await Self.titles(bob.store) == [])
        #expect(try await bob.client.pendingCount() == 0, "nothing left to push")
        try await alice.sync()
        #expect(try await Self.titles(alice.store) == ["Paint", "Report", "Sand"], "the owner keeps everything; the late edit was dropped")

        // Shared again: back whole.
        try await server.share("syncFolders", key: homeKey, owner: "alice", with: "bob")
        try await bob.sync()
        #expect(try await Self.titles(bob.store) == ["Paint", "Sand"])
    }

    @Test func anItemMovedOutOfASharedFolderLeavesTheDevicesThatNoLongerSeeIt() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await Self.system(folder, accounts: ["alice", "bob"])
        let (alice, bob) = (devices[0], devices[1])
        let shared = SyncFolder(id: UUID(), title: "Shared"), mine = SyncFolder(id: UUID(), title: "Bob's")
        let item = SyncItem(id: UUID(), folderID: shared.id, title: "Lamp")
        try await alice.store.write { db in try db.insert(shared); try db.insert(item) }
        try await alice.sync()
        try await server.share("syncFolders", key: shared.id.uuidString.lowercased(), owner: "alice", with: "bob")
        try await bob.store.write { db in try db.insert(mine) }
        try await bob.sync()
        // A label on the item (its scope parent) follows it.
        try await bob.store.write { db in try db.insert(SyncLabel(itemID: item.id, folderID: shared.id)) }
        try await bob.sync()
        try await alice.sync()
        #expect(try await alice.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"syncLabels\"") } == 1)
        try await bob.store.write { db in try db.execute("UPDATE \"syncItems\" SET \"folderID\" = \(mine.id)") }
        try await bob.sync()
        try await alice.sync()
        #expect(try await Self.titles(alice.store) == [], "moved into a folder alice does not see")
        #expect(try await alice.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"syncLabels\"") } == 0)
        // The label, made in a push of its own, went with the item: the server places it in bob's folder, and
        // alice's device keeps nothing of it (not even hidden, waiting for a parent), so bob's edits of it never reach her.
        let placed = try await server.store.read { db in
            try db.fetchAll(String.self, "SELECT \"account\" || ' ' || \"root_key\" || ' ' || \"parent\" FROM \"depot_sync_server_rows\" WHERE \"tbl\" = 'syncLabels'")
        }
        #expect(placed == ["bob \(mine.id.uuidString.lowercased()) \(item.id.uuidString.lowercased())"])
        #expect(try await alice.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"depot_sync_rows\" WHERE \"tbl\" = 'syncLabels'") } == 0)
        #expect(try await Self.titles(bob.store) == ["Lamp"])
        #expect(try await alice.client.pendingCount() == 0)
    }

    /// A server installed before accounts: its tables as that version made them.
    static let serverBeforeAccounts: SQL = """
        CREATE TABLE "depot_sync_server_state" ("id" INTEGER PRIMARY KEY, "version" INTEGER NOT NULL, "node" TEXT NOT NULL, "hlc" INTEGER NOT NULL);
        INSERT INTO "depot_sync_server_state" VALUES (1, 0, '6f1c2a52-8c3b-4d1e-9a07-5b3c2d71409e', 0);
        CREATE TABLE "depot_sync_server_rows" ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "cl" INTEGER NOT NULL, "version" INTEGER NOT NULL,
            PRIMARY KEY ("tbl", "row_key"));
        CREATE INDEX "depot_sync_server_rows_version" ON "depot_sync_server_rows" ("version", "tbl", "row_key");
        CREATE TABLE "depot_sync_server_clocks" ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "col" TEXT NOT NULL, "hlc" INTEGER NOT NULL,
            "node" TEXT NOT NULL, PRIMARY KEY ("tbl", "row_key", "col"));
        CREATE TABLE "depot_sync_server_hidden" ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "registers" BLOB NOT NULL, PRIMARY KEY ("tbl", "row_key"));
        CREATE TABLE "depot_sync_server_clients" ("client" TEXT PRIMARY KEY, "last_push" INTEGER NOT NULL, "applied" INTEGER NOT NULL)
        """

    @Test func aServerInstalledBeforeAccountsIsBroughtUpToDateAndGoesOn() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serverStore = try Store.sqlite(at: folder.appendingPathComponent("old-server.sqlite").path)
        try await serverStore.write { db in
            try db.execute(script: Tables.schema)
            try db.execute(script: Self.serverBeforeAccounts)
        }
        #expect(try await serverStore.read { db in try SyncServer.isInstalled(in: db) && !SyncServer.hasAccounts(in: db) })
        // The upgrade every server runs at start: doing it again changes nothing.
        try await serverStore.write { db in try SyncServer.updateSyncServer(in: db) }
        try await serverStore.write { db in try SyncServer.updateSyncServer(in: db) }
        #expect(try await serverStore.read { db in try SyncServer.hasAccounts(in: db) })
        let server = SyncServer(store: serverStore, tables: Tables.tables)
        let device = try await Self.system(folder, accounts: [""]).devices[0]
        let client = SyncClient(store: device.store, tables: Tables.tables, transport: InProcessSyncTransport(server: server, seed: 1))
        try await device.store.write { db in try db.insert(SyncFolder(id: UUID(), title: "Kept")) }
        try await client.sync()
        #expect(try await Self.titles(serverStore, "syncFolders") == ["Kept"])
    }
}

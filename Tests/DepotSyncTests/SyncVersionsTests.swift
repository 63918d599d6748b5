import Depot
import DepotSQLite
import DepotSync
import Foundation
import Testing

/// The note of the next app version: a new column.
@Columns
struct SyncNoteV2: Record, Equatable {
    static let tableName = "syncNotes"
    var id: UUID
    var title: String
    var body: String?
    var rank: Int
    var color: String?
}

/// A table the next app version syncs.
@Columns
struct SyncTopic: Record, Equatable {
    static let tableName = "syncTopics"
    var id: UUID
    var name: String
}

/// Devices of two app versions on one server: the older one (without the
/// `color` column and the `syncTopics` table) is sent only what it knows and
/// never clears what it does not; updated, it learns what it was not sent;
/// a device newer than its server is refused in one line and keeps its changes.
@Suite struct SyncVersionsTests {
    static let oldTables = SyncReplicaTests.tables
    static let newTables = [try! SyncedTable(SyncNoteV2.self), try! SyncedTable(SyncTopic.self)]
    static let newSchema = """
        ALTER TABLE "syncNotes" ADD COLUMN "color" TEXT;
        CREATE TABLE "syncTopics" ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL)
        """

    static func server(_ folder: URL, _ name: String, new: Bool) async throws -> SyncServer {
        let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
        try await store.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" TEXT PRIMARY KEY, \"title\" TEXT NOT NULL, \"body\" TEXT, \"rank\" INTEGER NOT NULL)")
            if new { try db.execute(script: SQL(unsafeRaw: newSchema)) }
            try SyncServer.installSyncServer(in: db)
        }
        return SyncServer(store: store, tables: new ? newTables : oldTables)
    }

    static func device(_ folder: URL, _ name: String, new: Bool, server: SyncServer) async throws -> SyncClient {
        let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
        try await store.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" TEXT PRIMARY KEY, \"title\" TEXT NOT NULL, \"body\" TEXT, \"rank\" INTEGER NOT NULL)")
            if new { try db.execute(script: SQL(unsafeRaw: newSchema)) }
            try db.sync.installReplica(of: new ? newTables : oldTables)
        }
        return SyncClient(store: store, tables: new ? newTables : oldTables, transport: InProcessSyncTransport(server: server, seed: 7))
    }

    static func notes(_ store: Store) async throws -> [SyncNoteV2] {
        try await store.read { db in try db.fetchAll(SyncNoteV2.self, "SELECT * FROM \"syncNotes\" ORDER BY \"title\"") }
    }

    @Test func anOlderDeviceIsSentWhatItKnowsClearsNothingAndLearnsTheRestOnceUpdated() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder, "server", new: true)
        let new = try await Self.device(folder, "new", new: true, server: server)
        var old = try await Self.device(folder, "old", new: false, server: server)
        let planned = UUID(), label = UUID()
        try await new.store.write { db in
            try db.insert(SyncNoteV2(id: planned, title: "Plan", body: nil, rank: 1, color: "red"))
            try db.insert(SyncTopic(id: label, name: "work"))
        }
        try await new.sync()
        try await old.sync()
        #expect(try await old.store.read { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \"syncNotes\"") } == ["Plan"])
        let unknown = try await old.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"depot_sync_clocks\" WHERE \"col\" = 'color' OR \"tbl\" = 'syncTopics'") }
        #expect(unknown == 0, "the older device was sent no value of a column or table it does not sync")

        // The older device edits the title and adds a note: the color stays, and its note takes the column's default.
        let older = UUID()
        try await old.store.write { db in
            try db.execute("UPDATE \"syncNotes\" SET \"title\" = 'Plan B'")
            try db.insert(SyncNote(id: older, title: "From the old app", body: nil, rank: 2))
        }
        try await old.sync()
        try await new.sync()
        #expect(try await Self.notes(new.store) == [SyncNoteV2(id: older, title: "From the old app", body: nil, rank: 2, color: nil),
                                                   SyncNoteV2(id: planned, title: "Plan B", body: nil, rank: 1, color: "red")])
        #expect(try await Self.notes(server.store).first { $0.id == planned }?.color == "red", "the server kept the color")

        // Updated (its migration adds the column and the table), the older device pulls again and has everything.
        try await old.store.write { db in
            try db.execute(script: SQL(unsafeRaw: Self.newSchema))
            try db.sync.updateReplica(of: Self.newTables)
        }
        old = SyncClient(store: old.store, tables: Self.newTables, transport: old.transport)
        try await old.sync()
        #expect(try await Self.notes(old.store) == (try await Self.notes(new.store)), "the updated device learned the color")
        #expect(try await old.store.read { db in try db.fetchAll(String.self, "SELECT \"name\" FROM \"syncTopics\"") } == ["work"],
                "and the table it was not sent")
    }

    @Test func aDeviceNewerThanItsServerIsRefusedInOneLineAndKeepsItsChanges() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder, "server", new: false)
        let new = try await Self.device(folder, "new", new: true, server: server)
        try await new.store.write { db in try db.insert(SyncNoteV2(id: UUID(), title: "Plan", body: nil, rank: 1, color: "red")) }
        let refused = await #expect(throws: SyncPushRefused.self) { try await new.sync() }
        #expect(refused?.reason == .deviceNewer)
        #expect(refused?.description == "the sync server refused the push (device-newer): this device syncs syncNotes.color, syncTopics, "
                + "which the server does not yet: update the server; the device keeps its changes until then")
        await #expect(throws: SyncPushRefused.self, "a pull is refused too") { try await new.pull() }
        #expect(try await new.pendingCount() == 1, "its change waits on the device")
        #expect(try await server.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"syncNotes\"") } == 0)
        let later = SyncPull(after: .start, limit: 10, protocolVersion: SyncSchema.protocolVersion + 1)
        let protocolRefusal = await #expect(throws: SyncPushRefused.self) { try await server.handle(later) }
        #expect(protocolRefusal?.message.hasPrefix("this device speaks sync protocol 4 and the server 3") == true)
    }
}

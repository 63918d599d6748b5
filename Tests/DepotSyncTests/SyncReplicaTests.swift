import Depot
import DepotSQLite
import DepotSync
import Foundation
import Testing
import TestSupport

@Columns
struct SyncNote: Record, Equatable {
    static let tableName = "syncNotes"
    var id: UUID
    var title: String
    var body: String?
    var rank: Int
}

/// SQLite replicas: writes captured in their own transaction, and replicas
/// that exchange their states converge.
@Suite struct SyncReplicaTests {
    static let tables = [try! SyncedTable(SyncNote.self)]

    static func replica(_ folder: URL, _ name: String) async throws -> Store {
        let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
        try await store.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" TEXT PRIMARY KEY, \"title\" TEXT NOT NULL, \"body\" TEXT, \"rank\" INTEGER NOT NULL)")
            try db.sync.installReplica(of: tables)
        }
        return store
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func everyWriteIsRecordedInItsOwnTransactionRawSQLIncludedAndARollbackRecordsNothing() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await Self.replica(folder, "a")
        let (one, two) = (UUID(), UUID())
        try await store.write { db in
            try db.insert(SyncNote(id: one, title: "Milk", body: nil, rank: 1))
            try db.execute("INSERT INTO \"syncNotes\" VALUES (\(two.uuidString.lowercased()), 'Bread', 'whole grain', 2)")
        }
        struct Abandoned: Error {}
        try? await store.write { db in
            try db.execute("UPDATE \"syncNotes\" SET \"title\" = 'Cake'")
            throw Abandoned()
        }
        let pending = try await store.read { db in try db.sync.pendingChanges(Self.tables) }
        #expect(pending.changes.count == 2)
        let first = try #require(pending.changes.first { $0.key == one.uuidString.lowercased() })
        #expect(first.row.exists && first.row.registers["title"]?.value == .text("Milk"))
        #expect(pending.changes.allSatisfy { $0.row.registers["title"]?.value != .text("Cake") }, "the rolled-back update left nothing")

        let before = try #require(first.row.registers["rank"]?.stamp)
        try await store.write { db in try db.execute("UPDATE \"syncNotes\" SET \"title\" = 'Oat milk' WHERE \"rank\" = 1") }
        let after = try await store.read { db in try db.sync.pendingChanges(Self.tables) }.changes.first { $0.key == one.uuidString.lowercased() }
        #expect(after?.row.registers["title"]?.stamp ?? before > before, "the changed column has a later stamp")
        #expect(after?.row.registers["rank"]?.stamp == before, "an unchanged column keeps its stamp")

        try await store.write { db in try db.sync.acknowledgeChanges(upTo: pending.upTo) }
        try await store.write { db in _ = try db.delete(SyncNote.self, id: two) }
        let deleted = try await store.read { db in try db.sync.pendingChanges(Self.tables) }.changes.first { $0.key == two.uuidString.lowercased() }
        #expect(deleted?.row.exists == false && deleted?.row.causalLength == 2)
        await store.close()
    }

    /// The outbox holds each changed row once however often it was written,
    /// and a row written while a push is in flight is queued again for the next.
    @Test func aRowWrittenManyTimesIsQueuedOnceAndAgainAfterAPushTookIt() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await Self.replica(folder, "a")
        let id = UUID()
        let entries: @Sendable (Database) throws -> Int = { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"depot_sync_outbox\"") ?? 0 }
        try await store.write { db in try db.insert(SyncNote(id: id, title: "Milk", body: nil, rank: 1)) }
        for n in 0..<100 {
            try await store.write { db in try db.execute("UPDATE \"syncNotes\" SET \"rank\" = \(n + 2)") }
        }
        #expect(try await store.read(entries) == 1, "one entry for a row written 101 times")
        // A push takes the entry (its range fixed); a write meanwhile is queued for the next push.
        let pending = try await store.read { db in try db.sync.pendingChanges(Self.tables) }
        try await store.write { db in try db.execute("UPDATE \"depot_sync_state\" SET \"push_upto\" = \(pending.upTo)") }
        try await store.write { db in try db.execute("UPDATE \"syncNotes\" SET \"title\" = 'Oat milk'") }
        #expect(try await store.read(entries) == 2, "a new entry beside the one in flight")
        try await store.write { db in try db.sync.acknowledgeChanges(upTo: pending.upTo) }
        let next = try await store.read { db in try db.sync.pendingChanges(Self.tables) }
        #expect(next.changes.map { $0.row.registers["title"]?.value } == [.text("Oat milk")])
        await store.close()
    }

    /// Random edits on three replicas, exchanged in random order with
    /// duplicates: after everyone has heard everyone, they hold the same rows.
    @Test func replicasThatExchangeTheirStatesConverge() async throws {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("SyncReplicaTests: seed \(seed) (replay with DEPOT_SYNC_SEED=\(seed))")
        var g = SeededGenerator(seed: seed)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let replicas = [try await Self.replica(folder, "a"), try await Self.replica(folder, "b"), try await Self.replica(folder, "c")]
        let ids = (0..<8).map { _ in UUID() }
        for step in 0..<400 {
            let store = g.pick(replicas), id = g.pick(ids)
            let title = g.pick(["Milk", "Bread", "Eggs", "Tea"]) + " \(step)", rank = Int.random(in: 0...3, using: &g)
            switch Int.random(in: 0..<10, using: &g) {
            case 0...3:
                try await store.write { db in
                    if try db.find(SyncNote.self, id: id) == nil { try db.insert(SyncNote(id: id, title: title, body: nil, rank: rank)) }
                }
            case 4...6:
                try await store.write { db in
                    _ = try db.execute("UPDATE \"syncNotes\" SET \"title\" = \(title) WHERE \"id\" = \(id.uuidString.lowercased())")
                }
            case 7:
                let body: String? = g.chance(2) ? "note" : nil
                try await store.write { db in
                    _ = try db.execute("UPDATE \"syncNotes\" SET \"rank\" = \(rank), \"body\" = \(body) WHERE \"id\" = \(id.uuidString.lowercased())")
                }
            case 8:
                try await store.write { db in _ = try db.delete(SyncNote.self, id: id) }
            default:
                // An exchange in the middle: one replica's state to another, sometimes twice.
                let (from, to) = (g.pick(replicas), g.pick(replicas))
                let changes = try await from.read { db in try db.sync.allChanges(Self.tables) }
                for _ in 0..<(g.chance(3) ? 2 : 1) {
                    try await to.write { db in try db.sync.applyChanges(changes, Self.tables) }
                }
            }
        }
        // Everyone hears everyone, twice around.
        for _ in 0..<2 {
            for from in replicas {
                let changes = try await from.read { db in try db.sync.allChanges(Self.tables) }
                for to in replicas where to !== from {
                    try await to.write { db in try db.sync.applyChanges(changes, Self.tables) }
                }
            }
        }
        let states = try await replicas.asyncMap { store in
            try await store.read { db in try db.fetchAll(SyncNote.self, "SELECT * FROM \"syncNotes\" ORDER BY \"id\"") }
        }
        #expect(states[0] == states[1] && states[1] == states[2], "seed \(seed): \(states)")
        let syncStates = try await replicas.asyncMap { store in
            try await store.read { db in try db.sync.allChanges(Self.tables) }
        }
        #expect(syncStates[0] == syncStates[1] && syncStates[1] == syncStates[2], "seed \(seed): the sync states")
        for store in replicas { await store.close() }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// What sync refuses when it starts, with what to change.
@Suite struct SyncRuleTests {
    @Columns
    struct Counted: Record {
        static let tableName = "counted"
        var id: Int64
        var title: String
    }

    @Test func anIntegerKeyOrAnotherUniqueConstraintIsRefusedSayingWhatToChange() async throws {
        let store = Store.sqliteInMemory()
        try await store.write { db in
            try db.execute("CREATE TABLE \"counted\" (\"id\" INTEGER PRIMARY KEY, \"title\" TEXT NOT NULL)")
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" TEXT PRIMARY KEY, \"title\" TEXT NOT NULL UNIQUE, \"body\" TEXT, \"rank\" INTEGER NOT NULL)")
        }
        let integer = await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.sync.installReplica(of: [try SyncedTable(Counted.self)]) }
        }
        #expect(integer?.kind == .misuse && "\(integer.map { "\($0)" } ?? "")".contains("Use a UUID key"))
        let unique = await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.sync.installReplica(of: SyncReplicaTests.tables) }
        }
        #expect("\(unique.map { "\($0)" } ?? "")".contains("unique constraint besides its key"))
        let installed = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM sqlite_schema WHERE name = 'depot_sync_state'") }
        #expect(installed == 0, "nothing installed")
        await store.close()
    }
}

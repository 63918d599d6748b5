import Depot
import DepotPostgres
import DepotSync
import Foundation
import Testing
import TestSupport

/// A compaction is all or nothing: its connection killed inside it, after
/// it has deleted tombstones and before it has moved the horizon, leaves
/// every tombstone, stamp and the horizon as they were, and the next
/// compaction does the whole work.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct SyncCompactionFaultTests {
    struct Counts: Decodable, Equatable { var tombstones: Int; var stamps: Int; var horizon: Int64 }

    static func counts(_ store: Store) async throws -> Counts {
        try await store.read { db in
            try db.fetchOne(Counts.self, """
                SELECT (SELECT count(*) FROM "depot_sync_server_rows" WHERE "cl" % 2 = 0) AS "tombstones",
                    (SELECT count(*) FROM "depot_sync_server_clocks") AS "stamps",
                    (SELECT "horizon" FROM "depot_sync_server_state" WHERE "id" = 1) AS "horizon"
                """)
        } ?? Counts(tombstones: -1, stamps: -1, horizon: -1)
    }

    @Test func aCompactionKilledInsideLeavesEverythingAndTheNextOneDoesItAll() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await SyncConvergenceTests.server()
        let device = try await SyncReplicaTests.replica(folder, "device")
        let client = SyncClient(store: device, tables: SyncReplicaTests.tables, transport: InProcessSyncTransport(server: server, seed: 1))
        func deleteSome(_ count: Int) async throws {
            let notes = (0..<count).map { SyncNote(id: UUID(), title: "Note \($0)", body: "body", rank: $0) }
            try await device.write { db in try db.insert(contentsOf: notes) }
            try await client.sync()
            try await device.write { db in for note in notes { _ = try db.execute("DELETE FROM \"syncNotes\" WHERE \"id\" = \(note.id)") } }
            try await client.sync()
            try await device.write { db in try db.insert(SyncNote(id: UUID(), title: "Kept", body: nil, rank: -1)) }
            try await client.sync()
        }
        // A first compaction leaves a mark, which the second deletes: the row the blocker locks.
        try await deleteSome(5)
        let first = try await server.compact(olderThan: .zero)
        #expect(first.tombstones == 5)
        try await deleteSome(20)
        let before = try await Self.counts(server.store)
        #expect(before.tombstones == 20)

        // Another store on the same schema holds the old mark's row, so the compaction waits there:
        // after deleting the tombstones and their stamps, before moving the horizon.
        let blocker = try await SyncPushFaultTests.storeBeside(server.store)
        let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let holding = Task.detached {
            try await blocker.write { db in
                _ = try db.fetchAll(Int64.self, "SELECT \"version\" FROM \"depot_sync_server_marks\" WHERE \"version\" = \(first.horizon) FOR UPDATE")
                locked.signal()
                _ = release.wait(timeout: .now() + 600)
            }
        }
        #expect(locked.wait(timeout: .now() + 600) == .success)
        let compacting = Task { try await server.compact(olderThan: .zero) }
        // The compaction's backend, once it waits for the lock inside its DELETE of the marks.
        var waiting: Int?
        while waiting == nil {
            waiting = try await blocker.read { db in
                try db.fetchOne(Int.self, """
                    SELECT a.pid FROM pg_stat_activity a WHERE a.query LIKE 'DELETE FROM "depot_sync_server_marks"%' AND EXISTS (
                        SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted)
                      AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.relation = to_regclass('"depot_sync_server_marks"'))
                    """)
            }
            if waiting == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let pid = waiting ?? 0
        let killed = try await blocker.read { db in try db.fetchOne(Bool.self, "SELECT pg_terminate_backend(CAST(\(pid) AS integer))") }
        #expect(killed == true)
        release.signal()
        try await holding.value
        let outcome = await compacting.result
        #expect(throws: DatabaseError.self) { try outcome.get() }
        #expect(try await Self.counts(server.store) == before, "nothing of the killed compaction stays")

        let again = try await server.compact(olderThan: .zero)
        #expect(again.tombstones == 20)
        let after = try await Self.counts(server.store)
        #expect(after.tombstones == 0 && after.horizon == again.horizon && after.horizon > before.horizon)
        await blocker.close()
        await device.close()
        await server.store.close()
    }
}

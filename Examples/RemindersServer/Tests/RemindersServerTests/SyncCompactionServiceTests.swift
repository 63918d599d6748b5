import Depot
import DepotSync
import DepotTesting
import Foundation
import Logging
import RemindersServerApp
import Testing

/// A sync server keeps its log bounded by itself: compacted at start, then daily.
@Suite struct SyncCompactionServiceTests {
    static func tombstones(_ db: Database) throws -> Int {
        try db.fetchOne(Int.self, "SELECT count(*) FROM \"depot_sync_server_rows\" WHERE \"cl\" % 2 = 0") ?? 0
    }

    @Test func aSyncServerCompactsItsLogWhenItStartsAndLogsIt() async throws {
        let path = temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        // Each run of the application shuts its store down when it stops: a store a run.
        let run = { try await RemindersRoutes.store(path, logger: quiet) }
        let replica = try await Replica.make()
        defer { replica.remove() }
        _ = try await replica.model.createList(title: "Home")
        _ = try await replica.model.createList(title: "Gone")
        let first = try await replica.push(1)
        _ = try await replica.model.deleteList("Gone")
        let second = try await replica.push(2)
        try await withSyncServer(try await run()) { client, _ in
            let alice = try await client.signUp("alice")
            #expect(try await client.push(first, as: alice).status == .ok)
            #expect(try await client.push(second, as: alice).status == .ok)
        }
        // Then another device's push, so the delete is before the head the compaction sees.
        let other = try await Replica.make()
        defer { other.remove() }
        _ = try await other.model.createList(title: "Later")
        let third = try await other.push(1)
        try await withSyncServer(try await run()) { client, store in
            let alice = try await client.signIn("alice")
            #expect(try await client.push(third, as: alice).status == .ok)
            #expect(try await store.read { db in try Self.tombstones(db) } >= 1, "the deleted list is remembered until a compaction")
        }

        let captured = CapturedLogs()
        let store = try await run()
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: captured.logger(), sync: true, keepDeletes: .zero,
                                                             onServerRunning: $0) }) { _ in
            let horizon = store.observe { db in try db.fetchOne(Int64.self, "SELECT \"horizon\" FROM \"depot_sync_server_state\"") ?? 0 }
            _ = try await ObservationWait.first(horizon, "the compaction at start") { $0 > 0 }
            #expect(try await store.read { db in try Self.tombstones(db) } == 0, "the deleted list is forgotten")
        }
        let logged = captured.records.filter { $0.message == "sync log compacted" }
        #expect(logged.count == 1 && logged.first?.metadata["tombstones"].map { "\($0)" } != "0", "the compaction is logged with what it removed")
    }
}

import Depot
import DepotPostgres
import Foundation
import Synchronization
import Testing
import TestSupport

/// Real serialization failures on PostgreSQL, and the write retry that takes
/// them off the caller (the conformance suite holds every engine to the
/// retry's rules with errors it makes itself).
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresWriteRetryTests {
    /// Two serializable increments of one counter, made to overlap: the first
    /// reads, the second reads, writes and commits, then the first writes. The
    /// first loses (40001) on its first attempt, every time; returns how many
    /// times its closure ran, what it threw, and the counter at the end.
    func overlappingIncrements(retry: WriteRetry?) async throws -> (runs: Int, error: (any Error)?, counter: Int?) {
        let store = try await PostgresTestServer.freshStore()
        defer { Task { await store.close() } }
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "counter") (\(ident: "id") int PRIMARY KEY, \(ident: "n") int NOT NULL)")
            try db.execute("INSERT INTO \(ident: "counter") VALUES (1, 0)")
        }
        let runs = Mutex(0)
        let firstRead = DispatchSemaphore(value: 0), otherCommitted = DispatchSemaphore(value: 0)
        let first = Task {
            try await store.write(retry: retry, isolation: .serializable) { db in
                let attempt = runs.withLock { $0 += 1; return $0 }
                let n = try db.fetchOne(Int.self, "SELECT \(ident: "n") FROM \(ident: "counter") WHERE \(ident: "id") = 1") ?? -1
                if attempt == 1 {
                    // On the connection's own thread, not the task pool's: waiting here blocks no task.
                    firstRead.signal()
                    _ = otherCommitted.wait(timeout: .now() + 600)
                }
                try db.execute("UPDATE \(ident: "counter") SET \(ident: "n") = \(n + 1) WHERE \(ident: "id") = 1")
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { _ = firstRead.wait(timeout: .now() + 600); continuation.resume() }
        }
        try await store.write(isolation: .serializable) { db in
            let n = try db.fetchOne(Int.self, "SELECT \(ident: "n") FROM \(ident: "counter") WHERE \(ident: "id") = 1") ?? -1
            try db.execute("UPDATE \(ident: "counter") SET \(ident: "n") = \(n + 1) WHERE \(ident: "id") = 1")
        }
        otherCommitted.signal()
        var error: (any Error)?
        do { try await first.value } catch let thrown { error = thrown }
        let counter = try await store.read { db in try db.fetchOne(Int.self, "SELECT \(ident: "n") FROM \(ident: "counter")") }
        return (runs.withLock { $0 }, error, counter)
    }

    @Test func aSerializableWriteThatLosesToAnotherFailsWithASerializationErrorWithoutARetryPolicy() async throws {
        let (runs, error, counter) = try await overlappingIncrements(retry: nil)
        #expect(runs == 1)
        let failure = try #require(error as? DatabaseError)
        #expect(failure.kind == .serialization)
        #expect(failure.engineCode == "40001")
        #expect(counter == 1, "only the other increment holds")
    }

    @Test func withARetryPolicyTheLosingWriteRunsAgainOnTheNewValueAndBothIncrementsHold() async throws {
        let (runs, error, counter) = try await overlappingIncrements(retry: WriteRetry(attempts: 3))
        #expect(runs == 2)
        #expect(error == nil, "\(String(describing: error))")
        #expect(counter == 2, "no lost update")
    }
}

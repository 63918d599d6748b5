import Depot
import Foundation
import InMemoryTracing
import Synchronization
import Tracing

/// A write that loses a conflict (a serialization error) runs again, whole,
/// when a retry policy asks for it; nothing else is ever run twice.
///
/// The checks make the serialization error themselves, by throwing it from
/// the closure after its statements ran, so that they hold every engine to
/// the same rules, SQLite included (whose writes never conflict). The real
/// conflicts (PostgreSQL's serializable transactions, a Galera certification
/// conflict) are each engine's own tests.
enum WriteRetryChecks {
    /// A serialization error as an engine reports one.
    static func lostConflict(commitOutcomeUnknown: Bool = false) -> DatabaseError {
        var error = DatabaseError(.serialization, "could not serialize access due to concurrent update", engineCode: "40001")
        error.commitOutcomeUnknown = commitOutcomeUnknown
        return error
    }

    /// A policy that does not wait between attempts.
    static func noWait(_ attempts: Int) -> WriteRetry {
        WriteRetry(attempts: attempts, initialBackoff: .zero, maximumBackoff: .zero)
    }

    /// Runs a write whose closure inserts a row named after its attempt and
    /// throws `failure(attempt)` when that is not nil; returns how many times
    /// the closure ran and what the write threw.
    static func attempts(_ store: Store, retry: WriteRetry?? = .none, failure: @escaping @Sendable (Int) -> (any Error)?) async -> (Int, (any Error)?) {
        let runs = Mutex(0)
        let body: @Sendable (Database) throws -> Void = { db in
            let attempt = runs.withLock { runs in runs += 1; return runs }
            try TransactionChecks.add(db, attempt, "attempt \(attempt)")
            if let error = failure(attempt) { throw error }
        }
        do {
            if case .some(let policy) = retry {
                try await store.write(retry: policy, body)
            } else {
                try await store.write(body)
            }
            return (runs.withLock { $0 }, nil)
        } catch {
            return (runs.withLock { $0 }, error)
        }
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("write retry: a write that fails with a serialization error runs again whole, its failed attempts rolled back, each retry logged, counted and traced") { context in
            let logs = CapturedLogs()
            let metrics = CapturedMetrics()
            let tracer = InMemoryTracer()
            var configuration = Store.Configuration()
            configuration.writeRetry = noWait(5)
            configuration.logger = logs.logger(level: .notice)
            configuration.metricsFactory = metrics
            configuration.tracer = tracer
            let store = try await context.makeStore(configuration)
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            let (runs, error) = await attempts(store) { $0 < 3 ? lostConflict() : nil }
            if let error { throw ConformanceFailure("the third attempt should have committed: \(error)") }
            try expectEqual(runs, 3, "the closure ran once per attempt")
            try expectEqual(try await TransactionChecks.names(store), ["attempt 3"], "only the attempt that committed left its row")
            let retries = logs.records.filter { $0.message == "write retried" }
            try expectEqual(retries.map(\.level), [.notice, .notice], "each retry is logged at notice")
            try expectEqual(retries.map { "\($0.metadata["depot.write.attempt"] ?? "")" }, ["2", "3"], "the attempts logged")
            try expect(retries.allSatisfy { "\($0.metadata["db.error"] ?? "")" == "serialization" && "\($0.metadata["db.error_code"] ?? "")" == "40001" },
                       "each retry names the error's kind and engine code: \(retries.map(\.metadata))")
            let counted = metrics.handlers("depot.write.retries")
            try expectEqual(counted.flatMap(\.values), [1, 1], "depot.write.retries counts each retry")
            try expect(counted.allSatisfy { $0.dimensions["error.type"] == "serialization" && $0.dimensions["db.system.name"] == store.dialect.engineName.lowercased() },
                       "the retries' dimensions: \(counted.map(\.dimensions))")
            let writes = tracer.finishedSpans.filter { $0.operationName == "depot.write" }.suffix(3)
            try expectEqual(writes.map { $0.attributes["depot.write.attempt"].map { "\($0.toSpanAttribute())" } ?? "-" }, ["-", "int64(2)", "int64(3)"],
                            "each retried write's span carries its attempt")
            try expectEqual(writes.map { $0.status?.code == .error }, [true, true, false], "the failed attempts' spans are errors")
        },
        ConformanceCheck("write retry: other errors, an unknown COMMIT outcome, a write without a policy and the last allowed attempt run once; a policy of no attempts is misuse") { context in
            var configuration = Store.Configuration()
            configuration.writeRetry = noWait(3)
            let store = try await context.makeStore(configuration)
            try await store.write(retry: nil) { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            // A constraint violation is the data's fault: another run fails the same way.
            var (runs, error) = await attempts(store) { _ in DatabaseError(.unique, "duplicate key") }
            try expect(runs == 1 && (error as? DatabaseError)?.kind == .unique, "a unique error is not retried: \(runs) runs, \(String(describing: error))")
            // The transaction may have committed: running it again could apply it twice.
            (runs, error) = await attempts(store) { _ in lostConflict(commitOutcomeUnknown: true) }
            try expect(runs == 1 && (error as? DatabaseError)?.commitOutcomeUnknown == true,
                       "a write whose COMMIT outcome is unknown is not retried: \(runs) runs, \(String(describing: error))")
            // A caller's own error is not the engine's conflict.
            (runs, error) = await attempts(store) { _ in ExpectedFailure() }
            try expect(runs == 1 && error is ExpectedFailure, "a closure's own error is not retried: \(runs) runs")
            // Every attempt lost: the last one's error reaches the caller.
            (runs, error) = await attempts(store) { attempt in DatabaseError(.serialization, "lost \(attempt)") }
            try expect(runs == 3 && (error as? DatabaseError)?.message == "lost 3",
                       "three attempts, then the third's error: \(runs) runs, \(String(describing: error))")
            // The write's own policy replaces the store's.
            (runs, error) = await attempts(store, retry: .some(nil)) { _ in lostConflict() }
            try expect(runs == 1 && (error as? DatabaseError)?.kind == .serialization, "write(retry: nil) runs once: \(runs) runs")
            (runs, error) = await attempts(store, retry: .some(noWait(2))) { _ in lostConflict() }
            try expectEqual(runs, 2, "write(retry:) with 2 attempts")
            (runs, error) = await attempts(store, retry: .some(noWait(0))) { _ in nil }
            try expect(runs == 0 && (error as? DatabaseError)?.kind == .misuse,
                       "a policy of 0 attempts runs nothing and is misuse: \(runs) runs, \(String(describing: error))")
            try expectEqual(try await TransactionChecks.names(store), [], "no failed attempt left a row")
            // A store without a policy runs every write once.
            let plain = try await context.makeStore()
            try await plain.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            (runs, error) = await attempts(plain) { _ in lostConflict() }
            try expect(runs == 1 && (error as? DatabaseError)?.kind == .serialization, "no policy: one run: \(runs) runs")
        },
        ConformanceCheck("write retry: a task cancelled while it waits to retry stops with CancellationError and runs nothing more") { context in
            var configuration = Store.Configuration()
            // Long waits: the cancellation comes while the store waits.
            configuration.writeRetry = WriteRetry(attempts: 5, initialBackoff: .seconds(600), maximumBackoff: .seconds(600))
            let store = try await context.makeStore(configuration)
            try await store.write(retry: nil) { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            let (failed, failedOnce) = AsyncStream.makeStream(of: Void.self)
            let runs = Mutex(0)
            let write = Task {
                try await store.write { db in
                    runs.withLock { $0 += 1 }
                    try TransactionChecks.add(db, 1, "first")
                    failedOnce.yield()
                    throw lostConflict()
                }
            }
            for await _ in failed { break }
            write.cancel()
            do {
                try await write.value
                throw ConformanceFailure("the cancelled write should have thrown")
            } catch is CancellationError {}
            try expectEqual(runs.withLock { $0 }, 1, "the closure ran once")
            try expectEqual(try await TransactionChecks.names(store), [], "the failed attempt left nothing")
        },
    ]
}

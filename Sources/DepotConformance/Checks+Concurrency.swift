import Depot
import Foundation

/// Concurrent accesses lose nothing, and reads proceed during a write where the store can.
enum ConcurrencyChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("concurrency: tasks writing at once lose no row") { context in
            let store = try await TransactionChecks.counter(context)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for n in 0..<25 {
                            try await store.write { db in try TransactionChecks.add(db, task * 100 + n, "t\(task)") }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "events")") }
            try expectEqual(count, 200, "rows written by 8 tasks of 25 writes")
        },
        ConformanceCheck("concurrency: a read during a long write never sees its uncommitted rows") { context in
            let store = try await TransactionChecks.counter(context)
            let concurrent = store.dialect.capabilities.concurrentReadsDuringWrite
            let (inside, insideContinuation) = AsyncStream<Void>.makeStream()
            let proceed = DispatchSemaphore(value: 0)
            let writer = Task {
                try await store.write { db -> Bool in
                    try TransactionChecks.add(db, 1, "uncommitted")
                    insideContinuation.yield()
                    // Hold the transaction open until the reader is done (bounded).
                    return proceed.wait(timeout: .now() + 20) == .success
                }
            }
            for await _ in inside { break }
            if concurrent {
                // The read must complete while the write is still open, and see the state before it.
                let seen = try await TransactionChecks.names(store)
                proceed.signal()
                let released = try await writer.value
                try expect(released, "the read waited for the write to finish: reads must run during a write on this store")
                try expectEqual(seen, [], "rows a read sees during an uncommitted write")
            } else {
                // One connection: the read runs after the write, and sees it committed.
                let reader = Task { try await TransactionChecks.names(store) }
                proceed.signal()
                _ = try await writer.value
                try expectEqual(try await reader.value, ["uncommitted"], "rows a read queued behind the write sees")
            }
            try expectEqual(try await TransactionChecks.names(store), ["uncommitted"], "rows after the write committed")
        },
        ConformanceCheck("concurrency: many reads at once all complete") { context in
            let store = try await TransactionChecks.counter(context)
            try await store.write { db in for n in 0..<10 { try TransactionChecks.add(db, n, "e\(n)") } }
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<32 {
                    group.addTask { try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "events")") ?? -1 } }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try expectEqual(counts, Array(repeating: 10, count: 32), "counts seen by 32 concurrent reads")
        },
    ]
}

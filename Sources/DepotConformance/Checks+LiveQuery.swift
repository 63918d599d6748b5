@_spi(Driver) import Depot
import Foundation

/// Live queries: a holder of a read's value that follows commits, on every engine.
enum LiveQueryChecks {
    /// Waits on the main actor until `condition` holds; fails after `limit` (a bound on liveness).
    @MainActor
    static func until(_ what: String, limit: Duration = .seconds(120), _ condition: @MainActor () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ConformanceFailure("\(what): not within \(limit)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The counter, read through a live query that counts its reads.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    static func liveCounter(_ store: Store, _ reads: ObservationChecks.ReadCounter) -> LiveQuery<Int> {
        LiveQuery(store, initial: -1) { db in
            reads.increment()
            return try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "counters") WHERE \(ident: "id") = 1") ?? -2
        }
    }

    static func othersCount(_ db: Database) throws -> Int {
        try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "others")") ?? -2
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("live query: the first value at once, a value after a relevant commit, no read after an irrelevant one") { context in
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
            let store = try await ObservationChecks.counters(context)
            let reads = ObservationChecks.ReadCounter()
            let live = await liveCounter(store, reads)
            try await until("the first value") { live.value == 0 && !live.isLoading }
            try await ObservationChecks.setCounter(store, 5)
            try await until("the value after a commit") { live.value == 5 }
            let readsBefore = reads.value
            try await store.write { db in try db.execute("INSERT INTO \(ident: "others") (\(ident: "id")) VALUES (1)") }
            // A relevant commit after the irrelevant one: had the irrelevant one
            // caused a read, it would show in the count by then.
            try await ObservationChecks.setCounter(store, 6)
            try await until("the value after the next relevant commit") { live.value == 6 }
            try expectEqual(reads.value, readsBefore + 1, "reads after an irrelevant and a relevant commit")
            await MainActor.run { live.stop() }
        },
        ConformanceCheck("live query: load swaps the read in place, and the old read's values never arrive after") { context in
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
            let store = try await ObservationChecks.counters(context)
            let reads = ObservationChecks.ReadCounter()
            let live = await liveCounter(store, reads)
            try await until("the first value") { live.value == 0 }
            await MainActor.run { live.load(othersCount) }
            try await until("the new read's value") { live.value == 0 && !live.isLoading }
            let oldReads = reads.value
            try await ObservationChecks.setCounter(store, 9)
            try await store.write { db in try db.execute("INSERT INTO \(ident: "others") (\(ident: "id")) VALUES (1), (2)") }
            try await until("the new read's value after its commit") { live.value == 2 }
            try expectEqual(reads.value, oldReads, "reads by the replaced closure")
            try expectEqual(store.liveObservationCount, 1, "observations running for one live query")
            await MainActor.run { live.stop() }
        },
        ConformanceCheck("live query: an error is a value, the last good value stays, and load clears it") { context in
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
            let store = try await ObservationChecks.counters(context)
            let live = await liveCounter(store, ObservationChecks.ReadCounter())
            try await until("the first value") { live.value == 0 }
            await MainActor.run { live.load { db in try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "missing")") ?? -3 } }
            try await until("the error") { live.error != nil }
            let (kind, value, loading) = await MainActor.run { ((live.error as? DatabaseError)?.kind, live.value, live.isLoading) }
            try expectEqual(kind, .syntax, "the error's kind")
            try expectEqual(value, 0, "the value kept through the error")
            try expectEqual(loading, false, "loading after the error")
            await MainActor.run { live.load(othersCount) }
            try await until("the error cleared and a value") { live.error == nil && !live.isLoading }
            await MainActor.run { live.stop() }
        },
        ConformanceCheck("live query: released, it stops and reads nothing more") { context in
            guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
            let store = try await ObservationChecks.counters(context)
            let reads = ObservationChecks.ReadCounter()
            var live: LiveQuery<Int>? = await liveCounter(store, reads)
            try await until("the first value") { live?.value == 0 }
            try expectEqual(store.liveObservationCount, 1, "observations while it lives")
            await MainActor.run { live = nil }
            try await until("the observation ended") { store.liveObservationCount == 0 }
            let readsAfter = reads.value
            try await ObservationChecks.setCounter(store, 7)
            // Another live query on the same table sees the commit: by then the released one would have read too.
            let witness = await liveCounter(store, ObservationChecks.ReadCounter())
            try await until("a fresh live query sees the commit") { witness.value == 7 }
            try expectEqual(reads.value, readsAfter, "reads after release")
            await MainActor.run { witness.stop() }
        },
    ]
}

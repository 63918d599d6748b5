@_spi(Driver) import Depot
import Foundation

/// Change observation: one meaning on every engine.
enum ObservationChecks {
    /// Counts the reads an observation makes.
    final class ReadCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    /// Blocks a read on its connection's thread until the check opens it (or 20 s pass).
    final class Gate: @unchecked Sendable {
        private let condition = NSCondition()
        private var isOpen = false

        func wait() {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date(timeIntervalSinceNow: 20)
            while !isOpen, condition.wait(until: deadline) {}
        }

        func open() {
            condition.lock()
            isOpen = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// A store with `counters` (observed) and `others` (not read by the observation), both observable.
    static func counters(_ context: ConformanceContext, _ configuration: Store.Configuration = Store.Configuration()) async throws -> Store {
        let store = try await context.makeStore(configuration)
        // The checks count reads: no observation may read before the store hears
        // other connections' commits, or hearing them reads once more (PostgreSQL's
        // listener took over 5 s to connect on a busy CI machine: "expected 3, got 4").
        store.observationHearingLimit = .seconds(120)
        try await store.write { db in
            try DepotConformance.createTable(db, "counters", [("id", .integer, "PRIMARY KEY"), ("value", .integer, "NOT NULL")])
            try DepotConformance.createTable(db, "others", [("id", .integer, "PRIMARY KEY")])
            try db.execute("INSERT INTO \(ident: "counters") (\(ident: "id"), \(ident: "value")) VALUES (1, 0)")
            try db.enableObservation(of: ["counters", "others"])
        }
        return store
    }

    static func setCounter(_ store: Store, _ value: Int) async throws {
        try await store.write { db in
            try db.execute("UPDATE \(ident: "counters") SET \(ident: "value") = \(value) WHERE \(ident: "id") = 1")
        }
    }

    /// The counter's value, read through an observation.
    static func observeCounter(_ store: Store, counting reads: ReadCounter? = nil) -> Observation<Int> {
        store.observe { db in
            reads?.increment()
            return try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "counters") WHERE \(ident: "id") = 1") ?? -1
        }
    }

    /// Iterates until a value satisfies `done`, checking each value on the way;
    /// fails after `limit` (a bound on liveness, not a speed claim).
    ///
    /// `limit` is measured from when `after` ends (at once when it is nil): a
    /// check that writes a burst first gives the observation its whole limit
    /// after the last commit, however long a busy machine took to write them.
    static func values<S: AsyncSequence & Sendable>(
        of sequence: S, until done: @escaping @Sendable (S.Element) -> Bool, limit: Duration = .seconds(120),
        after: AsyncStream<Void>? = nil, _ what: String
    ) async throws -> [S.Element] where S.Element: Sendable {
        try await withThrowingTaskGroup(of: [S.Element]?.self) { group in
            group.addTask {
                var seen: [S.Element] = []
                for try await value in sequence {
                    seen.append(value)
                    if done(value) { return seen }
                }
                return seen
            }
            group.addTask {
                if let after { for await _ in after {} }
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            guard let seen = first else {
                throw ConformanceFailure("\(what): no such value within \(limit)\(after == nil ? "" : " of the last write")")
            }
            return seen
        }
    }

    /// The iterator's next value; fails after `limit` (a bound on liveness, not a speed claim).
    static func next<T: Sendable>(_ iterator: Observation<T>.Iterator, _ what: String, limit: Duration = .seconds(120)) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                var copy = iterator
                return try await copy.next()
            }
            group.addTask {
                try await Task.sleep(for: limit)
                throw ConformanceFailure("\(what): no value within \(limit)")
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("observation: the first value at once, then a value with each relevant commit") { context in
            let store = try await counters(context)
            let iterator = observeCounter(store).makeAsyncIterator()
            try expectEqual(try await next(iterator, "first value"), 0, "first value")
            try await setCounter(store, 1)
            try expectEqual(try await next(iterator, "after the first commit"), 1, "after the first commit")
            try await setCounter(store, 2)
            try expectEqual(try await next(iterator, "after the second commit"), 2, "after the second commit")
        },
        ConformanceCheck("observation: a rolled-back write and a write to another table read nothing again") { context in
            let store = try await counters(context)
            let reads = ReadCounter()
            let iterator = observeCounter(store, counting: reads).makeAsyncIterator()
            try expectEqual(try await next(iterator, "first value"), 0, "first value")
            try expectEqual(reads.value, 1, "reads for the first value")
            struct Rollback: Error {}
            do {
                try await store.write { db in
                    try db.execute("UPDATE \(ident: "counters") SET \(ident: "value") = 99 WHERE \(ident: "id") = 1")
                    throw Rollback()
                }
            } catch is Rollback {}
            try await store.write { db in try db.execute("INSERT INTO \(ident: "others") (\(ident: "id")) VALUES (1)") }
            try await setCounter(store, 5)
            try expectEqual(try await next(iterator, "the next value is the next relevant commit's, never the rolled-back 99"), 5, "the next value is the next relevant commit's, never the rolled-back 99")
            try expectEqual(reads.value, 2, "reads: the rollback and the other table's commit caused none")
        },
        ConformanceCheck("observation: a commit to a table it does not read, landing while it reads, costs it no read",
                         requires: .concurrentReadsDuringWrite) { context in
            // Its second read blocks until the check opens the gate: on its connection's thread,
            // not on the calling task's (a thread of Swift's pool, which the rest of the check, and
            // every test beside it, would then have one fewer of).
            var configuration = Store.Configuration()
            configuration.readsRunOnCallingThread = false
            let store = try await counters(context, configuration)
            let reads = ReadCounter(), gate = Gate()
            let iterator = store.observe { db in
                reads.increment()
                // The second read waits, so that a commit lands while it runs.
                if reads.value == 2 { gate.wait() }
                return try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "counters") WHERE \(ident: "id") = 1") ?? -1
            }.makeAsyncIterator()
            try expectEqual(try await next(iterator, "first value"), 0, "first value")
            // A witness reading `others`: once it has the commit's value, every observation heard of it.
            let witness = store.observe { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "others")") ?? -1 }.makeAsyncIterator()
            try expectEqual(try await next(witness, "the witness's first value"), 0, "the witness's first value")
            try await setCounter(store, 1)
            async let second = next(iterator, "the value the second read saw")
            try await LiveQueryChecks.until("the second read started") { reads.value == 2 }
            try await store.write { db in try db.execute("INSERT INTO \(ident: "others") (\(ident: "id")) VALUES (1)") }
            try expectEqual(try await next(witness, "the witness after the commit to others"), 1, "the witness after the commit to others")
            gate.open()
            try expectEqual(try await second, 1, "the value the second read saw")
            // Waiting for a value: a wake left by the commit to others would read at once.
            async let third = next(iterator, "the next relevant commit's value")
            try await store.write { db in try db.execute("INSERT INTO \(ident: "others") (\(ident: "id")) VALUES (2)") }
            try expectEqual(try await next(witness, "the witness after the second commit to others"), 2, "the witness after the second commit to others")
            try expectEqual(reads.value, 2, "reads: the commits to others caused none")
            try await setCounter(store, 2)
            try expectEqual(try await third, 2, "the next relevant commit's value, not the same value read again")
            try expectEqual(reads.value, 3, "reads after the next relevant commit")
        },
        ConformanceCheck("observation: a burst of commits ends with the final state, in order, maybe coalesced") { context in
            let store = try await counters(context)
            let observed = observeCounter(store)
            let (written, burstEnded) = AsyncStream<Void>.makeStream()
            let seen = try await withThrowingTaskGroup(of: [Int].self) { group in
                group.addTask { try await values(of: observed, until: { $0 == 50 }, after: written, "the burst's last value") }
                // Let the observation start, then write 50 commits as fast as possible.
                while store.liveObservationCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
                for value in 1...50 { try await setCounter(store, value) }
                burstEnded.finish()
                return try await group.next() ?? []
            }
            try expect(seen == seen.sorted(), "values never go back: \(seen)")
            try expect(seen.count <= 51, "at most one value per commit and the first: \(seen.count)")
            try expectEqual(seen.last, 50, "the last value")
        },
        ConformanceCheck("observation: removeDuplicates drops a value equal to the one before") { context in
            let store = try await counters(context)
            var iterator = store.observe { db in
                try (db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "counters") WHERE \(ident: "id") = 1") ?? 0) >= 10
            }.removeDuplicates().makeAsyncIterator()
            try expectEqual(try await next(iterator, "first value"), false, "first value")
            try await setCounter(store, 3)          // still below 10: the same value, dropped
            try await setCounter(store, 12)
            try expectEqual(try await next(iterator, "the next different value"), true, "the next different value")
        },
        ConformanceCheck("observation: a commit from another store on the same database is seen") { context in
            let store = try await counters(context)
            // An in-memory database belongs to its store alone: there, the same store writes.
            let other = store.dialect.capabilities.concurrentReadsDuringWrite ? Store(driver: store.driver) : store
            defer { if other !== store { Task { await other.close() } } }
            let iterator = observeCounter(store).makeAsyncIterator()
            try expectEqual(try await next(iterator, "first value"), 0, "first value")
            try await setCounter(other, 7)
            try expectEqual(try await next(iterator, "after the other store's commit"), 7, "after the other store's commit")
        },
        ConformanceCheck("observation: the tables are read again each time, so a closure that reads others as data changes stays current") { context in
            let store = try await counters(context)
            let observed = store.observe { db -> Int in
                let value = try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "counters") WHERE \(ident: "id") = 1") ?? 0
                // Reads `others` only once the counter is positive.
                guard value > 0 else { return -1 }
                return try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "others")") ?? 0
            }
            let iterator = observed.makeAsyncIterator()
            try expectEqual(try await next(iterator, "first value"), -1, "first value")
            try await setCounter(store, 1)
            try expectEqual(try await next(iterator, "now reading others"), 0, "now reading others")
            try await store.write { db in try db.execute("INSERT INTO \(ident: "others") (\(ident: "id")) VALUES (1)") }
            try expectEqual(try await next(iterator, "a commit to the newly read table"), 1, "a commit to the newly read table")
        },
        ConformanceCheck("observation: ending the iteration releases the observation") { context in
            let store = try await counters(context)
            let task = Task {
                for try await _ in observeCounter(store) {}
            }
            while store.liveObservationCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
            task.cancel()
            _ = await task.result
            try expectEqual(store.liveObservationCount, 0, "live observations after cancellation")
            var iterator: Observation<Int>.Iterator? = observeCounter(store).makeAsyncIterator()
            _ = try await iterator?.next()
            try expectEqual(store.liveObservationCount, 1, "while an iterator lives")
            iterator = nil
            try expectEqual(store.liveObservationCount, 0, "after the iterator is gone")
        },
        ConformanceCheck("observation: an error from the closure ends the sequence with that error") { context in
            let store = try await counters(context)
            var iterator = store.observe { db in
                try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "missing")")
            }.makeAsyncIterator()
            try await expectError(.syntax, "a read of a missing table") { try await iterator.next() }
            try expectEqual(store.liveObservationCount, 0, "live observations after the error")
        },
        ConformanceCheck("observation: reading a table never made observable is one misuse error, the same text on every engine") { context in
            let store = try await counters(context)
            try await store.write { db in try DepotConformance.createTable(db, "unobserved", [("id", .integer, "PRIMARY KEY")]) }
            var iterator = store.observe { db in
                try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "counters") JOIN \(ident: "unobserved") ON \(ident: "unobserved").\(ident: "id") = \(ident: "counters").\(ident: "id")")
            }.makeAsyncIterator()
            let error = try await expectError(.misuse, "an observation reading an unobservable table") { try await iterator.next() }
            try expectEqual(error.message, "\"unobserved\" is read by an observation but was never made observable: "
                + "run db.enableObservation(of: [\"unobserved\"]) once, in a migration", "the error's text")
            try expectEqual(store.liveObservationCount, 0, "live observations after the error")
            // Once made observable, the same observation runs.
            try await store.write { db in try db.enableObservation(of: ["unobserved"]) }
            let again = store.observe { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "unobserved")") }.makeAsyncIterator()
            try expectEqual(try await next(again, "after enableObservation"), 0, "after enableObservation")
            try await store.write { db in try db.execute("INSERT INTO \(ident: "unobserved") (\(ident: "id")) VALUES (1)") }
            try expectEqual(try await next(again, "a commit to it"), 1, "a commit to it")
        },
    ]
}

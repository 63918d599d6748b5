import Depot
import Foundation
import Synchronization

struct ExpectedFailure: Error, Equatable {}

/// What the spinning tasks of a timeout check and the access they keep
/// company share.
final class SpinFlags: Sendable {
    /// Set by the access's body when its statement is interrupted.
    let interrupted = Atomic<Bool>(false)
    /// Set by a spinning task that stopped by its own bound.
    let gaveUp = Atomic<Bool>(false)
    /// How many tasks spin.
    let running = Atomic<Int>(0)

    private static let lock = AsyncLock()

    /// Runs `body` while no other check of the process keeps the pool busy.
    static func oneAtATime(_ body: () async throws -> Void) async throws {
        await lock.lock()
        defer { lock.unlock() }
        try await body()
    }
}

/// write commits or rolls back whole; savepoints nest; reads cannot write.
enum TransactionChecks {
    static func counter(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
        return store
    }

    static func names(_ store: Store, from route: ReadRoute = .automatic) async throws -> [String] {
        try await store.read(from: route) { db in try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: "events") ORDER BY \(ident: "id")") }
    }

    /// A statement that would run for days on every engine: what the
    /// cancellation, timeout and shutdown checks interrupt.
    static let endlessQuery: SQL = """
        WITH RECURSIVE \(ident: "c")(\(ident: "x")) AS (SELECT 1 UNION ALL SELECT \(ident: "x") + 1 FROM \(ident: "c") WHERE \(ident: "x") < 1000000000000000)
        SELECT count(*) FROM \(ident: "c")
        """

    static func add(_ db: Database, _ id: Int, _ name: String) throws {
        try db.execute("INSERT INTO \(ident: "events") VALUES (\(id), \(name))")
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("transactions: a write commits when its closure returns") { context in
            let store = try await counter(context)
            try await store.write { db in try add(db, 1, "a"); try add(db, 2, "b") }
            try expectEqual(try await names(store), ["a", "b"], "rows after the write")
        },
        ConformanceCheck("transactions: a write rolls back whole when its closure throws, and rethrows the error") { context in
            let store = try await counter(context)
            do {
                try await store.write { db in
                    try add(db, 1, "a")
                    throw ExpectedFailure()
                }
                throw ConformanceFailure("the write should have thrown")
            } catch is ExpectedFailure {}
            try expectEqual(try await names(store), [], "rows after the rolled-back write")
            try await store.write { db in try add(db, 1, "again") }
            try expectEqual(try await names(store), ["again"], "the next write works")
        },
        ConformanceCheck("transactions: an access may start with any kind of statement, or run none") { context in
            // Engines may defer BEGIN to the first statement (PostgreSQL sends them together).
            let store = try await context.makeStore()
            try await store.write { _ in }
            _ = try await store.read { _ in 0 }
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            try await store.write { db in try db.savepoint { db in try add(db, 1, "in a savepoint") } }
            let streamed = try await store.read { db in
                var seen: [String] = []
                try db.forEach(String.self, "SELECT \(ident: "name") FROM \(ident: "events")") { seen.append($0) }
                return seen
            }
            try expectEqual(streamed, ["in a savepoint"], "rows streamed by a read's first statement")
            try await expectError(.syntax, "a read whose first statement names no column") {
                try await store.read { db in try db.fetchAll(Int.self, "SELECT \(ident: "nothing") FROM \(ident: "events")") }
            }
            try await expectError(.unique, "a write whose first statement fails") {
                try await store.write { db in try add(db, 1, "duplicate") }
            }
            try await store.write { db in try add(db, 2, "after") }
            try expectEqual(try await names(store), ["in a savepoint", "after"], "rows at the end")
        },
        ConformanceCheck("transactions: an access past its timeout is interrupted with a timeout error, rolls back, and leaves the connection clean") { context in
            var configuration = Store.Configuration()
            configuration.accessTimeout = .milliseconds(300)
            let store = try await context.makeStore(configuration)
            // The accesses around the ones under test may take longer than 0.3 s on a busy machine:
            // a timeout of theirs is tried again (each rolled back whole), it is not what the check is about.
            func patiently<T: Sendable>(_ access: () async throws -> T) async throws -> T {
                for _ in 0..<50 {
                    do { return try await access() } catch let error as DatabaseError where error.kind == .timeout { continue }
                }
                return try await access()
            }
            try await patiently { try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) } }
            // A statement that would run for minutes on either engine.
            let endless = endlessQuery
            let started = ContinuousClock.now
            let error = try await expectError(.timeout, "a write running past its timeout") {
                try await store.write { db in
                    try add(db, 1, "written before the timeout")
                    return try db.fetchOne(Int.self, endless)
                }
            }
            try expectMentions(error.message, ["timeout", "rolled back"], "the timeout error")
            // Measured from the access's start: the statement would run for days; a busy machine or the
            // thread sanitizer takes a few seconds to interrupt it at most.
            try expect(ContinuousClock.now - started < .seconds(120), "the statement was interrupted (it took \(ContinuousClock.now - started))")
            // Checked on the primary: on a replica, waiting for it to catch up counts
            // toward the access's 0.3 s, and the wait is not what this check is about.
            try expectEqual(try await patiently { try await names(store, from: .primary) }, [], "rows after the timed-out write")
            // Swift code is not interrupted; the first statement after the deadline fails. The closure
            // runs statements until one does (an event, where a sleep past the deadline raced a late
            // timer on a busy machine), bounded only against a hang.
            try await expectError(.timeout, "a read whose closure outlives its timeout") {
                try await store.read { db in
                    let bound = Date().addingTimeInterval(600)
                    while Date() < bound {
                        _ = try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: "events")")
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                    return [String]()
                }
            }
            for id in 2...4 { try await patiently { try await store.write { db in try add(db, id, "after") } } }
            try expectEqual(try await patiently { try await names(store, from: .primary) }, ["after", "after", "after"], "the store works after timeouts")
        },
        // It needs the process alone: it holds every thread of the task pool until its deadline
        // interrupts it, and a test beside it that held one of those threads while it waited for
        // another (a read on the calling thread waiting for its cancellation, say) would wait, with
        // the whole process, for the check's ten-minute bound (a thread-sanitizer run here).
        ConformanceCheck("transactions: an access's timeout fires while every thread of Swift's task pool is busy", needsTheProcessAlone: true) { context in
            var configuration = Store.Configuration()
            configuration.accessTimeout = .seconds(1)
            let store = try await context.makeStore(configuration)
            // A server whose tasks keep every core busy must still stop an access at its deadline:
            // the deadline may not wait for a thread of a pool those tasks hold. The access's body
            // (on the connection's own thread) starts tasks that spin on every thread of the pool,
            // waits until they all run, and runs a statement that would never end. The tasks spin
            // until the body sees that statement interrupted; a deadline that needs a thread of the
            // pool fires only when they stop by their own bound, ten minutes later, and the body
            // then sees no interruption first.
            // One such check at a time in a process (the suite runs on several stores at once): two
            // would each hold some of the pool's threads, and each wait for the rest for ten minutes,
            // with every other task of the process waiting behind them.
            try await SpinFlags.oneAtATime {
                let flags = SpinFlags()
                let endless = endlessQuery
                let count = max(ProcessInfo.processInfo.activeProcessorCount, 2) * 2
                let error = try await expectError(.timeout, "a statement past its access's timeout, the task pool busy") {
                    try await store.write { db in
                        for _ in 0..<count {
                            Task.detached {
                                flags.running.add(1, ordering: .relaxed)
                                let started = ContinuousClock.now
                                while !flags.interrupted.load(ordering: .relaxed) {
                                    if ContinuousClock.now - started > .seconds(600) { flags.gaveUp.store(true, ordering: .relaxed); break }
                                }
                                flags.running.subtract(1, ordering: .relaxed)
                            }
                        }
                        // Every thread of the pool spins (the pool has one a core), bounded against a hang.
                        let waiting = ContinuousClock.now
                        while flags.running.load(ordering: .relaxed) < min(count, ProcessInfo.processInfo.activeProcessorCount),
                              ContinuousClock.now - waiting < .seconds(600) {
                            Thread.sleep(forTimeInterval: 0.001)
                        }
                        do {
                            return try db.fetchOne(Int.self, endless)
                        } catch {
                            if !flags.gaveUp.load(ordering: .relaxed) { flags.interrupted.store(true, ordering: .relaxed) }
                            throw error
                        }
                    }
                }
                try expectMentions(error.message, ["timeout"], "the timeout error")
                try expect(flags.interrupted.load(ordering: .relaxed), "the statement was interrupted while the task pool was busy, not after")
            }
        },
        ConformanceCheck("transactions: shutdown lets accesses in flight finish, refuses new ones, then interrupts what still runs, at once when its task is cancelled") { context in
            let store = try await counter(context)
            // In flight when the shutdown starts; it finishes once an access was refused (events, not
            // sleeps, order the three, so a busy machine cannot reorder them).
            let (writing, writingContinuation) = AsyncStream<Void>.makeStream()
            let refusalSeen = DispatchSemaphore(value: 0)
            let inFlight = Task {
                try await store.write { db in
                    writingContinuation.yield()
                    _ = refusalSeen.wait(timeout: .now() + 600)
                    try add(db, 1, "finished during shutdown")
                    return try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "events")") ?? 0
                }
            }
            for await _ in writing { break }
            // Started at once, up to its first suspension: the store is closed to new accesses when this returns.
            let shutdown = Task.immediate { await store.shutdown(gracePeriod: .seconds(600)) }
            defer { refusalSeen.signal() }
            try await expectError(.connection, "an access started during the shutdown") {
                try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
            }
            refusalSeen.signal()
            try expectEqual(try await inFlight.value, 1, "the in-flight write's own count")
            await shutdown.value

            // Past a short grace period, a statement still running is interrupted.
            let second = try await counter(context)
            let endless = endlessQuery
            let (statementStarts, statementStartsContinuation) = AsyncStream<Void>.makeStream()
            let running = Task {
                try await second.write { db in
                    statementStartsContinuation.yield()
                    return try db.fetchOne(Int.self, endless)
                }
            }
            for await _ in statementStarts { break }
            let started = ContinuousClock.now
            await second.shutdown(gracePeriod: .milliseconds(200))
            // Measured from the shutdown's start: the statement would run for days.
            try expect(ContinuousClock.now - started < .seconds(120), "the shutdown waited \(ContinuousClock.now - started)")
            do {
                let value = try await running.value
                throw ConformanceFailure("the long write finished with \(String(describing: value)) instead of being interrupted")
            } catch let error as DatabaseError {
                try expectEqual(error.kind, .interrupted, "the interrupted write's error kind")
                try expectMentions(error.message, ["shut down"], "the interrupted write's error")
            }

            // A shutdown whose task is cancelled ends its grace period at once (a
            // service manager cancels a shutdown that takes too long).
            let third = try await counter(context)
            let (thirdStarts, thirdStartsContinuation) = AsyncStream<Void>.makeStream()
            let endlessWrite = Task {
                try await third.write { db in
                    thirdStartsContinuation.yield()
                    return try db.fetchOne(Int.self, endless)
                }
            }
            for await _ in thirdStarts { break }
            let cancelledShutdown = Task { await third.shutdown(gracePeriod: .seconds(600)) }
            let cancelledAt = ContinuousClock.now
            cancelledShutdown.cancel()
            await cancelledShutdown.value
            // Measured from the cancel: the grace period is ten minutes, the statement would run for days.
            // (Its interrupt may come before the statement starts: the store interrupts again.)
            try expect(ContinuousClock.now - cancelledAt < .seconds(120), "the cancelled shutdown waited \(ContinuousClock.now - cancelledAt)")
            do {
                let value = try await endlessWrite.value
                throw ConformanceFailure("the long write finished with \(String(describing: value)) instead of being interrupted")
            } catch let error as DatabaseError {
                try expectEqual(error.kind, .interrupted, "the write interrupted by a cancelled shutdown")
            }
        },
        ConformanceCheck("transactions: a failed statement fails its write and leaves the store usable") { context in
            let store = try await counter(context)
            try await expectError(.unique, "inserting id 1 twice") {
                try await store.write { db in try add(db, 1, "a"); try add(db, 1, "b") }
            }
            try expectEqual(try await names(store), [], "rows after the failed write")
            try await store.write { db in try add(db, 1, "c") }
            try expectEqual(try await names(store), ["c"], "the next write works")
        },
        ConformanceCheck("transactions: after a failed statement a write refuses more until a savepoint rolls back") { context in
            let store = try await counter(context)
            let error = try await expectError(.misuse, "a statement after a caught failure") {
                try await store.write { db in
                    try add(db, 1, "a")
                    _ = try? add(db, 1, "duplicate")
                    try add(db, 2, "b")
                }
            }
            try expectMentions(error.message, ["earlier statement", "savepoint"], "the misuse error")
            try expectEqual(try await names(store), [], "rows after the refused write")
            try await store.write { db in
                try add(db, 1, "a")
                _ = try? db.savepoint { db in try add(db, 1, "duplicate") }
                try add(db, 2, "b")
            }
            try expectEqual(try await names(store), ["a", "b"], "rows when the failure was inside a savepoint")
        },
        ConformanceCheck("transactions: a savepoint rolls back alone inside a committed write") { context in
            let store = try await counter(context)
            try await store.write { db in
                try add(db, 1, "kept")
                do {
                    try db.savepoint { db in
                        try add(db, 2, "undone")
                        try add(db, 1, "duplicate") // fails: the savepoint rolls back
                    }
                } catch let error as DatabaseError where error.kind == .unique {}
                try db.savepoint { db in
                    try add(db, 3, "nested outer")
                    try? db.savepoint { db in
                        try add(db, 4, "nested inner")
                        throw ExpectedFailure()
                    }
                }
                try add(db, 5, "after")
            }
            try expectEqual(try await names(store), ["kept", "nested outer", "after"], "rows after the savepoints")
        },
        ConformanceCheck("transactions: a read sees a consistent snapshot and cannot write") { context in
            let store = try await counter(context)
            try await store.write { db in try add(db, 1, "a") }
            let error = try await expectError(.misuse, "writing inside a read") {
                try await store.read { db in try add(db, 2, "b") }
            }
            try expect(error.engineCode != nil, "the engine's code is kept: \(error)")
            try expectEqual(try await names(store), ["a"], "rows after the refused write")
            try await store.write { db in try add(db, 2, "b") }
            try expectEqual(try await names(store), ["a", "b"], "a write after the refused one")
        },
        ConformanceCheck("transactions: whatever follows a read on its connection runs after the read has ended and sees the last commit") { context in
            // Engines may end a read without waiting for its answer (PostgreSQL
            // sends the next access behind the read's COMMIT, in one pipeline):
            // each kind of use that can come next must find the read ended.
            // A bound against a hang (a schema change waiting for a read that
            // never ended), not a timing bound.
            var configuration = Store.Configuration()
            configuration.accessTimeout = .seconds(120)
            let store = try await context.makeStore(configuration)
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            var expected: [String] = []
            func write(_ id: Int) async throws {
                try await store.write { db in try add(db, id, "n\(id)") }
                expected.append("n\(id)")
            }
            try await write(1)
            for round in 0..<3 {
                let base = 10 * (round + 1)
                try expectEqual(try await names(store), expected, "round \(round): a read")
                try expectEqual(try await names(store), expected, "round \(round): a read after a read")
                // A write on the writer's connection: a snapshot the read kept would miss it.
                try await write(base)
                try expectEqual(try await names(store), expected, "round \(round): a read after a write")
                _ = try await store.read { _ in 0 }
                try await store.write { _ in }
                try expectEqual(try await names(store), expected, "round \(round): a read after empty accesses")
                try await expectError(.syntax, "round \(round): a read whose first statement fails") {
                    try await store.read { db in try db.fetchAll(Int.self, "SELECT \(ident: "nothing") FROM \(ident: "events")") }
                }
                let streamed = try await store.read { db in
                    var seen: [String] = []
                    try db.forEach(String.self, "SELECT \(ident: "name") FROM \(ident: "events") ORDER BY \(ident: "id")") { seen.append($0) }
                    return seen
                }
                try expectEqual(streamed, expected, "round \(round): a read streaming its first statement, after a failed read")
                let counted = try await store.read { db in
                    try db.execute(script: SQL(unsafeRaw: "SELECT 1"))
                    return try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "events")")
                }
                try expectEqual(counted, expected.count, "round \(round): a read starting with a script")
                try await expectError(.unique, "round \(round): a write whose first statement fails, after a read") {
                    try await store.write { db in try add(db, 1, "duplicate") }
                }
                try expectEqual(try await names(store), expected, "round \(round): a read after a failed write")
                // A schema change takes the strongest lock: it waits for any read
                // still open on the table it drops, past the store's access timeout.
                try await store.write { db in
                    try db.execute(script: SQL(unsafeRaw: "CREATE TABLE round\(round) (id INTEGER PRIMARY KEY)"))
                }
                let dropped = try await store.read { db in try db.fetchAll(Int.self, "SELECT \(ident: "id") FROM \(ident: "round\(round)")") }
                try expectEqual(dropped, [], "round \(round): a read of the table to drop")
                do {
                    try await store.write { db in try db.execute(script: SQL(unsafeRaw: "DROP TABLE round\(round)")) }
                } catch let error as DatabaseError where error.kind == .timeout {
                    throw ConformanceFailure("round \(round): dropping a table waited 120 s for the read of it that had ended: \(error)")
                }
                try await write(base + 1)
                try expectEqual(try await names(store), expected, "round \(round): a read after a schema change")
            }
        },
        ConformanceCheck("transactions: reads refuse and writes run the same statement however accesses alternate") { context in
            // Backends keep statements and access scripts compiled across accesses:
            // the read-only guard must still follow each access, not the first one.
            let store = try await counter(context)
            for round in 0..<3 {
                try await store.write { db in try add(db, round * 2, "w\(round)") }
                try await expectError(.misuse, "round \(round): the same insert inside a read") {
                    try await store.read { db in try add(db, round * 2 + 1, "r\(round)") }
                }
                try await expectError(.misuse, "round \(round): a second read, writing") {
                    try await store.read { db in try add(db, round * 2 + 1, "r\(round)") }
                }
            }
            try expectEqual(try await names(store), ["w0", "w1", "w2"], "rows after three rounds")
        },
        ConformanceCheck("transactions: cancelling a task mid-write rolls back and leaves the store usable") { context in
            let store = try await counter(context)
            let (started, startedContinuation) = AsyncStream<Void>.makeStream()
            let task = Task {
                try await store.write { db in
                    try add(db, 1, "cancelled")
                    startedContinuation.yield()
                    // Keep running statements until the cancellation arrives (bounded only against a hang).
                    let deadline = Date().addingTimeInterval(600)
                    while Date() < deadline {
                        _ = try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "events")")
                    }
                }
            }
            for await _ in started { break }
            task.cancel()
            do {
                try await task.value
                throw ConformanceFailure("the cancelled write should have thrown")
            } catch is CancellationError {
            } catch let error as DatabaseError {
                throw ConformanceFailure("a cancelled write must throw CancellationError, got \(error)")
            }
            try expectEqual(try await names(store), [], "rows after the cancelled write")
            try await store.write { db in try add(db, 1, "after") }
            try expectEqual(try await names(store), ["after"], "a write after the cancelled one")
        },
        ConformanceCheck("transactions: cancelling a task mid-read interrupts its statement, wherever the read runs, and leaves the store usable") { context in
            // On SQLite the read runs on the calling task's thread (readsRunOnCallingThread): its
            // statement must stop all the same, by the interrupt the cancellation sends from the
            // cancelling thread. A watchdog off Swift's cooperative pool bounds a hang.
            let store = try await counter(context)
            try await store.write { db in try add(db, 1, "before") }
            let endless = endlessQuery
            let (started, startedContinuation) = AsyncStream<Void>.makeStream()
            let task = Task {
                try await store.read { db in
                    _ = try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: "events")")
                    startedContinuation.yield()
                    return try db.fetchOne(Int.self, endless)
                }
            }
            // Past the bound, a shutdown (whose interrupt reaches the running statement) ends the
            // hang, so a cancellation that interrupts nothing fails the check instead of hanging it.
            let watchdog = Watchdog(after: 120) { Task { await store.shutdown(gracePeriod: .zero) } }
            defer { watchdog.disarm() }
            for await _ in started { break }
            task.cancel()
            do {
                let value = try await task.value
                throw ConformanceFailure("the cancelled read finished with \(String(describing: value)) instead of being interrupted")
            } catch is CancellationError {
            } catch let error as DatabaseError {
                try expect(!watchdog.fired, "the read ran on for 120 s after its task was cancelled (the shutdown stopped it)")
                throw ConformanceFailure("a cancelled read must throw CancellationError, got \(error)")
            }
            try expect(!watchdog.fired, "the read ran on for 120 s after its task was cancelled")
            try expectEqual(try await names(store), ["before"], "a read after the cancelled one")
        },
        ConformanceCheck("transactions: a cancellation whose interrupt comes between a statement's check and its start still stops that statement") { context in
            // The gap is made wide on purpose: a hook on the connection's thread, after the check
            // before the endless statement found nothing to stop, waits until the cancellation's
            // interrupt has reached the driver (with no statement running, it stops nothing), and
            // only then lets the statement start. The store must interrupt it all the same.
            let gap = InterruptGap()
            var configuration = Store.Configuration()
            configuration.beforeStatementStarts = { probe in gap.pass(probe) }
            let store = try await context.makeStore(configuration)
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            let endless = endlessQuery
            // The statement is the access's first: SQLite keeps an interrupt for a statement that
            // starts while another has not been reset, which would hide the gap there.
            let running = Task {
                try await store.write { db in
                    gap.arm()
                    return try db.fetchOne(Int.self, endless)
                }
            }
            for await _ in gap.reached { break }
            running.cancel()
            // Only a bound against a hang: the statement would run for days. Past it, a shutdown
            // (whose interrupt meets the running statement) ends the check with a failure.
            let watchdog = Task {
                try await Task.sleep(for: .seconds(120))
                gap.noteWatchdog()
                await store.shutdown(gracePeriod: .zero)
            }
            defer { watchdog.cancel() }
            do {
                let value = try await running.value
                throw ConformanceFailure("the cancelled write finished with \(String(describing: value)) instead of being interrupted")
            } catch is CancellationError {
            } catch let error as DatabaseError {
                throw ConformanceFailure("a cancelled write must throw CancellationError, got \(error)")
            }
            try expect(!gap.watchdogFired, "the statement ran on for 120 s after its access was cancelled (its interrupt came before it started)")
            try expect(gap.interruptsSent >= 1, "the hook saw the cancellation's interrupt before the statement started")
            try expectEqual(try await names(store), [], "rows after the cancelled write")
            try await store.write { db in try add(db, 1, "after") }
            try expectEqual(try await names(store), ["after"], "a write after the cancelled one")
        },
        ConformanceCheck("transactions: a task cancelled before its access starts runs nothing") { context in
            let store = try await counter(context)
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await store.write { db in try add(db, 1, "never") }
            }
            do {
                try await task.value
                throw ConformanceFailure("the cancelled write should have thrown")
            } catch is CancellationError {}
            try expectEqual(try await names(store), [], "rows after the cancelled write")
        },
        ConformanceCheck("transactions: a Database used after its closure returned throws misuse") { context in
            let store = try await counter(context)
            let escaped = try await store.read { db in Escaped(db) }
            try await expectError(.misuse, "using an escaped Database") {
                try await store.read { _ in try escaped.use() }
            }
        },
    ]

    /// Smuggles a Database out of its closure, which the API must then refuse.
    final class Escaped: @unchecked Sendable {
        let db: Database
        init(_ db: Database) { self.db = db }
        func use() throws -> Int? { try db.fetchOne(Int.self, "SELECT 1") }
    }
}

/// The test hook of the lost-interrupt check: holds a statement between its
/// check and its start until an interrupt has reached the driver.
final class InterruptGap: @unchecked Sendable {
    // Unchecked: its state is read and written under `lock`.
    private let lock = NSLock()
    private var armed = false
    private var sent = 0
    private var watchdog = false
    /// Yields once, when the armed statement is in the gap.
    let reached: AsyncStream<Void>
    private let reachedContinuation: AsyncStream<Void>.Continuation

    init() {
        (reached, reachedContinuation) = AsyncStream<Void>.makeStream()
    }

    /// The next statement's check is the one to hold.
    func arm() { lock.withLock { armed = true } }

    /// The hook: for the armed statement, says it is in the gap and waits
    /// (on the connection's thread, as the hook runs) for the interrupt.
    func pass(_ probe: InterruptionProbe) {
        guard lock.withLock({ () -> Bool in defer { armed = false }; return armed }) else { return }
        reachedContinuation.yield()
        // Waits for an event (the interrupt sent), bounded only against a hang.
        let giveUp = ContinuousClock.now + .seconds(600)
        while probe.interruptsSent == 0, ContinuousClock.now < giveUp { usleep(1_000) }
        lock.withLock { sent = probe.interruptsSent }
    }

    func noteWatchdog() { lock.withLock { watchdog = true } }
    var watchdogFired: Bool { lock.withLock { watchdog } }
    var interruptsSent: Int { lock.withLock { sent } }
}

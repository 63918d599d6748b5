import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// Backends killed at random moments inside multi-statement writes: every
/// write is wholly committed or wholly absent.
///
/// Eight tasks run writes of several shapes (a statement first, a batch insert
/// first (a COPY pipelined with BEGIN), a savepoint first, a cursor first or in
/// the middle, a prepared statement first), each writing five items, one ledger
/// row and one counter increment for its own access number, while a killer
/// terminates the store's backends at random moments, idle or busy.
/// `DEPOT_FAULT_SEED` replays the shapes; `DEPOT_FAULT_ACCESSES` sets how many (2,500).
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresFaultTests {
    struct Item: Record {
        static let tableName = "fault_items"
        var id: Int64?
        var access: Int64
        var part: Int
    }

    enum Shape: CaseIterable {
        case statementFirst, batchFirst, savepointFirst, cursorFirst, cursorInTheMiddle, preparedFirst
    }

    /// One write of the given shape for access `n`: five items, a ledger row, a counter increment.
    static func write(_ shape: Shape, _ n: Int64, _ db: Database) throws {
        func items(_ parts: Range<Int>) -> [Item] { parts.map { Item(id: nil, access: n, part: $0) } }
        func ledger() throws { try db.execute("INSERT INTO fault_ledger (access) VALUES (\(n))") }
        func counter() throws { try db.execute("UPDATE fault_counter SET total = total + 1 WHERE id = 1") }
        switch shape {
        case .statementFirst:
            try ledger()
            try db.insert(contentsOf: items(0..<5))
            try counter()
        case .batchFirst:
            try db.insert(contentsOf: items(0..<5))
            try ledger()
            try counter()
        case .savepointFirst:
            try db.savepoint { db in try db.insert(contentsOf: items(0..<1)) }
            try ledger()
            try db.insert(contentsOf: items(1..<5))
            try counter()
        case .cursorFirst:
            try db.forEach(Int64.self, "SELECT access FROM fault_ledger WHERE access = \(n)") { _ in
                throw DatabaseError(.other, "access \(n) is in the ledger before it ran")
            }
            try ledger()
            try db.insert(contentsOf: items(0..<5))
            try counter()
        case .cursorInTheMiddle:
            try ledger()
            let cursor = try db.cursor(Int64.self, "SELECT access FROM fault_ledger WHERE access = \(n)")
            var seen = 0
            while try cursor.next() != nil { seen += 1 }
            guard seen == 1 else { throw DatabaseError(.other, "access \(n) sees its ledger row \(seen) times") }
            try db.insert(contentsOf: items(0..<5))
            try counter()
        case .preparedFirst:
            let before = try db.fetchOne(Int.self, "SELECT count(*) FROM fault_items WHERE access = \(n)")
            guard before == 0 else { throw DatabaseError(.other, "access \(n) has items before it ran") }
            try db.insert(contentsOf: items(0..<2))
            try ledger()
            try db.insert(contentsOf: items(2..<5))
            try counter()
        }
    }

    struct Tally: Decodable {
        var access: Int64
        var items: Int
    }

    enum Outcome {
        case committed
        case failed(DatabaseError)
        case unexpected(any Error)
    }

    /// The killer: terminates one of the application's backends every few
    /// milliseconds (a random moment, idle or busy) until `stop`; returns how many.
    static func killBackends(of application: String, through admin: Store, seed: UInt64, until stop: Stopper) -> Task<Int, Never> {
        Task.detached { () -> Int in
            var kills = 0
            var random = SeededGenerator(seed: seed ^ 0xDEAD)
            while !stop.isStopped {
                try? await Task.sleep(for: .microseconds(Int.random(in: 500...6_000, using: &random)))
                let killed = try? await admin.write { db in
                    try db.fetchOne(Int.self, """
                        SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                        WHERE application_name = \(application) ORDER BY random() LIMIT 1) AS k
                        """)
                }
                kills += killed ?? 0
            }
            return kills
        }
    }

    /// Backends killed at random moments between and inside read accesses that
    /// run back to back on the same connections as writes. A read's COMMIT goes
    /// out without waiting and the next access's first statement follows it in
    /// one pipeline, so a kill often lands between the two, or on a connection
    /// whose COMMIT answer was never read. Each read takes two statements, so
    /// each must see one snapshot (both rows of a write, or neither), never one
    /// older than a write acknowledged before it began (a read whose
    /// transaction never ended would), and fail, if at all, only by the lost connection.
    /// A PostgreSQL server seen through a proxy that, once armed, kills the
    /// connection at its `n`-th ReadyForQuery: it sends the error a terminated
    /// backend sends (57P01) in its place, and closes. What a backend killed
    /// between a pipeline's last answer and its sync point looks like to the
    /// client, at an exact point.
    final class DyingAtReadyForQuery: @unchecked Sendable {
        let lock = NSLock()
        var countdown = 0

        /// Kills the connection at the `n`-th ReadyForQuery from now.
        func arm(at n: Int) { lock.withLock { countdown = n } }

        /// Whether this ReadyForQuery is the one to die at.
        func isTheOne() -> Bool {
            lock.withLock {
                guard countdown > 0 else { return false }
                countdown -= 1
                return countdown == 0
            }
        }

        static let terminated: [UInt8] = {
            let fields = "SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0"
            let length = UInt32(4 + fields.utf8.count)
            return [UInt8(ascii: "E")] + withUnsafeBytes(of: length.bigEndian) { Array($0) } + Array(fields.utf8)
        }()

        /// A rewriter for one connection: whole messages forwarded, the chosen ReadyForQuery replaced.
        func rewriter() -> TCPProxy.ReplyRewriter {
            var pending: [UInt8] = []
            return { [self] chunk in
                pending += chunk
                var forward: [UInt8] = []
                while pending.count >= 5 {
                    let length = pending[1...4].reduce(0) { $0 << 8 | Int($1) }
                    guard pending.count >= 1 + length else { break }
                    if pending[0] == UInt8(ascii: "Z"), isTheOne() { return (forward + Self.terminated, true) }
                    forward += pending[0...length]
                    pending.removeFirst(1 + length)
                }
                return (forward, false)
            }
        }
    }

    /// A store on one connection through a ``DyingAtReadyForQuery`` proxy, unencrypted so the proxy reads it.
    func storeDyingAtReadyForQuery() async throws -> (Store, TCPProxy, DyingAtReadyForQuery) {
        var configuration = try PostgresTestServer.requireConfiguration()
        let proxy = try TCPProxy(to: configuration.host, port: configuration.port)
        let dying = DyingAtReadyForQuery()
        proxy.rewriteReplies { dying.rewriter() }
        try proxy.start()
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.maxConnections = 1
        configuration.parameters["sslmode"] = "disable"
        let store = try await Store.postgres(configuration)
        // A write first: its COMMIT is waited for, so nothing is in flight when the proxy is armed.
        try await store.write { db in _ = try db.fetchOne(Int.self, "SELECT 0") }
        return (store, proxy, dying)
    }

    /// A backend killed after the answer of an access's first statement (sent
    /// in one pipeline with BEGIN) and before the pipeline's sync point: the
    /// first statement's answer came whole, so before the fix it was taken,
    /// and the pipeline left waiting for its sync; libpq then refused the
    /// access's next statement as "not allowed in pipeline mode", an error
    /// that did not say the connection was lost (the random read fault test
    /// met it, seed 3761123241524716922). Now the connection counts as lost
    /// at the first statement, which nothing had reached before: it runs
    /// again on a new session, and the access answers.
    @Test func aBackendKilledBeforeThePipelinesSyncPointLeavesNoPipelineOpen() async throws {
        let (store, proxy, dying) = try await storeDyingAtReadyForQuery()
        defer { proxy.stop() }
        @Sendable func twoStatements(_ db: Database) throws -> [Int?] {
            [try db.fetchOne(Int.self, "SELECT 1"), try db.fetchOne(Int.self, "SELECT 2")]
        }
        dying.arm(at: 1)
        #expect(try await store.read(twoStatements) == [1, 2])
        try await store.write { db in _ = try db.fetchOne(Int.self, "SELECT 0") }
        dying.arm(at: 1)
        #expect(try await store.write(twoStatements) == [1, 2])
        await store.close()
    }

    /// A backend killed after answering a read's COMMIT (sent without
    /// waiting) and before that pipeline's sync point: whatever uses the
    /// connection next (here a script, which settles the COMMIT first) runs
    /// on a new session, where before the fix libpq refused it as "not
    /// allowed in pipeline mode".
    @Test func aBackendKilledBeforeAReadCommitsSyncPointLeavesNoPipelineOpen() async throws {
        let (store, proxy, dying) = try await storeDyingAtReadyForQuery()
        defer { proxy.stop() }
        // The read's own pipeline answers first (one ReadyForQuery), then its COMMIT's.
        dying.arm(at: 2)
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
        try await store.write { db in try db.execute(script: "CREATE TEMPORARY TABLE after_commit (id integer); DROP TABLE after_commit") }
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 3") } == 3)
        await store.close()
    }

    @Test func aBackendKilledAroundReadsLeavesEachReadOneCurrentSnapshotOrAConnectionError() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FAULT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let reads = environment["DEPOT_FAULT_READS"].flatMap { Int($0) } ?? 6_000
        print("PostgresFaultTests: seed \(seed), \(reads) reads (DEPOT_FAULT_SEED=\(seed) replays the kill timings)")
        let application = "depot_fault_reads_" + String(seed % 1_000_000)
        let store = try await PostgresTestServer.freshStore {
            $0.maxConnections = 4
            $0.parameters["application_name"] = application
        }
        try await store.write { db in
            try db.execute("CREATE TABLE fault_pair (id integer PRIMARY KEY, total bigint NOT NULL)")
            try db.execute("INSERT INTO fault_pair VALUES (1, 0), (2, 0)")
        }
        let admin = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        let stop = Stopper()
        let killer = Self.killBackends(of: application, through: admin, seed: seed, until: stop)

        let acknowledged = AcknowledgedWrites()
        let next = Counter()
        let findings = Findings()
        // One writer raises both rows together, until the readers are done.
        let writesDone = Stopper()
        let writer = Task.detached {
            while !writesDone.isStopped {
                do {
                    try await store.write { db in
                        try db.execute("UPDATE fault_pair SET total = total + 1 WHERE id = 1")
                        try db.execute("UPDATE fault_pair SET total = total + 1 WHERE id = 2")
                    }
                    acknowledged.raise()
                } catch let error as DatabaseError where error.kind == .connection {
                    // Lost, or of unknown outcome: either way both rows or neither.
                } catch {
                    findings.add("a write failed other than by a lost connection: \(error)")
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    while next.take(below: reads) != nil {
                        let before = acknowledged.value
                        do {
                            let (first, second) = try await store.read { db in
                                (try db.fetchOne(Int64.self, "SELECT total FROM fault_pair WHERE id = 1") ?? -1,
                                 try db.fetchOne(Int64.self, "SELECT total FROM fault_pair WHERE id = 2") ?? -1)
                            }
                            findings.read(ok: true)
                            if first != second { findings.add("one read saw the rows at \(first) and \(second)") }
                            if first < Int64(before) { findings.add("a read begun after \(before) acknowledged writes saw \(first)") }
                        } catch let error as DatabaseError where error.kind == .connection {
                            findings.read(ok: false)
                        } catch {
                            findings.add("a read failed other than by a lost connection: \(error)")
                        }
                    }
                }
            }
        }
        writesDone.stop()
        await writer.value
        stop.stop()
        let kills = await killer.value
        await admin.close()
        let totals = try await store.read { db in try db.fetchAll(Int64.self, "SELECT total FROM fault_pair ORDER BY id") }
        await store.close()
        let (succeeded, failed, problems) = findings.summary
        print("PostgresFaultTests: \(kills) backends killed; \(succeeded) reads succeeded, \(failed) lost their connection; \(acknowledged.value) writes acknowledged, rows at \(totals)")
        #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(5))")
        #expect(totals.count == 2 && totals[0] == totals[1] && totals[0] >= Int64(acknowledged.value), "rows \(totals) after \(acknowledged.value) acknowledged writes")
        #expect(kills >= 20, "the killer must actually kill: \(kills) kills")
        #expect(failed > 0, "some reads must have been hit, or the test proves nothing")
    }

    @Test func aBackendKilledAtAnyPointInsideAWriteLeavesItWhollyCommittedOrWhollyAbsent() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FAULT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = environment["DEPOT_FAULT_ACCESSES"].flatMap { Int($0) } ?? 2_500
        print("PostgresFaultTests: seed \(seed), \(count) writes (replay the shapes with DEPOT_FAULT_SEED=\(seed))")
        var generator = SeededGenerator(seed: seed)
        let shapes = (0..<count).map { _ in generator.pick(Shape.allCases) }
        let application = "depot_fault_" + String(seed % 1_000_000)
        let store = try await PostgresTestServer.freshStore {
            $0.maxConnections = 8
            $0.parameters["application_name"] = application
        }
        try await store.write { db in
            try db.execute("CREATE TABLE fault_items (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, access bigint NOT NULL, part integer NOT NULL)")
            try db.execute("CREATE TABLE fault_ledger (access bigint PRIMARY KEY)")
            try db.execute("CREATE TABLE fault_counter (id integer PRIMARY KEY, total bigint NOT NULL)")
            try db.execute("INSERT INTO fault_counter VALUES (1, 0)")
        }

        let admin = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        let stop = Stopper()
        let killer = Self.killBackends(of: application, through: admin, seed: seed, until: stop)

        // Eight writers take the accesses in turn.
        let next = Counter()
        let outcomes = OutcomeLog(count: count)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while let n = next.take(below: count) {
                        let shape = shapes[n]
                        do {
                            try await store.write { db in try Self.write(shape, Int64(n), db) }
                            outcomes.set(n, .committed)
                        } catch let error as DatabaseError {
                            outcomes.set(n, .failed(error))
                        } catch {
                            outcomes.set(n, .unexpected(error))
                        }
                    }
                }
            }
        }
        stop.stop()
        let kills = await killer.value
        await admin.close()

        // What the server holds, read on a fresh connection.
        let (itemCounts, ledger, total) = try await store.read { db in
            var items: [Int64: Int] = [:]
            for tally in try db.fetchAll(Tally.self, "SELECT access, count(*) AS items FROM fault_items GROUP BY access") {
                items[tally.access] = tally.items
            }
            let ledger = Set(try db.fetchAll(Int64.self, "SELECT access FROM fault_ledger"))
            let total = try db.fetchOne(Int64.self, "SELECT total FROM fault_counter WHERE id = 1") ?? -1
            return (items, ledger, total)
        }
        await store.close()

        var committed = 0, failed = 0, unknown = 0, halfDone: [String] = [], lost: [String] = [], unexpected: [String] = []
        var failureKinds: [String: Int] = [:]
        for n in 0..<count {
            let items = itemCounts[Int64(n)] ?? 0
            let inLedger = ledger.contains(Int64(n))
            let whole = items == 5 && inLedger
            let absent = items == 0 && !inLedger
            if !whole && !absent { halfDone.append("write \(n) (\(shapes[n])): \(items) items, ledger row \(inLedger), outcome \(outcomes[n])") }
            switch outcomes[n] {
            case .committed:
                committed += 1
                if !whole { lost.append("write \(n) (\(shapes[n])) was acknowledged but is not wholly there") }
            case .failed(let error) where error.commitOutcomeUnknown:
                unknown += 1
            case .failed(let error):
                failed += 1
                failureKinds["\(error.kind)", default: 0] += 1
                if !absent { halfDone.append("write \(n) (\(shapes[n])) failed (\(error)) but left data") }
                if error.kind != .connection { unexpected.append("write \(n) (\(shapes[n])): \(error)") }
            case .unexpected(let error):
                unexpected.append("write \(n) (\(shapes[n])): \(type(of: error)): \(error)")
            }
        }
        print("PostgresFaultTests: \(kills) backends killed; \(committed) writes committed, \(failed) failed \(failureKinds), \(unknown) with an unknown outcome; ledger \(ledger.count), counter \(total)")
        #expect(halfDone.isEmpty, "half-done writes (seed \(seed)): \(halfDone.prefix(5))")
        #expect(lost.isEmpty, "acknowledged writes lost (seed \(seed)): \(lost.prefix(5))")
        #expect(unexpected.isEmpty, "writes that failed other than by a lost connection (seed \(seed)): \(unexpected.prefix(5))")
        #expect(total == Int64(ledger.count), "the counter says \(total) writes, the ledger holds \(ledger.count)")
        #expect(kills >= count / 20, "the killer must actually kill: \(kills) kills for \(count) writes")
        #expect(failed > 0, "some writes must have been hit inside, or the test proves nothing")
    }
}

/// Hands out access numbers, each once.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func take(below limit: Int) -> Int? {
        lock.withLock {
            guard value < limit else { return nil }
            defer { value += 1 }
            return value
        }
    }
}

/// How many writes were acknowledged so far.
private final class AcknowledgedWrites: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func raise() { lock.withLock { count += 1 } }
}

/// What the readers saw: how many reads ended each way, and every broken rule.
private final class Findings: @unchecked Sendable {
    private let lock = NSLock()
    private var succeeded = 0, failed = 0
    private var problems: [String] = []
    func read(ok: Bool) { lock.withLock { if ok { succeeded += 1 } else { failed += 1 } } }
    func add(_ problem: String) { lock.withLock { problems.append(problem) } }
    var summary: (Int, Int, [String]) { lock.withLock { (succeeded, failed, problems) } }
}

final class Stopper: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    var isStopped: Bool { lock.withLock { stopped } }
    func stop() { lock.withLock { stopped = true } }
}

private final class OutcomeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [PostgresFaultTests.Outcome?]
    init(count: Int) { outcomes = Array(repeating: nil, count: count) }
    func set(_ n: Int, _ outcome: PostgresFaultTests.Outcome) { lock.withLock { outcomes[n] = outcome } }
    subscript(n: Int) -> PostgresFaultTests.Outcome {
        lock.withLock { outcomes[n] ?? .unexpected(DatabaseError(.other, "write \(n) never ran")) }
    }
}

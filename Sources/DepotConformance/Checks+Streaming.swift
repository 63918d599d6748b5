#if canImport(Glibc)
import Glibc
#endif
import Depot
import Foundation
import Synchronization

/// Cursors stream; batch inserts have no size limit and are all-or-none.
enum StreamingChecks {
    @Columns
    struct Payload: Record {
        static var tableName: String { "payloads" }
        var id: Int64
        var text: String
    }

    /// Decodes like `Payload` but counts how many decoded rows are alive at once.
    struct Tracked: Decodable {
        static let counterKey = CodingUserInfoKey(rawValue: "depot.conformance.counter")!
        let token: LiveToken
        let id: Int64

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int64.self, forKey: .id)
            _ = try container.decode(String.self, forKey: .text)
            guard let counter = decoder.userInfo[Self.counterKey] as? LiveCounter else {
                throw ConformanceFailure("the decoder's userInfo did not reach init(from:)")
            }
            token = LiveToken(counter)
        }

        enum CodingKeys: String, CodingKey { case id, text }
    }

    /// Every kind of value, for the batch insert check.
    @Columns
    struct Mixed: Record, Equatable {
        static var tableName: String { "mixed" }
        var id: Int64
        var text: String?
        var blob: Data?
        var number: Double?
        var flag: Bool?
        var when: Date?
        var uuid: UUID?
        var amount: Decimal?
        var nested: [String: String]?
    }

    static let rowCount = 100_000
    static let textSize = 500

    static let all: [ConformanceCheck] = [
        ConformanceCheck("streaming: a cursor over 100,000 rows keeps memory flat", needsTheProcessAlone: true) { context in
            // Resident memory is the process's: any test running beside it counts. It runs
            // with the process to itself; two such checks (one per backend) take turns.
            try await MemoryMeasurement.exclusively { try await measureStreaming(context) }
        },
        ConformanceCheck("streaming: rows flow out of an access as an AsyncSequence, with backpressure; leaving the loop ends the access") { context in
            let counter = DecodedCounter()
            var configuration = Store.Configuration()
            configuration.decoder.userInfo[DecodedCounter.key] = counter
            let store = try await context.makeStore(configuration)
            try await store.write { db in
                try createTable(db, "payloads", [("id", .integer, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
                try db.insert(contentsOf: (1...5_000).map { Payload(id: Int64($0), text: "row \($0)") })
            }
            var seen: [Int64] = []
            for try await row in store.rows(CountedRow.self, "SELECT \(ident: "id") FROM \(ident: "payloads") ORDER BY \(ident: "id")") {
                seen.append(row.id)
            }
            try expectEqual(seen, (1...5_000).map(Int64.init), "every row, in order")

            // A slow consumer: the producer stays at most a buffer ahead.
            let before = counter.value
            var taken = 0
            for try await _ in store.rows(CountedRow.self, "SELECT \(ident: "id") FROM \(ident: "payloads") ORDER BY \(ident: "id")", bufferSize: 16) {
                taken += 1
                if taken == 5 {
                    try await Task.sleep(for: .milliseconds(300))
                    let ahead = counter.value - before - taken
                    try expect(ahead <= 16 + 1, "rows decoded ahead of the consumer: \(ahead), with a buffer of 16")
                    break
                }
            }
            // The access ended with the loop: a write (on the one connection of an in-memory store, too) goes through.
            try await store.write { db in try db.execute("DELETE FROM \(ident: "payloads") WHERE \(ident: "id") > \(10)") }
            let query = store.rows(StreamingChecks.Payload.where { $0.id.between(3, and: 5) })
            var ids: [Int64] = []
            for try await payload in query { ids.append(payload.id) }
            try expectEqual(ids, [3, 4, 5], "a builder query streamed")
            try await expectError(.syntax, "a stream whose query fails") {
                for try await _ in store.rows(Int.self, "SELECT \(ident: "nothing") FROM \(ident: "payloads")") {}
            }
        },
        ConformanceCheck("streaming: more streams at once than Swift has threads, each consumer behind its producer, all finish") { context in
            // A stream's read blocks while its buffer is full. Were it to run on the calling task's
            // thread (as other reads on SQLite do), two such reads would hold both of a 2-core
            // machine's cooperative threads, and the consumers that would empty their buffers
            // could never run. A watchdog off the pool ends such a hang with a failure.
            let store = try await context.makeStore()
            try await store.write { db in
                try createTable(db, "payloads", [("id", .integer, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
                try db.insert(contentsOf: (1...200).map { Payload(id: Int64($0), text: "row \($0)") })
            }
            let streams = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
            let consumed = RowCount()
            let tasks = (0..<streams).map { _ in
                Task {
                    var ids: [Int64] = []
                    for try await payload in store.rows(Payload.self, "SELECT * FROM \(ident: "payloads") ORDER BY \(ident: "id")", bufferSize: 1) {
                        ids.append(payload.id)
                        consumed.value.add(1, ordering: .relaxed)
                        await Task.yield()
                    }
                    return ids
                }
            }
            // A hang is no row consumed for two minutes; slow progress (the thread sanitizer beside
            // a whole suite: 1,200 hand-offs queued behind every other test's) is not.
            let watchdog = Watchdog(stalledFor: 120, progress: { consumed.value.load(ordering: .relaxed) }) { for task in tasks { task.cancel() } }
            defer { watchdog.disarm() }
            for task in tasks {
                let ids = try? await task.value
                try expect(!watchdog.fired, "\(streams) streams consumed no row for 120 s (\(consumed.value.load(ordering: .relaxed)) in all): their reads held the threads their consumers need")
                try expectEqual(ids, (1...200).map(Int64.init), "each stream's rows")
            }
        },
        ConformanceCheck("streaming: a cursor is closed when its access ends") { context in
            let store = try await TransactionChecks.counter(context)
            try await store.write { db in for n in 0..<3 { try TransactionChecks.add(db, n, "e\(n)") } }
            let cursor = try await store.read { db -> EscapedCursor in
                let cursor = try db.cursor(String.self, "SELECT \(ident: "name") FROM \(ident: "events") ORDER BY \(ident: "id")")
                try expectEqual(try cursor.next(), "e0", "the cursor's first row")
                return EscapedCursor(cursor)
            }
            try await expectError(.misuse, "using a cursor after its access ended") {
                try await store.read { _ in try cursor.next() }
            }
        },
        ConformanceCheck("streaming: a batch insert stores every type and character as single inserts do") { context in
            let awkward = ["tab\there", "new\nline", "carriage\rreturn", "back\\slash \\N", "\\.", "", "é 👩‍👩‍👧", "comma, \"quote\""]
            let infinities = try await context.makeStore().dialect.capabilities.doubleCanHoldInfinity
            let rows = awkward.enumerated().map { index, text in
                Mixed(id: Int64(index + 1), text: text, blob: Data([0, 9, 10, 92, 255]),
                      number: index == 0 ? (infinities ? .infinity : .greatestFiniteMagnitude) : -Double(index) / 3,
                      flag: index % 2 == 0, when: edgeDates[index % edgeDates.count], uuid: UUID(), amount: Decimal(index) / 7,
                      nested: ["k": text])
            } + [Mixed(id: 100, text: nil, blob: nil, number: nil, flag: nil, when: nil, uuid: nil, amount: nil, nested: nil)]
            var stored: [[Mixed]] = []
            for batch in [true, false] {
                let store = try await context.makeStore()
                stored.append(try await store.write { db in
                    try createTable(db, "mixed", [("id", .integer, "PRIMARY KEY"), ("text", .text, ""), ("blob", .blob, ""), ("number", .double, ""),
                                                  ("flag", .bool, ""), ("when", .date, ""), ("uuid", .uuid, ""), ("amount", .decimal, ""), ("nested", .json, "")])
                    if batch { try db.insert(contentsOf: rows) } else { for row in rows { try db.insert(row) } }
                    return try db.fetchAll(Mixed.self, "SELECT * FROM \(ident: "mixed") ORDER BY \(ident: "id")")
                })
            }
            try expectSame(stored[0], stored[1], "rows stored by a batch against rows stored one by one")
            try expectSame(stored[0].map(\.text), rows.map(\.text), "texts stored by a batch")
            if !infinities {
                let infinite = { var copy = rows; copy[0].number = .infinity; return copy }()
                for batch in [true, false] {
                    let store = try await context.makeStore()
                    try await store.write { db in
                        try createTable(db, "mixed", [("id", .integer, "PRIMARY KEY"), ("text", .text, ""), ("blob", .blob, ""), ("number", .double, ""),
                                                      ("flag", .bool, ""), ("when", .date, ""), ("uuid", .uuid, ""), ("amount", .decimal, ""), ("nested", .json, "")])
                    }
                    try await expectInfinityRefused(batch ? "an infinity in a batch" : "an infinity in single inserts") {
                        try await store.write { db in if batch { try db.insert(contentsOf: infinite) } else { for row in infinite { try db.insert(row) } } }
                    }
                    let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "mixed")") }
                    try expectEqual(count, 0, "rows stored by the refused \(batch ? "batch" : "inserts")")
                }
            }
        },
        ConformanceCheck("streaming: a batch insert larger than the bound-value limit is all-or-none") { context in
            let store = try await context.makeStore()
            try await store.write { db in try Item.createTable(db) }
            let rows = store.dialect.maxBoundValues / 7 + 100
            let items = (0..<rows).map { n -> Item in
                var item = Item.sample(n)
                item.id = Int64(n + 1)
                return item
            }
            try await store.write { db in try db.insert(contentsOf: items) }
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") }
            try expectEqual(count, rows, "rows after a batch of \(rows) × 7 values (limit \(store.dialect.maxBoundValues))")
            let back = try await store.read { db in try db.fetchAll(Item.self, "SELECT * FROM \(ident: "items") ORDER BY \(ident: "id")") }
            try expectEqual(back.last?.title, items.last?.title, "the last row of the batch")
            var duplicate = items
            duplicate.append(items[0])
            let again = duplicate.map { item -> Item in var copy = item; copy.id = item.id.map { $0 + Int64(rows) }; return copy }
            try await expectError(.unique, "a batch whose last row repeats a key") {
                try await store.write { db in try db.insert(contentsOf: again) }
            }
            let after = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") }
            try expectEqual(after, rows, "rows after the failed batch (none of it kept)")
        },
    ]


    /// Streams 100,000 rows and compares the memory it takes with fetching them all.
    static func measureStreaming(_ context: ConformanceContext) async throws {
        let counter = LiveCounter()
        var configuration = Store.Configuration()
        configuration.decoder.userInfo[Tracked.counterKey] = counter
        let store = try await context.makeStore(configuration)
        let text = String(repeating: "x", count: textSize)
        try await store.write { db in
            try createTable(db, "payloads", [("id", .integer, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
            try db.insert(contentsOf: (1...rowCount).lazy.map { Payload(id: Int64($0), text: text) })
        }
        // Resident memory is the whole process's: tests running beside this one
        // allocate too. A cursor that loads its rows grows it every time, so the
        // smallest growth of up to three passes is the cursor's.
        var count = 0, idSum: Int64 = 0, streamGrowth: Int?
        for _ in 0..<3 {
            let pass = try await store.read { db -> (Int, Int64, Int?) in
                let baseline = ResidentMemory.trimmedBaseline()
                var peak = baseline
                var count = 0
                var sum: Int64 = 0
                try db.forEach(Tracked.self, "SELECT * FROM \(ident: "payloads") ORDER BY \(ident: "id")") { row in
                    count += 1
                    sum += row.id
                    if count % 5_000 == 0, let now = ResidentMemory.current() { peak = max(peak ?? now, now) }
                }
                return (count, sum, peak.flatMap { p in baseline.map { p - $0 } })
            }
            (count, idSum) = (pass.0, pass.1)
            streamGrowth = [streamGrowth, pass.2].compactMap { $0 }.min()
            if let growth = streamGrowth, growth <= 16 << 20 { break }   // else try again: another suite may have allocated meanwhile
        }
        try expectEqual(count, rowCount, "rows streamed")
        try expectEqual(idSum, Int64(rowCount) * Int64(rowCount + 1) / 2, "sum of streamed ids")
        try expect(counter.peak <= 2, "decoded rows alive at once while streaming: \(counter.peak); a cursor must not keep rows")
        if let streamGrowth {
            // The same rows fetched at once, to show that the measurement sees materialized rows.
            let fetchGrowth = try await store.read { db -> Int in
                let baseline = ResidentMemory.trimmedBaseline() ?? 0
                let all = try db.fetchAll(Payload.self, "SELECT * FROM \(ident: "payloads")")
                let grown = (ResidentMemory.current() ?? 0) - baseline
                try expectEqual(all.count, rowCount, "rows fetched at once")
                return grown
            }
            let mib = 1 << 20
            try expect(fetchGrowth >= 24 * mib, "fetching all rows grew memory by only \(fetchGrowth / mib) MiB: the measurement cannot tell streaming from fetching")
            // A cursor that loads its rows grows memory as fetching them all does, so streaming is
            // held to a third of that (and 16 MiB on a quiet process), not to what an idle process
            // shows: a runner's own threads and caches move the figure by a few MiB.
            let bound = Swift.max(16 * mib, fetchGrowth / 3)
            try expect(streamGrowth <= bound, "streaming grew memory by \(streamGrowth / mib) MiB, past \(bound / mib) MiB (fetching all grew it by \(fetchGrowth / mib) MiB): a cursor must not load its rows")
        }
    }

    final class EscapedCursor: @unchecked Sendable {
        let cursor: Cursor<String>
        init(_ cursor: Cursor<String>) { self.cursor = cursor }
        func next() throws -> String? { try cursor.next() }
    }
}

/// Counts how many rows were decoded, for the backpressure check.
final class DecodedCounter: @unchecked Sendable {
    static let key = CodingUserInfoKey(rawValue: "depot.conformance.decoded")!
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}

/// A row that counts itself when decoded.
struct CountedRow: Decodable, Sendable {
    let id: Int64

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        (decoder.userInfo[DecodedCounter.key] as? DecodedCounter)?.increment()
    }

    enum CodingKeys: String, CodingKey { case id }
}

/// Counts live instances, and the most alive at once.
final class LiveCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var live = 0
    private(set) var peak = 0

    func increment() { lock.withLock { live += 1; peak = max(peak, live) } }
    func decrement() { lock.withLock { live -= 1 } }
}

final class LiveToken {
    let counter: LiveCounter
    init(_ counter: LiveCounter) { self.counter = counter; counter.increment() }
    deinit { counter.decrement() }
}

/// The process's resident memory, where the platform tells it (Linux's /proc).
enum ResidentMemory {
    static func current() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Returns freed heap to the system first, so earlier frees cannot hide new allocations.
    static func trimmedBaseline() -> Int? {
        #if canImport(Glibc)
        // glibc's malloc_trim, looked up at run time: other C libraries do not have it.
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            typealias MallocTrim = @convention(c) (Int) -> Int32
            _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        }
        #endif
        return current()
    }
}

/// Runs memory-measuring work one at a time in a process.
enum MemoryMeasurement {
    private static let lock = AsyncLock()

    static func exclusively<T>(_ body: () async throws -> T) async throws -> T {
        await lock.lock()
        defer { lock.unlock() }
        return try await body()
    }
}

/// A lock that waits without blocking a thread.
final class AsyncLock: @unchecked Sendable {
    private let mutex = NSLock()
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            mutex.lock()
            if locked {
                waiters.append(continuation)
                mutex.unlock()
            } else {
                locked = true
                mutex.unlock()
                continuation.resume()
            }
        }
    }

    func unlock() {
        mutex.lock()
        if waiters.isEmpty {
            locked = false
            mutex.unlock()
        } else {
            let next = waiters.removeFirst()
            mutex.unlock()
            next.resume()
        }
    }
}

/// A count of rows consumed, read by a watchdog on a stall.
final class RowCount: Sendable {
    let value = Atomic<Int>(0)
}

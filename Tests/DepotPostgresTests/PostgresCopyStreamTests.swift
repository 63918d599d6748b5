import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// A million records streamed into PostgreSQL through one COPY: memory stays
/// flat, and an error in the middle stores nothing.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresCopyStreamTests {
    @Columns
    struct Entry: Record, Equatable {
        static let tableName = "entries"
        var id: Int64
        var title: String
        var body: String
        var at: Date
    }

    /// The process's resident memory, in bytes (Linux's /proc).
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes * 1024
    }

    /// `count` entries of about 300 bytes each, made as they are asked for,
    /// recording the most resident memory seen; the one at `broken` gets id 1 again.
    struct Entries: AsyncSequence, Sendable {
        let count: Int
        var duplicateAt: Int?
        let peak: PeakMemory

        struct AsyncIterator: AsyncIteratorProtocol {
            var n = 0
            let sequence: Entries
            mutating func next() async -> Entry? {
                guard n < sequence.count else { return nil }
                n += 1
                if n % 50_000 == 0 { sequence.peak.sample() }
                let id = n == sequence.duplicateAt ? 1 : Int64(n)
                return Entry(id: id, title: "entry \(n)", body: String(repeating: "é", count: 150),
                             at: Date(timeIntervalSince1970: 1_700_000_000 + Double(n)))
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(sequence: self) }
    }

    final class PeakMemory: @unchecked Sendable {
        private let lock = NSLock()
        private var peak = PostgresCopyStreamTests.residentBytes()
        let start = PostgresCopyStreamTests.residentBytes()
        func sample() { let now = PostgresCopyStreamTests.residentBytes(); lock.withLock { peak = max(peak, now) } }
        var growth: Int { lock.withLock { peak - start } }
    }

    @Test func aMillionRecordsStreamInThroughOneCopyWithFlatMemoryAndAnErrorInTheMiddleStoresNothing() async throws {
        let store = try await PostgresTestServer.freshStore()
        try await store.write { db in
            try db.execute("CREATE TABLE entries (id bigint PRIMARY KEY, title text NOT NULL, body text NOT NULL, at timestamptz NOT NULL)")
        }
        let peak = PeakMemory()
        let started = ContinuousClock.now
        let inserted = try await store.insert(contentsOf: Entries(count: 1_000_000, peak: peak))
        let elapsed = ContinuousClock.now - started
        let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM entries") }
        print("COPY in: 1,000,000 records (about 300 MB as Swift values) in \(elapsed), resident memory grew by \(peak.growth / 1_048_576) MiB at most")
        #expect(inserted == 1_000_000 && count == 1_000_000)
        #expect(peak.growth < 150 * 1_048_576, "memory grew by \(peak.growth / 1_048_576) MiB")

        // Out again through one binary COPY, a row at a time.
        let exported = PeakMemory()
        var (read, previous, inOrder) = (0, Int64(0), true)
        let exportStarted = ContinuousClock.now
        for try await entry in store.copyRows(Entry.all.order { $0.id.ascending() }) {
            read += 1
            inOrder = inOrder && entry.id == previous + 1 && entry.body.count == 150
            previous = entry.id
            if read % 50_000 == 0 { exported.sample() }
        }
        print("COPY out: \(read) records in \(ContinuousClock.now - exportStarted), resident memory grew by \(exported.growth / 1_048_576) MiB at most")
        #expect(read == 1_000_000 && inOrder)
        #expect(exported.growth < 150 * 1_048_576, "memory grew by \(exported.growth / 1_048_576) MiB")

        try await store.write { db in try db.execute("TRUNCATE entries") }
        let error = await #expect(throws: DatabaseError.self) {
            try await store.insert(contentsOf: Entries(count: 1_000_000, duplicateAt: 500_000, peak: peak))
        }
        #expect(error?.kind == .unique)
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM entries") } == 0)
        await store.close()
    }

    @Test func anExportRunsAsBinaryCopyAndARowThatCannotDecodeStopsItWithTheCell() async throws {
        let logs = CapturedLogs()
        var configuration = Store.Configuration()
        configuration.logger = logs.logger()
        let store = try await PostgresTestServer.freshStore(configuration)
        try await store.write { db in
            try db.execute("CREATE TABLE entries (id bigint PRIMARY KEY, title text, body text NOT NULL, at timestamptz NOT NULL)")
            try db.execute("INSERT INTO entries SELECT n, 'entry ' || n, 'body', now() FROM generate_series(1, 1000) AS n")
            try db.execute("UPDATE entries SET title = NULL WHERE id = 700")
        }
        var read = 0
        let error = await #expect(throws: DatabaseError.self) {
            for try await _ in store.copyRows(Entry.all.order { $0.id.ascending() }) { read += 1 }
        }
        #expect(read == 699, "the rows before the one that cannot decode")
        #expect(error?.kind == .decoding && error?.column == "title", "\(error.map { "\($0)" } ?? "")")
        #expect(logs.text.contains("copy out: SELECT"), "the export ran through the bulk export path")
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM entries") } == 1000, "the store goes on")
        await store.close()
    }
}

import Depot
import DepotPostgres
import DepotSQLite
import Foundation

/// Observation figures: how long after a commit returns its value reaches an
/// observation's iterator (median and p99 over `samples` commits, each waited
/// for), for a write from the same store and from another store on the same
/// database; and what PostgreSQL's notify trigger costs a one-row insert.
enum ObservationLatency {
    static func run(samples: Int) async throws {
        var lines = ["Observation: from a commit's return to its value in the iterator, over \(samples) commits from the same store",
                     "and \(max(1, samples / 2)) from another (each waited for, spread over 0-100 ms); then the notify trigger's cost"]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-observation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("o.sqlite").path
        let sqlite = try Store.sqlite(at: path)
        let sqliteOther = try Store.sqlite(at: path)
        try await createCounter(sqlite)
        lines.append(describe("SQLite, same store", try await latencies(observing: sqlite, writer: sqlite, samples: samples)))
        lines.append(describe("SQLite, another store (data_version poll)", try await latencies(observing: sqlite, writer: sqliteOther, samples: max(1, samples / 2))))
        await sqliteOther.close()
        await sqlite.close()

        if let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] {
            let configuration = try DepotPostgres.PostgresConfiguration(url: url)
            let postgres = try await Store.postgres(configuration)
            let postgresOther = try await Store.postgres(configuration)
            try await createCounter(postgres)
            lines.append(describe("PostgreSQL, same store", try await latencies(observing: postgres, writer: postgres, samples: samples)))
            lines.append(describe("PostgreSQL, another store", try await latencies(observing: postgres, writer: postgresOther, samples: max(1, samples / 2))))
            lines.append(try await triggerCost(postgres, inserts: samples * 10))
            try await postgres.write { db in
                try db.execute(script: "DROP TABLE IF EXISTS observed_counter; DROP TABLE IF EXISTS insert_plain; DROP TABLE IF EXISTS insert_observed")
            }
            await postgresOther.close()
            await postgres.close()
        } else {
            lines.append("PostgreSQL: skipped (DEPOT_POSTGRES_URL is not set; Benchmarks/run sets it)")
        }
        print(lines.joined(separator: "\n"))
    }

    static func createCounter(_ store: Store) async throws {
        try await store.write { db in
            try db.execute(script: "DROP TABLE IF EXISTS observed_counter")
            try db.execute("CREATE TABLE observed_counter (id \(type: .integer) PRIMARY KEY, value \(type: .integer) NOT NULL)")
            try db.execute("INSERT INTO observed_counter VALUES (1, 0)")
            try db.enableObservation(of: ["observed_counter"])
        }
    }

    /// Seconds from each commit's return to the arrival of the value it made.
    static func latencies(observing: Store, writer: Store, samples: Int) async throws -> [Double] {
        let start = try await observing.read { db in try db.fetchOne(Int.self, "SELECT value FROM observed_counter WHERE id = 1") ?? 0 }
        let (arrivals, continuation) = AsyncStream.makeStream(of: (Int, UInt64).self)
        let observer = Task {
            for try await value in observing.observe({ db in
                try db.fetchOne(Int.self, "SELECT value FROM observed_counter WHERE id = 1") ?? 0
            }) {
                continuation.yield((value, DispatchTime.now().uptimeNanoseconds))
            }
        }
        defer { observer.cancel() }
        var iterator = arrivals.makeAsyncIterator()
        // The first value: the observation is live.
        while let (value, _) = await iterator.next(), value != start {}
        var seconds: [Double] = []
        for step in 1...samples {
            let target = start + step
            // From another store, commits would fall in step with SQLite's poll
            // (each right after the poll that delivered the last): spread them.
            if writer !== observing { try await Task.sleep(for: .microseconds(Int.random(in: 0..<100_000))) }
            try await writer.write { db in try db.execute("UPDATE observed_counter SET value = \(target) WHERE id = 1") }
            let committed = DispatchTime.now().uptimeNanoseconds
            while let (value, arrived) = await iterator.next() {
                if value == target {
                    // Negative when the value arrived before `write` returned to its caller.
                    seconds.append((Double(arrived) - Double(committed)) / 1e9)
                    break
                }
            }
        }
        return seconds
    }

    /// One-row inserts, each its own transaction, into a table with Depot's
    /// notify trigger against one without, interleaved in rounds.
    static func triggerCost(_ store: Store, inserts: Int) async throws -> String {
        try await store.write { db in
            try db.execute(script: """
                DROP TABLE IF EXISTS insert_plain; DROP TABLE IF EXISTS insert_observed;
                CREATE TABLE insert_plain (id bigint PRIMARY KEY, title text NOT NULL);
                CREATE TABLE insert_observed (id bigint PRIMARY KEY, title text NOT NULL)
                """)
            try db.enableObservation(of: ["insert_observed"])
        }
        var plain: [Double] = [], observed: [Double] = []
        let rounds = 5, perRound = max(1, inserts / 5)
        var id: Int64 = 0
        for _ in 0..<rounds {
            for (table, into) in [("insert_plain", 0), ("insert_observed", 1)] {
                let started = DispatchTime.now().uptimeNanoseconds
                for _ in 0..<perRound {
                    id += 1
                    let key = id
                    try await store.write { db in
                        try db.execute("INSERT INTO \(ident: table) VALUES (\(key), \("title"))")
                    }
                }
                let perInsert = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 / Double(perRound)
                if into == 0 { plain.append(perInsert) } else { observed.append(perInsert) }
            }
        }
        let (p, o) = (median(plain), median(observed))
        return String(format: "PostgreSQL one-row insert in its own transaction: %.1f µs without the trigger, %.1f µs with it (%.2f×), median of %d rounds of %d",
                      p * 1e6, o * 1e6, o / p, rounds, perRound)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func describe(_ name: String, _ seconds: [Double]) -> String {
        let sorted = seconds.sorted()
        guard !sorted.isEmpty else { return "\(name): no samples" }
        let p99 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        return name.padding(toLength: 45, withPad: " ", startingAt: 0)
            + String(format: " median %8.2f ms   p99 %8.2f ms   max %8.2f ms", median(sorted) * 1e3, p99 * 1e3, (sorted.last ?? 0) * 1e3)
    }
}

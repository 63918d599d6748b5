import Foundation

/// SQLite, every contender interleaved: each repetition runs every contender once,
/// so background load falls on all of them alike.
struct SQLiteSuite {
    let options: Options
    let items: [Item]
    let lookupIDs: [Int64]

    static func allContenders() -> [any SQLiteContender] {
        [RawSQLite(), DepotSQLiteContender(generated: true), DepotSQLiteContender(generated: false), DepotSQLiteContender(builder: true), DepotSQLiteContender(handWritten: true), DepotSQLiteContender(declared: true),
         GRDBContender(codable: false), GRDBContender(codable: true)]
    }

    func contenders() -> [any SQLiteContender] {
        Self.allContenders().filter { options.contender == nil || $0.name.hasPrefix(options.contender ?? "") }
    }

    func run(into report: inout Report) async throws {
        let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
        let expectedLookups = lookupIDs.compactMap { byID[$0] }
        func expectedSum(_ rows: [Item], _ contender: any SQLiteContender, _ dates: DateStorage) -> Int64 {
            let withDates = contender.datePrecision(dates) < 0.000_1
            return rows.reduce(Int64(0)) { $0 &+ checksum($1, withDates: withDates) }
        }
        for storage in [("in memory", nil as String?), ("WAL file", "file")] where options.storage == nil || storage.0 == options.storage {
            for dates in DateStorage.allCases where options.dates == nil || dates.rawValue == options.dates {
                let group = "SQLite \(storage.0), dates as \(dates == .text ? "text" : "REAL seconds")"
                let contenders = contenders()
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-bench-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: folder) }
                var generation = 0
                func reopen(_ contender: any SQLiteContender) async throws {
                    await contender.close()
                    generation += 1
                    try await contender.open(path: storage.1.map { _ in folder.appendingPathComponent("db\(generation).sqlite").path }, dates: dates)
                }

                let insert = try await interleaved(contenders, setUp: reopen) { try await $0.insertAll(items) }
                record(&report, group, "insert \(items.count) rows in one transaction", contenders, insert)

                // Every contender's rows are checked in full, once, outside the timings.
                for contender in contenders {
                    let precision = contender.datePrecision(dates)
                    try verify(try await contender.fetchAll(), items, precision: precision, "\(contender.name) fetchAll")
                    try verify(try await contender.streamItems(), items, precision: precision, "\(contender.name) stream")
                    try verify(try await contender.fetchEachItems(lookupIDs), expectedLookups, precision: precision, "\(contender.name) lookups")
                }

                let fetch = try await interleaved(contenders) { contender in
                    let fetched = try await contender.fetchAll()
                    try check(fetched.count == items.count, "\(contender.name) fetched \(fetched.count) rows")
                }
                record(&report, group, "fetch all rows decoded into [Item]", contenders, fetch)

                let lookups = try await interleaved(contenders) { contender in
                    let sum = try await contender.fetchEach(lookupIDs)
                    try check(sum == expectedSum(expectedLookups, contender, dates), "\(contender.name) found other rows by primary key")
                }
                record(&report, group, "fetch one row by primary key \(lookupIDs.count) times in one read", contenders, lookups)

                let accesses = try await interleaved(contenders) { contender in
                    let sum = try await contender.accessEach(lookupIDs)
                    try check(sum == expectedSum(expectedLookups, contender, dates), "\(contender.name) found other rows in its accesses")
                }
                record(&report, group, "\(lookupIDs.count) read accesses, each holding one lookup", contenders, accesses)

                let stream = try await interleaved(contenders) { contender in
                    let streamed = try await contender.stream()
                    try check(streamed.0 == items.count && streamed.1 == expectedSum(items, contender, dates), "\(contender.name) streamed other rows")
                }
                record(&report, group, "stream all rows through a cursor", contenders, stream)

                for contender in contenders { await contender.close() }
                FileHandle.standardError.write(Data("  done: \(group)\n".utf8))
            }
        }
    }

    private func record(_ report: inout Report, _ group: String, _ scenario: String, _ contenders: [any SQLiteContender], _ samples: [[Double]]) {
        for (contender, seconds) in zip(contenders, samples) {
            report.add(group, scenario, contender.name, contender.isBaseline, seconds)
        }
    }

    /// A warm-up round, then `repetitions` rounds; each round runs every contender once, after an untimed `setUp`.
    private func interleaved(
        _ contenders: [any SQLiteContender],
        setUp: (any SQLiteContender) async throws -> Void = { _ in },
        _ body: (any SQLiteContender) async throws -> Void
    ) async throws -> [[Double]] {
        var samples = Array(repeating: [Double](), count: contenders.count)
        for round in 0...options.repetitions {
            for (index, contender) in contenders.enumerated() {
                try await setUp(contender)
                let start = DispatchTime.now().uptimeNanoseconds
                try await body(contender)
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                if round > 0 { samples[index].append(elapsed) }
            }
        }
        return samples
    }
}

import Foundation

struct SQLiteSuite {
    let options: Options
    let items: [Item]
    let lookupIDs: [Int64]

    func contenders() -> [any SQLiteContender] {
        let all: [any SQLiteContender] = [RawSQLite(), GRDBContender(codable: true), GRDBContender(codable: false), DepotSQLiteContender()]
        return all.filter { options.contender == nil || $0.name.hasPrefix(options.contender!) }
    }

    func run(into report: inout Report) async throws {
        let expectedSum = items.reduce(Int64(0)) { $0 &+ checksum($1) }
        for storage in [("in memory", nil as String?), ("WAL file", "file")] where options.storage == nil || storage.0 == options.storage {
            for dates in DateStorage.allCases where options.dates == nil || dates.rawValue == options.dates {
                let group = "SQLite \(storage.0), dates as \(dates == .text ? "ISO-8601 text" : "REAL seconds")"
                for contender in contenders() {
                    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-bench-\(UUID().uuidString)")
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    defer { try? FileManager.default.removeItem(at: folder) }
                    var generation = 0
                    func path() -> String? {
                        storage.1 == nil ? nil : folder.appendingPathComponent("db\(generation).sqlite").path
                    }
                    let insert = try await measure(repetitions: options.repetitions, setUp: {
                        await contender.close()
                        generation += 1
                        try await contender.open(path: path(), dates: dates)
                    }) {
                        try await contender.insertAll(items)
                    }
                    report.add(group, "insert \(items.count) rows in one transaction", contender.name, contender.isBaseline, insert)

                    var fetched: [Item] = []
                    let fetch = try await measure(repetitions: options.repetitions) { fetched = try await contender.fetchAll() }
                    try verify(fetched, items, precision: contender.datePrecision(dates), contender.name)
                    fetched = []
                    report.add(group, "fetch all rows decoded into [Item]", contender.name, contender.isBaseline, fetch)

                    var sum: Int64 = 0
                    let lookups = try await measure(repetitions: options.repetitions) { sum = try await contender.fetchEach(lookupIDs) }
                    try check(sum != 0, "\(contender.name) found nothing by primary key")
                    report.add(group, "fetch one row by primary key \(lookupIDs.count) times", contender.name, contender.isBaseline, lookups)

                    var streamed = (0, Int64(0))
                    let stream = try await measure(repetitions: options.repetitions) { streamed = try await contender.stream() }
                    try check(streamed.0 == items.count && streamed.1 == expectedSum, "\(contender.name) streamed other rows")
                    report.add(group, "stream all rows through a cursor", contender.name, contender.isBaseline, stream)
                    await contender.close()
                    FileHandle.standardError.write(Data("  done: \(group) / \(contender.name)\n".utf8))
                }
            }
        }
    }
}

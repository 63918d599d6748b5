import Depot
import DepotPostgres
import Foundation
import Logging
import PostgresKit
import PostgresNIO
import SQLKit

func postgresTableSQL(_ dates: DateStorage) -> String {
    let date = dates == .native ? "timestamptz" : "text"
    return """
        DROP TABLE IF EXISTS items;
        CREATE TABLE items (id bigint PRIMARY KEY, title text NOT NULL, notes text NOT NULL, "isCompleted" boolean NOT NULL,
          "isFlagged" boolean NOT NULL, priority bigint, "dueDate" \(date), "listID" bigint NOT NULL, "createdAt" \(date) NOT NULL,
          score double precision NOT NULL)
        """
}

/// PostgreSQL on one connection to a throwaway server on loopback.
struct PostgresSuite {
    let options: Options
    let items: [Item]
    let lookupIDs: [Int64]

    func run(into report: inout Report) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
            throw RawError.failed("the PostgreSQL half needs DEPOT_POSTGRES_URL (Benchmarks/run starts a server)")
        }
        let expectedSum = items.reduce(Int64(0)) { $0 &+ checksum($1) }
        let configuration = try DepotPostgres.PostgresConfiguration(url: url)
        var logger = Logger(label: "bench")
        logger.logLevel = .critical

        for dates in DateStorage.allCases {
            let group = "PostgreSQL, dates as \(dates == .native ? "timestamptz" : "ISO-8601 text")"
            let raw = try RawPostgres(url: url, dates: dates)
            let reset = { try raw.exec(postgresTableSQL(dates)) }

            // Inserts: per row in a transaction, then in bulk.
            let rawRow = try await measure(repetitions: options.repetitions, setUp: reset) { try raw.insertPerRow(items) }
            report.add(group, "insert \(items.count) rows, one statement per row, one transaction", "raw libpq PQexecPrepared", true, rawRow)
            let rawCopy = try await measure(repetitions: options.repetitions, setUp: reset) { try raw.insertCopy(items) }
            report.add(group, "insert \(items.count) rows in bulk", "raw libpq COPY (binary)", true, rawCopy)
            let rawPipeline = try await measure(repetitions: options.repetitions, setUp: reset) { try raw.insertPipelined(items) }
            report.add(group, "insert \(items.count) rows in bulk", "raw libpq pipeline mode", false, rawPipeline)

            // PostgresNIO, one awaited query per row.
            let nio = try await PostgresConnection.connect(
                configuration: .init(host: configuration.host, port: configuration.port, username: configuration.user,
                                     password: configuration.password, database: configuration.database, tls: .disable),
                id: 1, logger: logger)
            let nioRow = try await measure(repetitions: options.repetitions, setUp: reset) {
                try await nio.query("BEGIN", logger: logger)
                for i in items {
                    if dates == .native {
                        try await nio.query("INSERT INTO items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) VALUES (\(i.id), \(i.title), \(i.notes), \(i.isCompleted), \(i.isFlagged), \(i.priority), \(i.dueDate), \(i.listID), \(i.createdAt), \(i.score))", logger: logger)
                    } else {
                        try await nio.query("INSERT INTO items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) VALUES (\(i.id), \(i.title), \(i.notes), \(i.isCompleted), \(i.isFlagged), \(i.priority), \(i.dueDate.map(HandISO.format)), \(i.listID), \(HandISO.format(i.createdAt)), \(i.score))", logger: logger)
                    }
                }
                try await nio.query("COMMIT", logger: logger)
            }
            report.add(group, "insert \(items.count) rows, one statement per row, one transaction", "PostgresNIO query per row", false, nioRow)

            // SQLKit Codable models (timestamptz only: it encodes Date natively).
            let sql = nio.sql(queryLogLevel: nil)
            if dates == .native {
                let kitRow = try await measure(repetitions: options.repetitions, setUp: reset) {
                    try await sql.raw("BEGIN").run()
                    for item in items { try await sql.insert(into: "items").model(item).run() }
                    try await sql.raw("COMMIT").run()
                }
                report.add(group, "insert \(items.count) rows, one statement per row, one transaction", "SQLKit Codable model per row", false, kitRow)
                let kitBatch = try await measure(repetitions: options.repetitions, setUp: reset) {
                    try await sql.raw("BEGIN").run()
                    var index = 0
                    while index < items.count {
                        let chunk = Array(items[index..<min(index + 6000, items.count)])
                        try await sql.insert(into: "items").models(chunk, nilEncodingStrategy: .asNil).run()
                        index += chunk.count
                    }
                    try await sql.raw("COMMIT").run()
                }
                report.add(group, "insert \(items.count) rows in bulk", "SQLKit Codable models (6,000 per statement)", false, kitBatch)
            }

            // Depot.
            var depotConfiguration = configuration
            depotConfiguration.maxConnections = 1
            if dates == .text {
                depotConfiguration.store.encoder.dateEncodingStrategy = .iso8601Text
            }
            let depot = try await Store.postgres(depotConfiguration)
            let depotRow = try await measure(repetitions: options.repetitions, setUp: reset) {
                try await depot.write { db in for item in items { try db.insert(item) } }
            }
            report.add(group, "insert \(items.count) rows, one statement per row, one transaction", "Depot insert per row", false, depotRow)
            let depotBatch = try await measure(repetitions: options.repetitions, setUp: reset) {
                try await depot.write { db in try db.insert(contentsOf: items) }
            }
            report.add(group, "insert \(items.count) rows in bulk", "Depot insert(contentsOf:)", false, depotBatch)

            // The fetches read what the last insert wrote.
            var fetched: [Item] = []
            let fetchScenario = "fetch all rows decoded into [Item]"
            report.add(group, fetchScenario, "raw libpq, binary results", true, try await measure(repetitions: options.repetitions) { fetched = try raw.fetchAll() })
            try verify(fetched, items, precision: 0.000_000_5, "raw libpq")
            report.add(group, fetchScenario, "PostgresNIO tuple decoding", false, try await measure(repetitions: options.repetitions) {
                fetched = []
                let rows = try await nio.query(PostgresQuery(unsafeSQL: RawPostgres.selectSQL), logger: logger)
                if dates == .native {
                    for try await (id, title, notes, c, f, p, due, list, created, score) in rows.decode((Int64, String, String, Bool, Bool, Int?, Date?, Int64, Date, Double).self) {
                        fetched.append(Item(id: id, title: title, notes: notes, isCompleted: c, isFlagged: f, priority: p, dueDate: due, listID: list, createdAt: created, score: score))
                    }
                } else {
                    for try await (id, title, notes, c, f, p, due, list, created, score) in rows.decode((Int64, String, String, Bool, Bool, Int?, String?, Int64, String, Double).self) {
                        fetched.append(Item(id: id, title: title, notes: notes, isCompleted: c, isFlagged: f, priority: p, dueDate: due.map(parseISO), listID: list, createdAt: parseISO(created), score: score))
                    }
                }
            })
            try verify(fetched, items, precision: 0.000_000_5, "PostgresNIO")
            if dates == .native {
                report.add(group, fetchScenario, "SQLKit Codable", false, try await measure(repetitions: options.repetitions) {
                    fetched = try await sql.select().column("*").from("items").all(decoding: Item.self)
                })
                try verify(fetched, items, precision: 0.000_000_5, "SQLKit")
            }
            report.add(group, fetchScenario, "Depot", false, try await measure(repetitions: options.repetitions) {
                fetched = try await depot.read { db in try db.fetchAll(Item.self, "SELECT * FROM items") }
            })
            try verify(fetched, items, precision: 0.000_000_5, "Depot")
            fetched = []

            let byID = "fetch one row by primary key \(lookupIDs.count) times"
            var sum: Int64 = 0
            report.add(group, byID, "raw libpq PQexecPrepared", true, try await measure(repetitions: options.repetitions) { sum = try raw.fetchEach(lookupIDs) })
            let expectedLookups = sum
            report.add(group, byID, "PostgresNIO query per row", false, try await measure(repetitions: options.repetitions) {
                sum = 0
                for id in lookupIDs {
                    let rows = try await nio.query("SELECT id, \"listID\" FROM items WHERE id = \(id)", logger: logger)
                    for try await (a, b) in rows.decode((Int64, Int64).self) { sum &+= a &+ b }
                }
            })
            if dates == .native {
                report.add(group, byID, "SQLKit Codable", false, try await measure(repetitions: options.repetitions) {
                    sum = 0
                    for id in lookupIDs {
                        sum &+= try await sql.select().column("*").from("items").where("id", SQLBinaryOperator.equal, id).first(decoding: Item.self).map(checksum) ?? 0
                    }
                })
                try check(sum == expectedLookups, "SQLKit found other rows")
            }
            report.add(group, byID, "Depot find", false, try await measure(repetitions: options.repetitions) {
                sum = try await depot.read { db in
                    var s: Int64 = 0
                    for id in lookupIDs { s &+= try db.find(Item.self, id: id).map(checksum) ?? 0 }
                    return s
                }
            })
            try check(sum == expectedLookups, "Depot found other rows")

            let streamScenario = "stream all rows through a cursor"
            var streamed = (0, Int64(0))
            report.add(group, streamScenario, "raw libpq single-row mode", true, try await measure(repetitions: options.repetitions) { streamed = try raw.stream() })
            try check(streamed.1 == expectedSum, "raw stream")
            report.add(group, streamScenario, "Depot forEach", false, try await measure(repetitions: options.repetitions) {
                streamed = try await depot.read { db in
                    var count = 0, s: Int64 = 0
                    try db.forEach(Item.self, "SELECT * FROM items") { count += 1; s &+= checksum($0) }
                    return (count, s)
                }
            })
            try check(streamed.0 == items.count && streamed.1 == expectedSum, "Depot stream")

            await depot.close()
            try await nio.close()
            FileHandle.standardError.write(Data("  done: \(group)\n".utf8))
        }
    }
}

func parseISO(_ text: String) -> Date {
    var text = text
    return text.withUTF8 { HandISO.parse($0.baseAddress!, $0.count) }
}

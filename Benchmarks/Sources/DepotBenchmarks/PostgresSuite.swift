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

/// One contender's part in one scenario.
struct Contestant {
    let name: String
    var isBaseline = false
    var setUp: () async throws -> Void = {}
    let body: () async throws -> Void
}

/// A warm-up round, then `repetitions` rounds; each round runs every contender
/// once, after its untimed set-up, so background load falls on all alike.
func interleaved(_ contestants: [Contestant], repetitions: Int) async throws -> [[Double]] {
    var samples = Array(repeating: [Double](), count: contestants.count)
    for round in 0...repetitions {
        for (index, contestant) in contestants.enumerated() {
            try await contestant.setUp()
            let start = DispatchTime.now().uptimeNanoseconds
            try await contestant.body()
            if round > 0 { samples[index].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9) }
        }
    }
    return samples
}

/// PostgreSQL on one connection per contender to a throwaway server on loopback.
struct PostgresSuite {
    let options: Options
    let items: [Item]
    let lookupIDs: [Int64]

    func run(into report: inout Report) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
            throw RawError.failed("the PostgreSQL half needs DEPOT_POSTGRES_URL (Benchmarks/run starts a server)")
        }
        let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
        let expectedLookups = lookupIDs.compactMap { byID[$0] }
        let expectedSum = items.reduce(Int64(0)) { $0 &+ checksum($1) }
        let expectedLookupSum = expectedLookups.reduce(Int64(0)) { $0 &+ checksum($1) }
        let configuration = try DepotPostgres.PostgresConfiguration(url: url)
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        let repetitions = options.repetitions

        for dates in DateStorage.allCases where options.dates == nil || dates.rawValue == options.dates {
            let group = "PostgreSQL, dates as \(dates == .native ? "timestamptz" : "text")"
            func add(_ scenario: String, _ contestants: [Contestant]) async throws {
                let samples = try await interleaved(contestants, repetitions: repetitions)
                for (contestant, seconds) in zip(contestants, samples) {
                    report.add(group, scenario, contestant.name, contestant.isBaseline, seconds)
                }
            }
            let raw = try RawPostgres(url: url, dates: dates)
            let reset = { try raw.exec(postgresTableSQL(dates)) }
            let nio = try await PostgresConnection.connect(
                configuration: .init(host: configuration.host, port: configuration.port, username: configuration.user,
                                     password: configuration.password, database: configuration.database, tls: .disable),
                id: 1, logger: logger)
            let sql = nio.sql(queryLogLevel: nil)
            var depotConfiguration = configuration
            depotConfiguration.maxConnections = 1
            if dates == .text { depotConfiguration.store.encoder.dateEncodingStrategy = .iso8601Text }
            let depot = try await Store.postgres(depotConfiguration)
            depotConfiguration.store.usesGeneratedMapping = false
            let depotCodable = try await Store.postgres(depotConfiguration)

            // Inserts, one statement per row in one transaction.
            var perRow = [
                Contestant(name: "raw libpq PQexecPrepared", isBaseline: true, setUp: reset) { try raw.insertPerRow(items) },
                Contestant(name: "PostgresNIO query per row", setUp: reset) {
                    try await nio.query("BEGIN", logger: logger)
                    for i in items {
                        if dates == .native {
                            try await nio.query("INSERT INTO items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) VALUES (\(i.id), \(i.title), \(i.notes), \(i.isCompleted), \(i.isFlagged), \(i.priority), \(i.dueDate), \(i.listID), \(i.createdAt), \(i.score))", logger: logger)
                        } else {
                            try await nio.query("INSERT INTO items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) VALUES (\(i.id), \(i.title), \(i.notes), \(i.isCompleted), \(i.isFlagged), \(i.priority), \(i.dueDate.map(HandISO.format)), \(i.listID), \(HandISO.format(i.createdAt)), \(i.score))", logger: logger)
                        }
                    }
                    try await nio.query("COMMIT", logger: logger)
                },
                Contestant(name: "Depot insert per row, @Columns", setUp: reset) {
                    try await depot.write { db in for item in items { try db.insert(item) } }
                },
                Contestant(name: "Depot insertWithoutReturning per row, @Columns", setUp: reset) {
                    try await depot.write { db in for item in items { try db.insertWithoutReturning(item) } }
                },
            ]
            if dates == .native {
                perRow.insert(Contestant(name: "SQLKit Codable model per row", setUp: reset) {
                    try await sql.raw("BEGIN").run()
                    for item in items { try await sql.insert(into: "items").model(item).run() }
                    try await sql.raw("COMMIT").run()
                }, at: 2)
            }
            try await add("insert \(items.count) rows, one statement per row, one transaction", perRow)

            var bulk = [
                Contestant(name: "raw libpq COPY, binary", isBaseline: true, setUp: reset) { try raw.insertCopy(items) },
                Contestant(name: "raw libpq COPY, text", setUp: reset) { try raw.insertTextCopy(items) },
                Contestant(name: "raw libpq pipeline mode", setUp: reset) { try raw.insertPipelined(items) },
                Contestant(name: "Depot insert(contentsOf:), @Columns", setUp: reset) {
                    try await depot.write { db in try db.insert(contentsOf: items) }
                },
            ]
            if dates == .native {
                bulk.insert(Contestant(name: "SQLKit Codable models (6,000 per statement)", setUp: reset) {
                    try await sql.raw("BEGIN").run()
                    var index = 0
                    while index < items.count {
                        let chunk = Array(items[index..<min(index + 6000, items.count)])
                        try await sql.insert(into: "items").models(chunk, nilEncodingStrategy: .asNil).run()
                        index += chunk.count
                    }
                    try await sql.raw("COMMIT").run()
                }, at: 3)
            }
            try await add("insert \(items.count) rows in bulk", bulk)

            // The reads read what the last insert wrote; each contender's rows are checked in full first.
            try reset()
            try raw.insertCopy(items)
            let nioFetch: () async throws -> [Item] = {
                var fetched: [Item] = []
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
                return fetched
            }
            let depotFetch: (Store) async throws -> [Item] = { store in try await store.read { db in try db.fetchAll(Item.self, "SELECT * FROM items") } }
            let kitFetch: () async throws -> [Item] = { try await sql.select().column("*").from("items").all(decoding: Item.self) }
            try verify(try raw.fetchAll(), items, precision: 0.000_000_5, "raw libpq")
            try verify(try await nioFetch(), items, precision: 0.000_000_5, "PostgresNIO")
            try verify(try await depotFetch(depot), items, precision: 0.000_000_5, "Depot @Columns")
            try verify(try await depotFetch(depotCodable), items, precision: 0.000_000_5, "Depot Codable")
            if dates == .native { try verify(try await kitFetch(), items, precision: 0.000_000_5, "SQLKit") }
            try verify(try raw.fetchEachItems(lookupIDs), expectedLookups, precision: 0.000_000_5, "raw libpq lookups")
            try verify(try await depot.read { db in try lookupIDs.compactMap { try db.find(Item.self, id: $0) } }, expectedLookups,
                       precision: 0.000_000_5, "Depot lookups")
            var streamedItems: [Item] = []
            try await depot.read { db in
                var rows: [Item] = []
                try db.forEach(Item.self, "SELECT * FROM items") { rows.append($0) }
                return rows
            }.forEach { streamedItems.append($0) }
            try verify(streamedItems, items, precision: 0.000_000_5, "Depot forEach")

            var fetchAll = [
                Contestant(name: "raw libpq, binary results", isBaseline: true) { _ = try raw.fetchAll() },
                Contestant(name: "PostgresNIO tuple decoding") { _ = try await nioFetch() },
                Contestant(name: "Depot, @Columns") { _ = try await depotFetch(depot) },
                Contestant(name: "Depot, Codable") { _ = try await depotFetch(depotCodable) },
            ]
            if dates == .native { fetchAll.append(Contestant(name: "SQLKit Codable") { _ = try await kitFetch() }) }
            try await add("fetch all rows decoded into [Item]", fetchAll)

            /// PostgresNIO's lookups, one query each, as a request would run one.
            func nioLookups(_ ids: [Int64]) async throws -> Int64 {
                var sum: Int64 = 0
                for id in ids {
                    let rows = try await nio.query(PostgresQuery(unsafeSQL: RawPostgres.selectSQL + " WHERE id = $1", binds: { var b = PostgresBindings(); b.append(id); return b }()), logger: logger)
                    if dates == .native {
                        for try await (id, title, notes, c, f, p, due, list, created, score) in rows.decode((Int64, String, String, Bool, Bool, Int?, Date?, Int64, Date, Double).self) {
                            sum &+= checksum(Item(id: id, title: title, notes: notes, isCompleted: c, isFlagged: f, priority: p, dueDate: due, listID: list, createdAt: created, score: score))
                        }
                    } else {
                        for try await (id, title, notes, c, f, p, due, list, created, score) in rows.decode((Int64, String, String, Bool, Bool, Int?, String?, Int64, String, Double).self) {
                            sum &+= checksum(Item(id: id, title: title, notes: notes, isCompleted: c, isFlagged: f, priority: p, dueDate: due.map(parseISO), listID: list, createdAt: parseISO(created), score: score))
                        }
                    }
                }
                return sum
            }

            var lookups = [
                Contestant(name: "raw libpq PQexecPrepared", isBaseline: true) {
                    try check(try raw.fetchEach(lookupIDs) == expectedLookupSum, "raw libpq lookups")
                },
                Contestant(name: "PostgresNIO query per row") {
                    try check(try await nioLookups(lookupIDs) == expectedLookupSum, "PostgresNIO lookups")
                },
                Contestant(name: "Depot find in one read, @Columns") {
                    let sum = try await depot.read { db in
                        var s: Int64 = 0
                        for id in lookupIDs { s &+= try db.find(Item.self, id: id).map { checksum($0) } ?? 0 }
                        return s
                    }
                    try check(sum == expectedLookupSum, "Depot lookups")
                },
            ]
            if dates == .native {
                lookups.append(Contestant(name: "SQLKit Codable") {
                    var sum: Int64 = 0
                    for id in lookupIDs {
                        sum &+= try await sql.select().column("*").from("items").where("id", SQLBinaryOperator.equal, id).first(decoding: Item.self).map { checksum($0) } ?? 0
                    }
                    try check(sum == expectedLookupSum, "SQLKit lookups")
                })
            }
            try await add("fetch one row by primary key \(lookupIDs.count) times", lookups)

            let accessCount = min(lookupIDs.count, 2000)
            let accessIDs = Array(lookupIDs.prefix(accessCount))
            let accessSum = accessIDs.compactMap { byID[$0] }.reduce(Int64(0)) { $0 &+ checksum($1) }
            try await add("\(accessCount) read accesses, each holding one lookup", [
                Contestant(name: "raw libpq PQexecPrepared, autocommit", isBaseline: true) {
                    try check(try raw.fetchEach(accessIDs) == accessSum, "raw libpq lookups")
                },
                Contestant(name: "PostgresNIO, one query per access") {
                    try check(try await nioLookups(accessIDs) == accessSum, "PostgresNIO accesses")
                },
                Contestant(name: "Depot store.read { find }, @Columns") {
                    var sum: Int64 = 0
                    for id in accessIDs { sum &+= try await depot.read { db in try db.find(Item.self, id: id).map { checksum($0) } ?? 0 } }
                    try check(sum == accessSum, "Depot accesses")
                },
            ])

            try await add("stream all rows through a cursor", [
                Contestant(name: "raw libpq single-row mode", isBaseline: true) {
                    let streamed = try raw.stream()
                    try check(streamed.0 == items.count && streamed.1 == expectedSum, "raw stream")
                },
                Contestant(name: "Depot forEach, @Columns") {
                    let streamed = try await depot.read { db in
                        var count = 0, s: Int64 = 0
                        try db.forEach(Item.self, "SELECT * FROM items") { count += 1; s &+= checksum($0) }
                        return (count, s)
                    }
                    try check(streamed.0 == items.count && streamed.1 == expectedSum, "Depot stream")
                },
            ])

            await depot.close()
            await depotCodable.close()
            try await nio.close()
            FileHandle.standardError.write(Data("  done: \(group)\n".utf8))
        }
    }
}

func parseISO(_ text: String) -> Date {
    var text = text
    return text.withUTF8 { HandISO.parse($0.baseAddress!, $0.count) }
}

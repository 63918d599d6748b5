import Depot
import DepotPostgres
import Foundation

/// One PostgreSQL contender's loop for one scenario, for callgrind: the client's
/// instructions (the server's work happens in other processes and is not counted).
enum PostgresCount {
    static let contenders = ["raw libpq", "raw libpq, text COPY", "Depot, @Columns", "Depot, @Columns, insert without returning"]

    static func run(_ scenario: String, _ options: Options) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
            throw RawError.failed("counting PostgreSQL needs DEPOT_POSTGRES_URL")
        }
        let items = Workload.items(options.rows)
        let dates = DateStorage(rawValue: options.dates ?? "native") ?? .native
        let raw = try RawPostgres(url: url, dates: dates)
        var configuration = try DepotPostgres.PostgresConfiguration(url: url)
        configuration.maxConnections = 1
        if dates == .text { configuration.store.encoder.dateEncodingStrategy = .iso8601Text }
        let depot = try await Store.postgres(configuration)
        let isRaw = (options.contender ?? "raw").hasPrefix("raw")
        try raw.exec(postgresTableSQL(dates))
        if scenario == "pgfetch" || scenario == "pgaccess" { try raw.insertCopy(items) }
        // Read accesses: the lookups' keys, each looked up in an access of its own.
        let accessIDs = items.prefix(options.lookups).map(\.id)
        for _ in 0..<options.repetitions {
            switch scenario {
            case "pginsert":
                try raw.exec(postgresTableSQL(dates))
                if isRaw {
                    try raw.insertPerRow(items)
                } else if options.contender?.hasSuffix("without returning") == true {
                    try await depot.write { db in for item in items { try db.insertWithoutReturning(item) } }
                } else {
                    try await depot.write { db in for item in items { try db.insert(item) } }
                }
            case "pgbulk":
                try raw.exec(postgresTableSQL(dates))
                if options.contender == "raw libpq, text COPY" {
                    try raw.insertTextCopy(items)
                } else if isRaw { try raw.insertCopy(items) } else { try await depot.write { db in try db.insert(contentsOf: items) } }
            case "pgfetch":
                let fetched = isRaw ? try raw.fetchAll() : try await depot.read { db in try db.fetchAll(Item.self, "SELECT * FROM items") }
                try check(fetched.count == items.count, "fetched \(fetched.count) rows")
            case "pgaccess":
                var sum: Int64 = 0
                let start = DispatchTime.now().uptimeNanoseconds
                defer {
                    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3
                    if ProcessInfo.processInfo.environment["DEPOT_BENCH_PRINT"] != nil {
                        print(String(format: "%@: %.1f µs per access (%.0f accesses/s)", options.contender ?? "", elapsed / Double(accessIDs.count), Double(accessIDs.count) * 1e6 / elapsed))
                    }
                }
                if isRaw {
                    sum = try raw.fetchEach(accessIDs)
                } else {
                    for id in accessIDs { sum &+= try await depot.read { db in try db.find(Item.self, id: id).map { checksum($0) } ?? 0 } }
                }
                try check(sum != 0, "read accesses found nothing")
            default:
                throw RawError.failed("unknown scenario \(scenario): pginsert, pgbulk, pgfetch, pgaccess")
            }
        }
        await depot.close()
    }
}

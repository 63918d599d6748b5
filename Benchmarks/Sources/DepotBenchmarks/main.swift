import Depot
import DepotPostgres
import Foundation

// depot-benchmarks: Depot side by side with the raw C APIs and the peer libraries,
// in one run. See Benchmarks/README.md.

struct Options {
    var rows = 100_000
    var lookups = 10_000
    var repetitions = 5
    var engines: Set<String> = ["sqlite", "postgres"]
    var memoryProbe: String?
    var path = ""
    var markdown: String?
    var contender: String?
    var storage: String?
    var dates: String?
    var profile: String?

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--rows": rows = Int(iterator.next() ?? "") ?? rows
            case "--lookups": lookups = Int(iterator.next() ?? "") ?? lookups
            case "--repetitions": repetitions = Int(iterator.next() ?? "") ?? repetitions
            case "--only": engines = [iterator.next() ?? ""]
            case "--memory-probe": memoryProbe = iterator.next()
            case "--path": path = iterator.next() ?? ""
            case "--markdown": markdown = iterator.next()
            case "--contender": contender = iterator.next()
            case "--storage": storage = iterator.next()
            case "--dates": dates = iterator.next()
            case "--profile": profile = iterator.next()
            default:
                FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
                exit(2)
            }
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
if let probe = options.memoryProbe {
    try await MemoryProbe.run(probe, rows: options.rows, path: options.path)
    exit(0)
}

func runAll(_ options: Options) async throws {
    var report = Report(options: options)
    let items = Workload.items(options.rows)
    let lookupIDs = (0..<options.lookups).map { Int64(1 + ($0 &* 7919) % options.rows) }
    if options.engines.contains("sqlite") {
        try await SQLiteSuite(options: options, items: items, lookupIDs: lookupIDs).run(into: &report)
        try await MemoryProbe.measure(into: &report, rows: options.rows)
    }
    if options.engines.contains("postgres") {
        try await PostgresSuite(options: options, items: items, lookupIDs: lookupIDs).run(into: &report)
    }
    report.print()
    if let path = options.markdown { try report.markdown().write(toFile: path, atomically: true, encoding: .utf8) }
}

if options.profile == "pginsert", let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] {
    let items = Workload.items(options.rows)
    var configuration = try DepotPostgres.PostgresConfiguration(url: url)
    configuration.maxConnections = 1
    let store = try await Store.postgres(configuration)
    for _ in 0..<options.repetitions {
        try await store.write { db in
            try db.execute(script: SQL(unsafeRaw: postgresTableSQL(.native)))
            for item in items { try db.insert(item) }
        }
    }
    exit(0)
}
if let scenario = options.profile {
    // Only Depot's loop for one scenario, for a profiler: SQLite in memory, text dates.
    let items = Workload.items(options.rows)
    let depot = DepotSQLiteContender()
    try await depot.open(path: nil, dates: .text)
    try await depot.insertAll(items)
    for _ in 0..<options.repetitions {
        switch scenario {
        case "insert":
            await depot.close()
            try await depot.open(path: nil, dates: .text)
            try await depot.insertAll(items)
        case "lookup": _ = try await depot.fetchEach((1...Int64(options.lookups)).map { $0 })
        case "stream": _ = try await depot.stream()
        default: _ = try await depot.fetchAll()
        }
    }
    exit(0)
}
try await runAll(options)

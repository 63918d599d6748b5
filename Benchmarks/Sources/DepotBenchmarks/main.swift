import Depot
import DepotPostgres
import Foundation

// depot-benchmarks: Depot side by side with the raw C APIs and the peer libraries,
// in one run. See Benchmarks/README.md.

struct Options {
    var rows = 100_000
    var lookups = 10_000
    var repetitions = 5
    var engines: Set<String> = ["sqlite", "postgres", "mariadb"]
    var memoryProbe: String?
    var path = ""
    var markdown: String?
    var contender: String?
    var storage: String?
    var dates: String?
    var profile: String?
    var count: String?
    var observation: Int?
    var reminders: Int?
    var remindersCommand: Int?
    var server: Int?
    var sync: Int?
    var liveSync: Int?
    var liveEdits = 1_000

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
            case "--count": count = iterator.next()
            case "--observation": observation = Int(iterator.next() ?? "") ?? 500
            case "--reminders": reminders = Int(iterator.next() ?? "") ?? 50_000
            case "--reminders-command": remindersCommand = Int(iterator.next() ?? "") ?? 50_000
            case "--server": server = Int(iterator.next() ?? "") ?? 64
            case "--sync": sync = Int(iterator.next() ?? "") ?? 10_000
            case "--live-sync": liveSync = Int(iterator.next() ?? "") ?? 50
            case "--live-edits": liveEdits = Int(iterator.next() ?? "") ?? liveEdits
            default:
                FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
                exit(2)
            }
        }
    }
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
    if options.engines.contains("mariadb") {
        try await MariaDBSuite(options: options, items: items, lookupIDs: lookupIDs).run(into: &report)
    }
    report.print()
    if let path = options.markdown { try report.markdown().write(toFile: path, atomically: true, encoding: .utf8) }
}

/// Everything the program does, from a detached task: valgrind cannot run a
/// Swift async main, so the main thread waits on a semaphore instead.
func entry(_ options: Options) async throws {
    if let clients = options.liveSync {
        try await LiveSyncLatency.run(clients: clients, edits: options.liveEdits)
        exit(0)
    }
    if let changes = options.sync {
        try await SyncFigures.run(changes: changes, initial: 50_000)
        try await SyncRemindersFigures.run(changes: changes, initial: 50_000)
        exit(0)
    }
    if let clients = options.server {
        try await ServerThroughput.run(clients: clients, seconds: 10, rounds: 3)
        exit(0)
    }
    if let count = options.reminders {
        try await RemindersAtScale.run(count: count)
        exit(0)
    }
    if let count = options.remindersCommand {
        try await RemindersCommandAtScale.run(count: count)
        exit(0)
    }
    if let samples = options.observation {
        try await ObservationLatency.run(samples: samples)
        exit(0)
    }
    if let probe = options.memoryProbe {
        try await MemoryProbe.run(probe, rows: options.rows, path: options.path)
        exit(0)
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
    if let scenario = options.count, scenario.hasPrefix("pg") {
        try await PostgresCount.run(scenario, options)
        exit(0)
    }
    if options.count == "related" {
        try await RelatedLoading.count(contender: options.contender ?? "Depot, including", repetitions: options.repetitions)
        exit(0)
    }
    if let scenario = options.count ?? options.profile {
        // One contender's loop for one scenario, SQLite in memory, for a profiler or
        // for callgrind (Benchmarks/instructions runs it at two repetition counts and
        // takes the difference, so set-up is not counted).
        let items = Workload.items(options.rows)
        let ids = (0..<options.lookups).map { Int64(1 + ($0 &* 7919) % options.rows) }
        let dates = DateStorage(rawValue: options.dates ?? "text") ?? .text
        let name = options.contender ?? "Depot, @Columns"
        guard let contender = SQLiteSuite.allContenders().first(where: { $0.name.hasPrefix(name) }) else {
            FileHandle.standardError.write(Data("no contender named \(name)\n".utf8))
            exit(2)
        }
        try await contender.open(path: nil, dates: dates)
        if scenario != "insert" { try await contender.insertAll(items) }
        for _ in 0..<options.repetitions {
            switch scenario {
            case "insert":
                await contender.close()
                try await contender.open(path: nil, dates: dates)
                try await contender.insertAll(items)
            case "lookup": _ = try await contender.fetchEach(ids)
            case "access": _ = try await contender.accessEach(ids)
            case "stream": _ = try await contender.stream()
            case "fetch": _ = try await contender.fetchAll()
            default:
                FileHandle.standardError.write(Data("unknown scenario \(scenario): insert, fetch, lookup, access, stream\n".utf8))
                exit(2)
            }
        }
        await contender.close()
        exit(0)
    }
    try await runAll(options)
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        try await entry(options)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
    finished.signal()
}
finished.wait()

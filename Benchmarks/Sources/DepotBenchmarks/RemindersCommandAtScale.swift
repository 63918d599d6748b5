import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders

/// The `reminders` command at scale (`--reminders-command N`, 50,000 in
/// `Benchmarks/run`): the reminders of ``RemindersAtScale``'s seed in an SQLite
/// file and in a PostgreSQL database, and the command run on them as a person
/// runs it, a process of its own (`RemindersBenchCommand`, the command's
/// `main.swift` built beside this program), timed from its start to its exit
/// with its output read from a pipe.
///
/// "A screen" is `--limit 40`, what a terminal of 44 lines shows (the command
/// picks the limit from the terminal's height; a pipe has none). `--all`
/// draws every row; the cost of a row is the difference of the two over the
/// difference of their rows. Each figure is the median of 5 runs after a warm-up.
enum RemindersCommandAtScale {
    struct Case {
        var name: String
        var arguments: [String]
    }

    static let cases: [Case] = [
        Case(name: "view all", arguments: ["view", "all"]),
        Case(name: "view scheduled", arguments: ["view", "scheduled"]),
        Case(name: "search milk", arguments: ["search", "milk"]),
        Case(name: "tagged tag7", arguments: ["tagged", "tag7"]),
        Case(name: "watch all (one drawing)", arguments: ["watch", "all", "--count", "1"]),
    ]

    static func run(count: Int) async throws {
        let command = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("RemindersBenchCommand").path
        guard FileManager.default.isExecutableFile(atPath: command) else {
            throw Failure(description: "no command at \(command): build the benchmarks package whole (swift build -c release)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-reminders-command-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var databases: [(engine: String, argument: String)] = []
        let file = folder.appendingPathComponent("r.sqlite").path
        let sqlite = try Store.sqlite(at: file)
        try await RemindersAtScale.seed(RemindersModel(store: sqlite, now: { RemindersAtScale.now }), sqlite, count: count)
        await sqlite.close()
        databases.append(("SQLite", file))
        if let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] {
            let (store, schema) = try await RemindersAtScale.freshPostgresStore(url: url, prefix: "reminders_command")
            try await RemindersAtScale.seed(RemindersModel(store: store, now: { RemindersAtScale.now }), store, count: count)
            await store.close()
            databases.append(("PostgreSQL", url + (url.contains("?") ? "&" : "?") + "search_path=\(schema)"))
        }

        print("The reminders command at \(count) reminders, release build, its own process: median of 5 runs after a warm-up")
        print("(a screen: --limit 40, what a 44-line terminal shows; every row: --all; per row: the difference over the rows between)")
        print("command".padding(toLength: 26, withPad: " ", startingAt: 0) + "engine      " + "a screen".leftPadded(10) + "every row".leftPadded(11)
              + "rows".leftPadded(8) + "per row".leftPadded(10) + "rows/s".leftPadded(10))
        for (engine, database) in databases {
            for item in cases {
                let screen = try measure(command, item.arguments + ["--limit", "40", "--database", database])
                let every = try measure(command, item.arguments + ["--all", "--database", database])
                let rows = every.lines - screen.lines
                let perRow = rows > 0 ? (every.seconds - screen.seconds) / Double(rows) : 0
                print(item.name.padding(toLength: 26, withPad: " ", startingAt: 0) + engine.padding(toLength: 12, withPad: " ", startingAt: 0)
                      + String(format: "%7.0f ms%8.0f ms", screen.seconds * 1000, every.seconds * 1000)
                      // Too few rows between, and the difference is noise: no cost is claimed.
                      + "\(every.lines)".leftPadded(8) + (perRow > 0 ? String(format: "%7.1f µs", perRow * 1e6) : "-".leftPadded(10))
                      + (perRow > 0 ? String(format: "%10.0f", 1 / perRow) : "-".leftPadded(10)))
            }
        }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The median time of 5 runs of the command after one more, and the lines
    /// it printed (the same in every run, or the run fails).
    static func measure(_ command: String, _ arguments: [String]) throws -> (seconds: Double, lines: Int) {
        var samples: [Double] = []
        var lines: Int?
        for round in 0...5 {
            let started = DispatchTime.now().uptimeNanoseconds
            let output = try runToEnd(command, arguments)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let count = output.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            if let lines, lines != count { throw Failure(description: "\(arguments.joined(separator: " ")): \(count) lines, \(lines) before") }
            lines = count
            if round > 0 { samples.append(elapsed) }
        }
        return (samples.sorted()[samples.count / 2], lines ?? 0)
    }

    /// Runs the command to its exit and returns what it printed; a failure
    /// (any status but 0) is an error with what it said.
    static func runToEnd(_ command: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "reminders \(arguments.joined(separator: " ")) exited with \(process.terminationStatus): \(String(decoding: said, as: UTF8.self))")
        }
        return printed
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

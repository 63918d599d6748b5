import Depot
import DepotSQLite
import Foundation

/// Peak memory of streaming against fetching all, each in a process of its own
/// (so one cannot hide in the other's freed heap), read from getrusage's maxrss.
enum MemoryProbe {
    static func run(_ mode: String, rows: Int) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("depot-memory-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store.sqlite(at: path)
        try await store.write { db in
            try db.execute(SQL(unsafeRaw: itemsTableSQL(.text)))
            try db.insert(contentsOf: Workload.items(rows).lazy)
        }
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let before = Int(usage.ru_maxrss) * 1024
        switch mode {
        case "stream":
            try await store.read { db in
                var count = 0
                try db.forEach(Item.self, "SELECT * FROM items") { _ in count += 1 }
                guard count == rows else { throw RawError.failed("streamed \(count)") }
            }
        case "fetch":
            let all = try await store.read { db in try db.fetchAll(Item.self, "SELECT * FROM items") }
            guard all.count == rows else { throw RawError.failed("fetched \(all.count)") }
        default:
            break
        }
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        print("\(before) \(Int(usage.ru_maxrss) * 1024)")
        await store.close()
    }

    static func measure(into report: inout Report, rows: Int) async throws {
        func probe(_ mode: String) throws -> (Int, Int) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["--memory-probe", mode, "--rows", String(rows)]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let numbers = output.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            guard numbers.count == 2 else { throw RawError.failed("memory probe \(mode) said \(output)") }
            return (numbers[0], numbers[1])
        }
        let empty = try probe("empty"), stream = try probe("stream"), fetch = try probe("fetch")
        let mib = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        report.notes.append("""

            Peak memory (Depot on an SQLite file, \(rows) rows, maxrss of a process of its own):
              no read: \(mib(empty.1)); streaming through a cursor: \(mib(stream.1)) (+\(mib(stream.1 - empty.1)) over no read); fetch all: \(mib(fetch.1)) (+\(mib(fetch.1 - empty.1)))
            """)
    }
}

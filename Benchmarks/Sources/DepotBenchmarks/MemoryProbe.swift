import Depot
import DepotSQLite
import Foundation

/// Peak memory of streaming against fetching all, each in a process of its own
/// (so one cannot hide in the other's freed heap), read from getrusage's maxrss.
enum MemoryProbe {
    /// In a process of its own: `prepare` writes the database; `empty`, `stream`
    /// and `fetch` open it and print the process's peak resident memory after reading.
    static func run(_ mode: String, rows: Int, path: String) async throws {
        if mode == "prepare" {
            let store = try Store.sqlite(at: path)
            try await store.write { db in
                try db.execute(SQL(unsafeRaw: itemsTableSQL(.text)))
                try db.insert(contentsOf: Workload.items(rows))
            }
            await store.close()
            return
        }
        let store = try Store.sqlite(at: path)
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
            _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM items") }
        }
        print(peakResidentBytes())
        await store.close()
    }

    /// The process's peak resident memory. On Linux from /proc's VmHWM: getrusage's
    /// maxrss survives exec, so a child would report its parent's peak.
    static func peakResidentBytes() -> Int {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") {
            return kib * 1024
        }
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int(usage.ru_maxrss) * 1024
    }

    static func measure(into report: inout Report, rows: Int) async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("depot-memory-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        func probe(_ mode: String) throws -> Int {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = ["--memory-probe", mode, "--rows", String(rows), "--path", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw RawError.failed("memory probe \(mode) failed") }
            return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }
        _ = try probe("prepare")
        let empty = try probe("empty"), stream = try probe("stream"), fetch = try probe("fetch")
        let mib = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        let delta = { (bytes: Int) in String(format: "%+.1f MiB", Double(bytes) / 1_048_576) }
        report.notes.append("""

            Peak memory, Depot on an SQLite file of \(rows) rows (peak resident memory, VmHWM, of a process of its own that opens the file and reads):
              opening and counting only: \(mib(empty)); streaming every row through a cursor: \(mib(stream)) (\(delta(stream - empty))); fetching all into [Item]: \(mib(fetch)) (\(delta(fetch - empty)))
            """)
    }
}

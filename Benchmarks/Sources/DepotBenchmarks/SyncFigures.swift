import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation

/// DepotSync's figures: SQLite devices and a PostgreSQL server in one process,
/// through the in-process JSON transport without faults.
enum SyncFigures {
    @Columns
    struct Note: Record, Equatable {
        static let tableName = "notes"
        var id: UUID
        var title: String
        var body: String?
        var rank: Int
    }

    static let tables = [try! SyncedTable(Note.self)]

    static func run(changes: Int, initial: Int) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
            throw RawError.failed("the sync figures need DEPOT_POSTGRES_URL (Benchmarks/run starts a server)")
        }
        let schema = "depot_sync_bench_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await Store.postgres(url: url)
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        let serverStore = try await Store.postgres(url: url + (url.contains("?") ? "&" : "?") + "search_path=\(schema)")
        try await serverStore.write { db in
            try db.execute("CREATE TABLE notes (id uuid PRIMARY KEY, title text NOT NULL, body text, rank bigint NOT NULL)")
            try SyncServer.installSyncServer(in: db)
        }
        let server = SyncServer(store: serverStore, tables: tables)
        let transport = InProcessSyncTransport(server: server, seed: 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func device(_ name: String) async throws -> SyncClient {
            let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
            try await store.write { db in
                try db.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT, rank INTEGER NOT NULL)")
                try db.sync.installReplica(of: tables)
            }
            return SyncClient(store: store, tables: tables, transport: transport)
        }
        let notes = (0..<changes).map { Note(id: UUID(), title: "note \($0)", body: $0 % 3 == 0 ? nil : "body of note \($0)", rank: $0 % 4) }
        let a = try await device("a"), b = try await device("b")
        try await a.store.write { db in try db.insert(contentsOf: notes) }

        print("Sync: SQLite devices and a PostgreSQL server in one process, JSON through the in-process transport, pages of 500 rows")
        var bytes = transport.bytes
        let push = try await timed { try await a.push() }
        let pushBytes = transport.bytes - bytes
        bytes = transport.bytes
        let pull = try await timed { try await b.pull() }
        let pullBytes = transport.bytes - bytes
        print("  \(changes) new rows, device to server (push): \(format(push)) s, \(pushBytes / changes) bytes per change")
        print("  the same rows, server to another device (pull): \(format(pull)) s, \(pullBytes / changes) bytes per change")
        try await b.store.write { db in _ = try db.execute("UPDATE notes SET title = title || ' (edited)'") }
        bytes = transport.bytes
        let editPush = try await timed { try await b.push() }
        let editPull = try await timed { try await a.pull() }
        print("  \(changes) edits back (one column each): push \(format(editPush)) s, pull \(format(editPull)) s, \((transport.bytes - bytes) / (2 * changes)) bytes per change each way")

        // The initial sync of a fresh device.
        let more = (0..<(initial - changes)).map { Note(id: UUID(), title: "more \($0)", body: "x", rank: 1) }
        try await a.store.write { db in try db.insert(contentsOf: more) }
        try await a.push()
        let fresh = try await device("fresh")
        let peak = PeakResident()
        let sampler = Task { while !Task.isCancelled { peak.sample(); try? await Task.sleep(for: .milliseconds(50)) } }
        let initialSync = try await timed { try await fresh.pull() }
        sampler.cancel()
        let count = try await fresh.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM notes") } ?? 0
        print("  initial sync of \(count) rows to a fresh device: \(format(initialSync)) s, resident memory up \(peak.growth / 1_048_576) MiB at most")
        for client in [a, b, fresh] { await client.store.close() }
        await serverStore.close()
        try await admin.write { db in try db.execute("DROP SCHEMA \(ident: schema) CASCADE") }
        await admin.close()
    }

    static func format(_ seconds: Double) -> String { String(format: "%.2f", seconds) }

    static func timed(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    final class PeakResident: @unchecked Sendable {
        private let lock = NSLock()
        private let start = PeakResident.resident()
        private var peak = PeakResident.resident()
        func sample() { let now = Self.resident(); lock.withLock { peak = max(peak, now) } }
        var growth: Int { lock.withLock { peak - start } }
        static func resident() -> Int {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                  let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
            return kilobytes * 1024
        }
    }
}

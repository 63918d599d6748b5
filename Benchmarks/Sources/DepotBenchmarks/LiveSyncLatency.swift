import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation

/// Live sync's delay from an edit to every other device's redraw: `clients`
/// devices syncing continuously (`SyncClient.syncContinuously`), each
/// watching one note through an observation as `reminders watch` does, and an
/// editor device that changes the note `edits` times, each time once every
/// watcher has drawn the last change. The server is PostgreSQL when
/// `DEPOT_POSTGRES_URL` names one, else an SQLite file; devices are SQLite
/// files; the transport is DepotSync's in-process JSON one.
enum LiveSyncLatency {
    /// The sync figures' note and tables.
    typealias Note = SyncFigures.Note
    static let tables = SyncFigures.tables

    /// When each watcher drew each edit.
    final class Arrivals: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [Int: [ContinuousClock.Instant]] = [:]
        private var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        let clients: Int

        init(clients: Int) { self.clients = clients }

        func drew(_ edit: Int, at instant: ContinuousClock.Instant) {
            let done: CheckedContinuation<Void, Never>? = lock.withLock {
                seen[edit, default: []].append(instant)
                guard seen[edit]?.count == clients else { return nil }
                return waiting.removeValue(forKey: edit)
            }
            done?.resume()
        }

        func everyoneDrew(_ edit: Int) async {
            await withCheckedContinuation { continuation in
                let already = lock.withLock { () -> Bool in
                    if seen[edit]?.count == clients { return true }
                    waiting[edit] = continuation
                    return false
                }
                if already { continuation.resume() }
            }
        }

        func instants(_ edit: Int) -> [ContinuousClock.Instant] { lock.withLock { seen[edit] ?? [] } }
    }

    static func run(clients: Int, edits: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-live-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let serverStore: Store
        let engine: String
        if let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] {
            let schema = "depot_live_bench_" + UUID().uuidString.prefix(8).lowercased()
            let admin = try await Store.postgres(url: url)
            try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
            await admin.close()
            serverStore = try await Store.postgres(url: url + (url.contains("?") ? "&" : "?") + "search_path=\(schema)")
            try await serverStore.write { db in
                try db.execute("CREATE TABLE notes (id uuid PRIMARY KEY, title text NOT NULL, body text, rank bigint NOT NULL)")
                try SyncServer.installSyncServer(in: db)
            }
            engine = "PostgreSQL"
        } else {
            serverStore = try Store.sqlite(at: folder.appendingPathComponent("server.sqlite").path)
            try await serverStore.write { db in
                try db.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT, rank INTEGER NOT NULL)")
                try SyncServer.installSyncServer(in: db)
            }
            engine = "SQLite"
        }
        let server = SyncServer(store: serverStore, tables: tables)
        func device(_ name: String) async throws -> SyncClient {
            let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
            try await store.write { db in
                try db.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, title TEXT NOT NULL, body TEXT, rank INTEGER NOT NULL)")
                try db.sync.installReplica(of: tables)
                try db.enableObservation(of: ["notes"])
            }
            return SyncClient(store: store, tables: tables, transport: InProcessSyncTransport(server: server, seed: 1))
        }
        let editor = try await device("editor")
        let note = Note(id: UUID(), title: "edit 0", body: nil, rank: 0)
        try await editor.store.write { db in try db.insert(note) }
        try await editor.sync()
        let arrivals = Arrivals(clients: clients)
        var watchers: [Task<Void, any Error>] = []
        var syncing: [Task<Void, any Error>] = []
        for n in 0..<clients {
            let client = try await device("client\(n)")
            try await client.sync()
            syncing.append(Task { try await client.syncContinuously() })
            watchers.append(Task {
                let titles = client.store.observe { db in try db.fetchOne(String.self, "SELECT title FROM notes") }
                for try await title in titles.removeDuplicates() {
                    if let title, let edit = Int(title.dropFirst("edit ".count)), edit > 0 { arrivals.drew(edit, at: .now) }
                }
            })
        }
        syncing.append(Task { try await editor.syncContinuously() })
        defer {
            for task in watchers + syncing { task.cancel() }
        }
        print("Live sync: \(clients) devices watching one note, \(edits) edits on another device, the server on \(engine), in-process JSON transport")
        var delays: [Double] = []
        delays.reserveCapacity(clients * edits)
        let started = ContinuousClock.now
        for edit in 1...edits {
            let edited = ContinuousClock.now
            try await editor.store.write { db in try db.execute("UPDATE notes SET title = \("edit \(edit)")") }
            await arrivals.everyoneDrew(edit)
            delays += arrivals.instants(edit).map { seconds($0 - edited) }
        }
        let total = seconds(ContinuousClock.now - started)
        delays.sort()
        func percentile(_ p: Double) -> Double { delays[min(delays.count - 1, Int(Double(delays.count) * p))] }
        print("  edit to redraw, over \(delays.count) redraws: p50 \(milliseconds(percentile(0.5))) ms, p90 \(milliseconds(percentile(0.9))) ms, "
              + "p99 \(milliseconds(percentile(0.99))) ms, max \(milliseconds(delays.last ?? 0)) ms; \(String(format: "%.1f", total)) s in all")
        for task in watchers + syncing { task.cancel() }
        await serverStore.close()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }
}

import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Reminders

/// DepotSync's figures on the reminders model: SQLite devices and a
/// PostgreSQL server in one process, through the in-process JSON transport
/// without faults, every write through the model's synced tables (search
/// index kept in step on both sides).
enum SyncRemindersFigures {
    static func run(changes: Int, initial: Int) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
            throw RawError.failed("the sync figures need DEPOT_POSTGRES_URL (Benchmarks/run starts a server)")
        }
        let schema = "depot_sync_bench_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await Store.postgres(url: url)
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        let onServer = RemindersModel(store: try await Store.postgres(url: url + (url.contains("?") ? "&" : "?") + "search_path=\(schema)"))
        try await onServer.migrate()
        try await onServer.enableSync()
        let transport = InProcessSyncTransport(server: try onServer.syncServer(), seed: 1)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func device(_ name: String) async throws -> (RemindersModel, SyncClient) {
            let model = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path))
            try await model.migrate()
            try await model.enableSync()
            return (model, try model.syncClient(transport: transport))
        }
        let (a, aClient) = try await device("a"), (b, bClient) = try await device("b")
        let list = try await a.createList(title: "Groceries")
        let listID = list.id
        let first = Self.reminders(changes, "Task", in: listID)
        try await a.store.write { db in try db.insert(contentsOf: first) }

        print("Sync of the reminders model: SQLite devices and a PostgreSQL server in one process, JSON through the in-process transport, pages of 500 rows")
        var bytes = transport.bytes
        let push = try await SyncFigures.timed { try await aClient.push() }
        let pushBytes = transport.bytes - bytes
        bytes = transport.bytes
        let pull = try await SyncFigures.timed { try await bClient.pull() }
        let pullBytes = transport.bytes - bytes
        print("  \(changes) new reminders, device to server (push): \(SyncFigures.format(push)) s, \(pushBytes / changes) bytes per change")
        print("  the same reminders, server to another device (pull): \(SyncFigures.format(pull)) s, \(pullBytes / changes) bytes per change")
        try await b.store.write { db in _ = try db.execute("UPDATE \"reminders\" SET \"isCompleted\" = NOT \"isCompleted\"") }
        bytes = transport.bytes
        let editPush = try await SyncFigures.timed { try await bClient.push() }
        let editPull = try await SyncFigures.timed { try await aClient.pull() }
        print("  \(changes) edits back (one column each): push \(SyncFigures.format(editPush)) s, pull \(SyncFigures.format(editPull)) s, \((transport.bytes - bytes) / (2 * changes)) bytes per change each way")

        // The initial sync of a fresh device.
        let more = Self.reminders(initial - changes, "More", in: listID)
        try await a.store.write { db in try db.insert(contentsOf: more) }
        try await aClient.push()
        let (fresh, freshClient) = try await device("fresh")
        let peak = SyncFigures.PeakResident()
        let sampler = Task { while !Task.isCancelled { peak.sample(); try? await Task.sleep(for: .milliseconds(20)) } }
        bytes = transport.bytes
        let initialSync = try await SyncFigures.timed { try await freshClient.pull() }
        sampler.cancel()
        let count = try await fresh.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"reminders\"") } ?? 0
        // The last reminder written: a "More" one when there are more, else the last "Task" (completed by the edits).
        let last = initial > changes ? "more \(initial - changes - 1)" : "task \(changes - 1)"
        let found = try await fresh.search(last, includeCompleted: true).details.count
        print("  initial sync of \(count) reminders to a fresh device: \(SyncFigures.format(initialSync)) s, \((transport.bytes - bytes) / max(1, count)) bytes per reminder, "
              + "resident memory up \(peak.growth / 1_048_576) MiB at most (search finds \(found) for \"\(last)\")")
        for model in [a, b, fresh] { await model.store.close() }
        await onServer.store.close()
        try await admin.write { db in try db.execute("DROP SCHEMA \(ident: schema) CASCADE") }
        await admin.close()
    }

    static func reminders(_ count: Int, _ prefix: String, in list: UUID) -> [Reminder] {
        (0..<count).map { index in
            let due: Date? = index % 2 == 0 ? Date(timeIntervalSince1970: 1_790_000_000 + Double(index)) : nil
            let priority: Priority = index % 4 == 0 ? .high : .none
            let notes = index % 3 == 0 ? "" : "notes of \(index)"
            return Reminder(title: "\(prefix) \(index)", notes: notes, priority: priority, dueDate: due, position: index * 1024, remindersListID: list)
        }
    }
}

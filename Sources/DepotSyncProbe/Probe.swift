import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Reminders

// depot-sync-probe: a sync client that never stops, for the tests that kill it
// with SIGKILL at random moments: it writes random notes into its SQLite replica
// and syncs with a server on PostgreSQL, through a transport that loses requests
// and answers. Not a product: only the tests run it.
//
//   depot-sync-probe SQLITE_PATH POSTGRES_URL SEED             (notes)
//   depot-sync-probe reminders SQLITE_PATH POSTGRES_URL SEED   (the reminders model)

@Columns
struct SyncNote: Record, Equatable {
    static let tableName = "syncNotes"
    var id: UUID
    var title: String
    var body: String?
    var rank: Int
}

@main
enum Probe {
    static func main() async {
        endsWithItsParent()
        let arguments = CommandLine.arguments
        let reminders = arguments.count == 5 && arguments[1] == "reminders"
        let rest = Array(arguments.dropFirst(reminders ? 2 : 1))
        guard rest.count == 3, let seed = UInt64(rest[2]) else {
            FileHandle.standardError.write(Data("usage: depot-sync-probe [reminders] SQLITE_PATH POSTGRES_URL SEED\n".utf8))
            exit(2)
        }
        do {
            if reminders {
                try await runReminders(path: rest[0], url: rest[1], seed: seed)
            } else {
                try await run(path: rest[0], url: rest[1], seed: seed)
            }
        } catch {
            FileHandle.standardError.write(Data("depot-sync-probe: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Exits when the process that started the probe is gone (a test process
    /// killed or crashed, which had no chance to stop it), so that no probe
    /// goes on writing and syncing after its test. The parent is asked for on
    /// a thread of its own; a signal on the parent's death (`PR_SET_PDEATHSIG`)
    /// would come when the thread that spawned the probe ends, which in a test
    /// process is any thread of a pool.
    static func endsWithItsParent() {
        let parent = getppid()
        let watcher = Thread {
            while true {
                Thread.sleep(forTimeInterval: 0.2)
                if getppid() != parent { exit(0) }
            }
        }
        watcher.start()
    }

    static func run(path: String, url: String, seed: UInt64) async throws {
        let tables = [try SyncedTable(SyncNote.self)]
        let local = try Store.sqlite(at: path)
        let isNew = try await local.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM sqlite_schema WHERE name = 'depot_sync_state'") } == 0
        if isNew {
            try await local.write { db in
                try db.execute("CREATE TABLE \"syncNotes\" (\"id\" TEXT PRIMARY KEY, \"title\" TEXT NOT NULL, \"body\" TEXT, \"rank\" INTEGER NOT NULL)")
                try db.sync.installReplica(of: tables)
            }
        }
        let server = SyncServer(store: try await Store.postgres(url: url), tables: tables)
        let transport = InProcessSyncTransport(server: server, seed: seed)
        var faults = InProcessSyncTransport.Faults()
        (faults.dropRequest, faults.dropAnswer, faults.duplicate) = (0.1, 0.1, 0.1)
        transport.faults = faults
        let client = SyncClient(store: local, tables: tables, transport: transport)
        // The ids are shared by every probe of a test, so their edits collide.
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % bound
        }
        let ids = (0..<16).map { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", $0)) ?? UUID() }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var step = 0
        while true {
            step += 1
            let id = ids[next(ids.count)], title = "note \(seed % 1000)-\(step)", rank = next(4)
            switch next(10) {
            case 0...3:
                try await local.write { db in
                    if try db.find(SyncNote.self, id: id) == nil { try db.insert(SyncNote(id: id, title: title, body: nil, rank: rank)) }
                    else { _ = try db.execute("UPDATE \"syncNotes\" SET \"title\" = \(title) WHERE \"id\" = \(id.uuidString.lowercased())") }
                }
            case 4...5:
                try await local.write { db in
                    _ = try db.execute("UPDATE \"syncNotes\" SET \"rank\" = \(rank), \"body\" = \(title) WHERE \"id\" = \(id.uuidString.lowercased())")
                }
            case 6:
                try await local.write { db in _ = try db.delete(SyncNote.self, id: id) }
            default:
                do { try await client.sync() } catch is InProcessSyncTransport.Lost {}
            }
        }
    }
}

extension Probe {
    /// A device of the reminders model: random edits through the model, and
    /// syncs through a transport that loses requests and answers, until killed.
    static func runReminders(path: String, url: String, seed: UInt64) async throws {
        let model = RemindersModel(store: try Store.sqlite(at: path))
        try await model.migrate()
        try await model.enableSync()
        let server = try RemindersModel(store: try await Store.postgres(url: url)).syncServer()
        let transport = InProcessSyncTransport(server: server, seed: seed)
        var faults = InProcessSyncTransport.Faults()
        (faults.dropRequest, faults.dropAnswer, faults.duplicate) = (0.05, 0.08, 0.1)
        transport.faults = faults
        var client = try model.syncClient(transport: transport)
        client.pageSize = 7
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % max(1, bound)
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var step = 0
        while true {
            step += 1
            // At a person's pace, more or less: the other devices must keep up.
            try await Task.sleep(for: .milliseconds(20))
            let lists = try await model.lists().compactMap(\.list.number)
            let reminders = try await model.reminders(in: .all).compactMap(\.reminder.number)
            let list = String(lists.isEmpty ? 0 : lists[next(lists.count)])
            let reminder = reminders.isEmpty ? 0 : reminders[next(reminders.count)]
            let tag = ["errand", "urgent", "home"][next(3)]
            do {
                switch next(12) {
                case 0 where next(4) == 0: try await model.createList(title: "Probe \(seed % 1000)-\(step)")
                case 1...3: try await model.addReminder(ReminderDraft(title: "Probe task \(step)", tags: next(2) == 0 ? [tag] : []), to: list)
                case 4: try await model.editReminder(reminder, ReminderDraft(title: "Probe edit \(step)"))
                case 5: try await model.complete(reminder)
                case 6: try await model.deleteReminder(reminder)
                case 7: try await model.tag(reminder, with: [tag])
                case 8: try await model.untag(reminder, from: [tag])
                default:
                    do { try await client.sync() } catch is InProcessSyncTransport.Lost {}
                }
            } catch is RemindersError {
                // A name or number this device does not have: nothing written.
            }
        }
    }
}

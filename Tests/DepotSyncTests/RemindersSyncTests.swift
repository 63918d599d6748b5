import Depot
import DepotPostgres
import DepotSQLite
@testable import DepotSync
import Foundation
import Reminders
import Testing
import TestSupport

/// The reminders model on three devices (SQLite files) and a server
/// (PostgreSQL): lists, reminders, tags and links made, edited and deleted
/// offline through the model, syncs at random moments through a transport
/// that loses requests and answers and delivers twice. Then everyone syncs
/// until quiet, and every replica and the server hold exactly the state an
/// oracle computes from every write any device made, by the documented rules.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct RemindersSyncTests {
    /// Keys a seed replays.
    final class Keys: @unchecked Sendable {
        private let lock = NSLock()
        private var generator: SeededGenerator
        init(seed: UInt64) { generator = SeededGenerator(seed: seed) }
        func next() -> UUID {
            lock.withLock {
                var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
                bytes[6] = bytes[6] & 0x0F | 0x40
                bytes[8] = bytes[8] & 0x3F | 0x80
                return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                   bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            }
        }
    }

    /// The oracle: every row state any device held, merged by the rules.
    struct Oracle {
        var rows: [String: [String: SyncRow]] = [:]

        mutating func absorb(_ changes: [SyncChange]) {
            for change in changes { rows[change.table, default: [:]][change.key, default: SyncRow()].merge(change.row) }
        }

        /// What every table must hold: the rows that exist and whose parents are in their tables.
        func visible(_ tables: [SyncedTable]) -> [String: [String: [String: Value]]] {
            var result: [String: [String: [String: Value]]] = [:]
            for table in tables {   // parents come first
                var shown: [String: [String: Value]] = [:]
                for (key, row) in rows[table.name] ?? [:] where row.exists {
                    let values = row.registers.mapValues(\.value)
                    let parentsShown = table.parents.allSatisfy { parent in
                        guard let value = values[parent.column], value != .null else { return true }
                        return result[parent.table]?[SyncKey.text(value)] != nil
                    }
                    if parentsShown { shown[key] = values.filter { table.columns.contains($0.key) } }
                }
                result[table.name] = shown
            }
            return result
        }
    }

    /// What the tables of a store hold, through the mapping.
    static func tablesOf(_ store: Store, _ tables: [SyncedTable]) async throws -> [String: [String: [String: Value]]] {
        try await store.read { db in
            var result: [String: [String: [String: Value]]] = [:]
            for table in tables {
                let keys = try db.fetchAll(String.self, "SELECT \(unsafeRaw: SyncKey.expression(table.keyColumns, row: nil, dialect: db.dialect)) FROM \(ident: table.name)")
                // UUID keys: their texts are never canonically equivalent to one another.
                result[table.name] = Dictionary(try table.read(db, keys).map { ($0.key.text, $0.value) }, uniquingKeysWith: { a, _ in a })
            }
            return result
        }
    }

    /// Instants to the microsecond both engines keep (their doubles may differ in the last bit).
    static func normalized(_ tables: [String: [String: [String: Value]]]) -> [String: [String: [String: Value]]] {
        tables.mapValues { rows in
            rows.mapValues { values in
                values.mapValues { value in
                    if case .date(let date) = value { return .integer(Int64((date.timeIntervalSince1970 * 1_000_000).rounded())) }
                    return value
                }
            }
        }
    }

    @Test func devicesEditingRemindersOfflineConvergeToTheOraclesState() async throws {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let operations = ProcessInfo.processInfo.environment["DEPOT_SYNC_OPERATIONS"].flatMap { Int($0) } ?? 2_000
        print("RemindersSyncTests: seed \(seed), \(operations) operations (replay with DEPOT_SYNC_SEED=\(seed))")
        var g = SeededGenerator(seed: seed)
        let keys = Keys(seed: seed)
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tables = try RemindersModel.syncedTables()

        let onServer = RemindersModel(store: try await PostgresTestServer.freshStore())
        try await onServer.migrate()
        try await onServer.enableSync()
        let transport = InProcessSyncTransport(server: try onServer.syncServer(), seed: seed)
        var faults = InProcessSyncTransport.Faults()
        (faults.dropRequest, faults.dropAnswer, faults.duplicate, faults.late) = (0.05, 0.08, 0.1, 0.05)
        transport.faults = faults

        var devices: [(model: RemindersModel, client: SyncClient)] = []
        for name in ["laptop", "phone", "tablet"] {
            var model = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path))
            model.newID = { keys.next() }
            try await model.migrate()
            try await model.enableSync()
            var client = try model.syncClient(transport: transport)
            client.pageSize = 20   // pushes and pulls of several pages
            devices.append((model, client))
        }
        var oracle = Oracle()
        /// Takes in the rows a device wrote and has not pushed yet (its outbox), as they are now:
        /// every local write is there until a push takes it.
        func absorbWrites(_ index: Int) async throws {
            let changes = try await devices[index].model.store.read { db -> [SyncChange] in
                struct Entry: Decodable { var tbl: String; var row_key: String }
                let entries = try db.fetchAll(Entry.self, "SELECT DISTINCT \"tbl\", \"row_key\" FROM \"depot_sync_outbox\"")
                var changes: [SyncChange] = []
                for table in tables {
                    let keys = entries.filter { $0.tbl == table.name }.map(\.row_key)
                    guard !keys.isEmpty else { continue }
                    let rows = try db.syncRows(table, keys: keys, in: .replica)
                    changes += keys.compactMap { key in rows[ExactText(key)].map { SyncChange(table: table.name, key: key, row: $0) } }
                }
                return changes
            }
            oracle.absorb(changes)
        }
        /// Takes in a store's whole state.
        func absorbAll(_ store: Store) async throws {
            oracle.absorb(try await store.read { db in try db.sync.allChanges(tables) })
        }
        /// The device's hybrid clock.
        func clock(_ store: Store) async throws -> Int64 {
            try await store.read { db in try db.fetchOne(Int64.self, "SELECT \"hlc\" FROM \"depot_sync_state\"") ?? 0 }
        }
        var backwards = 0
        // A device whose clock runs a minute ahead: its edits carry later stamps
        // than anything the others write for a minute, and whoever sees them
        // must still stamp their own later edits after them (a hybrid clock).
        let fastNode = keys.next()
        var fastPushes: Int64 = 0
        func editFromTheFuture(_ step: Int) async throws {
            let server = transport.server
            let target: SyncChange? = try await server.store.read { db in
                let keys = try db.fetchAll(String.self, "SELECT CAST(\"id\" AS TEXT) FROM \"reminders\" ORDER BY \"id\" LIMIT 1")
                guard let key = keys.first, let table = tables.first(where: { $0.name == "reminders" }),
                      let row = try db.syncRows(table, keys: [key], in: .server)[ExactText(key)] else { return nil }
                return SyncChange(table: "reminders", key: key, row: row)
            }
            guard var change = target else { return }
            let ahead = HybridTimestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 60_000, counter: UInt16(step % 1000))
            change.row.registers = ["title": SyncRegister(value: .text("From the future \(step)"), stamp: SyncStamp(time: ahead, node: fastNode))]
            fastPushes += 1
            _ = try await server.handle(SyncPush(client: fastNode, number: fastPushes, changes: [change]))
            oracle.absorb([change])
        }

        // A fourth device in its own process (DepotSyncProbe), killed with SIGKILL
        // at random moments, inside its writes, pushes and pulls, and started again.
        let probePath = folder.appendingPathComponent("probe.sqlite").path
        let schema = try await onServer.store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
        let base = try #require(PostgresTestServer.url)
        let probeURL = base + (base.contains("?") ? "&" : "?") + "search_path=\(schema)"
        var kills = 0
        func startProbe(_ round: Int) async throws -> Process {
            let process = Process()
            process.executableURL = try SyncConvergenceTests.probe()
            process.arguments = ["reminders", probePath, probeURL, String(seed &+ UInt64(round))]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // "ready": migrated, a replica (read on a thread of its own: the probe may take a while).
            let reading = output.fileHandleForReading
            _ = try await ChildProcess.onThreadOfItsOwn { reading.availableData }
            return process
        }
        func probeState() async throws {
            let store = try Store.sqlite(at: probePath)
            try await absorbAll(store)
            await store.close()
        }
        func killProbe(_ process: Process) async throws {
            if process.isRunning { kill(process.processIdentifier, SIGKILL); kills += 1 }
            try await ChildProcess.onThreadOfItsOwn { process.waitUntilExit() }
            // What it had written is in its database: the oracle takes it in.
            try await probeState()
        }
        var probe = try await startProbe(0)

        let titles = ["Groceries", "Work", "Home", "Trip"], tagTitles = ["errand", "Errand", "urgent", "home", "later"]
        var (syncs, lost, refused) = (0, 0, 0)
        for step in 0..<operations {
            let index = Int.random(in: 0..<devices.count, using: &g)
            let (model, client) = devices[index]
            let (lists, reminders) = try await model.store.read { db in
                (try db.fetchAll(Int64.self, "SELECT \"number\" FROM \"remindersLists\" ORDER BY \"number\""),
                 try db.fetchAll(Int64.self, "SELECT \"number\" FROM \"reminders\" ORDER BY \"number\""))
            }
            let list = String(lists.isEmpty ? 0 : g.pick(lists)), reminder = reminders.isEmpty ? 0 : g.pick(reminders)
            let tag = g.pick(tagTitles), title = g.pick(titles)
            let before = try await clock(model.store)
            do {
                switch Int.random(in: 0..<20, using: &g) {
                case 0: try await model.createList(title: title + (g.chance(2) ? "" : " \(step)"))
                case 1: try await model.renameList(list, to: title + " \(step)")
                case 2 where g.chance(3): try await model.deleteList(list)
                case 3...5:
                    try await model.addReminder(ReminderDraft(title: "Task \(step)", priority: g.pick(Priority.allCases),
                                                              tags: g.chance(2) ? [tag] : []), to: list)
                case 6: try await model.editReminder(reminder, ReminderDraft(title: "Edited \(step)", notes: g.chance(2) ? "note \(step)" : nil))
                case 7: try await model.complete(reminder, g.chance(3) ? false : true)
                case 8: try await model.flag(reminder, g.chance(2))
                case 9: try await model.move(reminder, to: list)
                case 10 where g.chance(2): try await model.deleteReminder(reminder)
                case 11: try await model.tag(reminder, with: [tag])
                case 12: try await model.untag(reminder, from: [tag])
                case 13 where g.chance(4): try await model.renameTag(tag, to: g.pick(tagTitles) + "s")
                case 14 where g.chance(4): try await model.deleteTag(tag)
                case 15 where g.chance(8):
                    try await editFromTheFuture(step)
                case 15...19:
                    syncs += 1
                    do { try await client.sync() } catch is InProcessSyncTransport.Lost { lost += 1 }
                default: break
                }
            } catch is RemindersError {
                refused += 1   // a name or number this device does not have (yet): nothing written
            }
            if g.chance(60) {
                try await killProbe(probe)
                probe = try await startProbe(step)
            }
            // A local write stamps what it changes later than every stamp the device held before.
            try await absorbWrites(index)
            // A device's clock never runs backwards, whatever it writes or pulls (the fast device's stamps included).
            if try await clock(model.store) < before { backwards += 1 }
        }
        #expect(backwards == 0, "seed \(seed): a device's clock ran backwards \(backwards) times")
        try await killProbe(probe)
        // The killed device comes back as it was left, and syncs with the others.
        var survivor = RemindersModel(store: try Store.sqlite(at: probePath))
        survivor.newID = { keys.next() }
        devices.append((survivor, try survivor.syncClient(transport: transport)))
        // Quiet: no faults, everyone syncs until nothing is pending and everyone has pulled everything.
        transport.faults = InProcessSyncTransport.Faults()
        for _ in 0..<2 {
            for device in devices { try await device.client.sync() }
        }
        for device in devices {
            #expect(try await device.client.pendingCount() == 0)
            try await absorbAll(device.model.store)
        }
        // Exactly once: every push a device had acknowledged was applied once, retries and duplicates included.
        let pushes = try await transport.server.pushCounts()
        for device in devices {
            let node = try await device.model.store.read { db in try db.sync.node() }
            let pushed = try await device.model.store.read { db in try db.fetchOne(Int64.self, "SELECT \"pushed\" FROM \"depot_sync_state\"") ?? 0 }
            #expect(pushes[node]?.lastPush == pushed && pushes[node]?.applied == pushed,
                    "seed \(seed): \(pushed) pushes acknowledged, the server applied \(String(describing: pushes[node]))")
        }
        let expected = Self.normalized(oracle.visible(tables))
        let server = Self.normalized(try await Self.tablesOf(onServer.store, tables))
        #expect(server == expected, "seed \(seed): the server differs from the oracle")
        for (index, device) in devices.enumerated() {
            let local = Self.normalized(try await Self.tablesOf(device.model.store, tables))
            #expect(local == expected, "seed \(seed): device \(index) differs from the oracle")
            // The model reads the synced rows as its own.
            let open = try await device.model.reminders(in: .all).count
            #expect(open == (expected["reminders"] ?? [:]).values.filter { $0["isCompleted"] == .bool(false) }.count)
        }
        let counts = expected.mapValues(\.count)
        print("RemindersSyncTests: \(syncs) syncs, \(lost) lost in transit, \(refused) refused, \(kills) kills of the probe device, \(transport.lateCount) requests delivered late; at the end \(counts); \(transport.bytes) bytes on the wire")
        #expect(kills >= 5, "seed \(seed): the probe device was killed while running")
        #expect(transport.lateCount > 0, "seed \(seed): requests arrived out of order")
        #expect((counts["reminders"] ?? 0) > 0 && (counts["remindersTags"] ?? 0) > 0, "seed \(seed): the run made reminders and links")
        for device in devices { await device.model.store.close() }
        await onServer.store.close()
    }

    /// The home screen a device watches redraws when a pull brings a
    /// reminder another device added: `reminders watch` keeps up with sync.
    @Test func aWatchedScreenRedrawsWhenAPullBringsAnotherDevicesReminder() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let onServer = RemindersModel(store: try await PostgresTestServer.freshStore())
        try await onServer.migrate()
        try await onServer.enableSync()
        let transport = InProcessSyncTransport(server: try onServer.syncServer(), seed: 1)
        var devices: [(model: RemindersModel, client: SyncClient)] = []
        for name in ["laptop", "phone"] {
            let model = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path))
            try await model.migrate()
            try await model.enableSync()
            devices.append((model, try model.syncClient(transport: transport)))
        }
        let (laptop, phone) = (devices[0], devices[1])
        try await laptop.model.createList(title: "Groceries")
        try await laptop.client.sync()
        try await phone.client.sync()
        let screens = phone.model.watch(.home).makeAsyncIterator()
        guard case .home(let before)? = try await ObservationWait.next(screens) else { Issue.record("a home screen"); return }
        #expect(before.lists.map(\.incompleteCount) == [0])
        try await laptop.model.addReminder(ReminderDraft(title: "Milk", tags: ["errand"]), to: "Groceries")
        try await laptop.client.sync()
        try await phone.client.sync()
        guard case .home(let after)? = try await ObservationWait.next(screens, "the screen after the pull") else { Issue.record("a home screen"); return }
        #expect(after.lists.map(\.incompleteCount) == [1])
        #expect(after.tags.map(\.tag.title) == ["errand"])
        #expect(try await phone.model.search("milk").details.map(\.reminder.title) == ["Milk"], "the pulled reminder is in the phone's search index")
        for device in devices { await device.model.store.close() }
        await onServer.store.close()
    }
}

import Depot
import DepotSQLite
import DepotSync
import DepotTesting
import Foundation

extension SyncHistory {
    /// What a history found wrong; empty when every check held.
    public struct Findings: CustomStringConvertible, Sendable {
        /// Each broken rule, with the seed that replays it.
        public var problems: [String] = []
        /// What the history did: writes, syncs, pulls alone, restores from a copy, shares and unshares, clock jumps, changes dropped by rule,
        /// compactions of the server's log and the deleted rows they forgot.
        public var operations = 0, syncs = 0, pulls = 0, restores = 0, shares = 0, jumps = 0, farJumps = 0, refusedAhead = 0, dropped = 0
        public var compactions = 0, forgotten = 0

        /// No findings yet.
        public init() {}

        /// Adds another history's counts and problems.
        public mutating func add(_ other: Findings) {
            problems += other.problems
            operations += other.operations; syncs += other.syncs; pulls += other.pulls; restores += other.restores
            shares += other.shares; jumps += other.jumps; farJumps += other.farJumps; refusedAhead += other.refusedAhead; dropped += other.dropped
            compactions += other.compactions; forgotten += other.forgotten
        }

        /// What the histories did, in one line.
        public var summary: String {
            "\(operations) operations, \(syncs) syncs, \(pulls) pulls alone, \(restores) restores, \(shares) shares and unshares, "
                + "\(jumps) clock jumps (\(farJumps) a day ahead), \(dropped) changes dropped by rule, "
                + "\(compactions) compactions forgetting \(forgotten) deleted rows"
        }

        /// The first problems, one a line.
        public var description: String { problems.prefix(8).joined(separator: "\n") + (problems.count > 8 ? "\n… \(problems.count - 8) more" : "") }
    }

    /// A device: an account's replica on a file, its snapshot, its write log's lineage.
    final class Device {
        let account: String
        let path: String
        var client: SyncClient
        var lineage = 0
        var snapshot: (path: String, step: Int)?
        var lastSeen: [RowID: RowState] = [:]
        init(account: String, path: String, client: SyncClient) {
            self.account = account
            self.path = path
            self.client = client
        }
    }

    /// Runs one history of `operations` steps from `seed` against a fresh
    /// server (`serverStore`, with the schema and sync tables installed),
    /// devices on files in `folder`; returns what its checks found.
    public static func run(seed: UInt64, operations: Int, serverStore: Store, folder: URL) async throws -> Findings {
        var g = SeededGenerator(seed: seed)
        var findings = Findings()
        let tables = try syncedTables()
        let server = SyncServer(store: serverStore, tables: tables)
        let transport = { (account: String, salt: UInt64) -> InProcessSyncTransport in
            let transport = InProcessSyncTransport(server: server, account: account, seed: seed &+ salt)
            var faults = InProcessSyncTransport.Faults()
            (faults.dropRequest, faults.dropAnswer, faults.duplicate, faults.late) = (0.1, 0.1, 0.1, 0.05)
            transport.faults = faults
            return transport
        }
        var devices: [Device] = []
        for (index, account) in ["a", "a", "b", "b"].enumerated() {
            let path = folder.appendingPathComponent("device\(index).sqlite").path
            let store = try Store.sqlite(at: path)
            try await store.write { db in
                try db.execute(script: SyncHistory.schema)
                try db.sync.installReplica(of: tables)
            }
            var client = SyncClient(store: store, tables: tables, transport: transport(account, UInt64(index)))
            client.pageSize = Int.random(in: 2...6, using: &g)
            devices.append(Device(account: account, path: path, client: client))
        }
        // Keys from small pools, one per account: deleted keys come back, and no account takes another's.
        let folders = ["a": (0..<4).map { _ in UUID(uuid: g.uuid()) }, "b": (0..<3).map { _ in UUID(uuid: g.uuid()) }]
        let items = ["a": (0..<6).map { _ in UUID(uuid: g.uuid()) }, "b": (0..<4).map { _ in UUID(uuid: g.uuid()) }]
        var log: [Write] = []
        let trace = ProcessInfo.processInfo.environment["DEPOT_SYNC_HISTORY_TRACE"] != nil
        var farJumped = Set<Int>()
        var currentStep = -1
        /// The rows compactions forgot, with the latest life forgotten: a write of that life or an earlier one
        /// is superseded by a delete no one remembers, and a later life may start over from 1 on a device that never knew it.
        var compacted: [RowID: Int64] = [:]
        // DEPOT_SYNC_HISTORY_COMPACT=0 puts a sync in place of each compaction: to tell whether a finding needs one.
        let compacting = ProcessInfo.processInfo.environment["DEPOT_SYNC_HISTORY_COMPACT"] != "0"
        func forgotten(_ row: RowID, upTo life: Int64) -> Bool { (compacted[row] ?? -1) >= life }

        /// Runs a write on a device and logs every row it changed, as the replica stamped it.
        func write(_ index: Int, step: Int, _ body: @escaping @Sendable (Database) throws -> Void) async throws {
            let device = devices[index]
            let changed: [(RowID, RowState)]? = try? await device.client.store.write { db in
                let before = try SyncHistory.states(db, server: false)
                try body(db)
                let after = try SyncHistory.states(db, server: false)
                return after.filter { id, state in before[id].map { $0.cl != state.cl || $0.stamps != state.stamps } ?? true }.map { ($0.key, $0.value) }
            }
            for (row, state) in changed ?? [] {
                log.append(Write(device: index, lineage: device.lineage, step: step, row: row, state: state, original: state.stamps))
                if trace {
                    let stamps = state.stamps.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\(state.values[$0.key].map { " " + $0.debugDescription } ?? "")" }
                    print("  wrote \(row) life \(state.cl) \(stamps)")
                }
            }
        }

        @Sendable func visibleFolders(_ db: Database) throws -> [UUID] { try db.fetchAll(UUID.self, "SELECT \"id\" FROM \"syncFolders\" ORDER BY \"id\"") }

        /// A folder of `owned` that one of the sharee's devices has moved one of its `own` items into, the
        /// move not yet on the server (there the item is elsewhere), if any.
        func folderMovedIntoBySharee(_ own: [UUID], of owned: [UUID]) async throws -> String? {
            struct Place: Decodable { var id: UUID; var folderID: UUID }
            let sql: SQL = "SELECT \"id\", \"folderID\" FROM \"syncItems\" WHERE \"id\" IN \(list: own) ORDER BY \"id\""
            let onServer = try await server.store.read { db in try db.fetchAll(Place.self, sql) }
            for device in devices where device.account == "b" {
                for place in try await device.client.store.read({ db in try db.fetchAll(Place.self, sql) }) where owned.contains(place.folderID) {
                    if let there = onServer.first(where: { $0.id == place.id }), there.folderID != place.folderID {
                        return place.folderID.uuidString.lowercased()
                    }
                }
            }
            return nil
        }

        // A world to start from: each account's first device made a folder with an item in it and
        // synced, the owner shared its folder, and the sharee's devices saw it: the rare paths a
        // share opens (moves into a shared folder, unshares under pending moves) begin at once.
        let (ownerFolder, shareeFolder) = (folders["a"]?.first ?? UUID(), folders["b"]?.first ?? UUID())
        let (ownerItem, shareeItem) = (items["a"]?.first ?? UUID(), items["b"]?.first ?? UUID())
        try await write(0, step: -1) { db in
            try db.insert(SyncFolder(id: ownerFolder, title: "F-a"))
            try db.insert(SyncItem(id: ownerItem, folderID: ownerFolder, title: "I-a"))
        }
        try await write(2, step: -1) { db in
            try db.insert(SyncFolder(id: shareeFolder, title: "F-b"))
            try db.insert(SyncItem(id: shareeItem, folderID: shareeFolder, title: "I-b"))
        }
        try await sync(0)
        try await sync(2)
        try? await server.share("syncFolders", key: ownerFolder.uuidString.lowercased(), owner: "a", with: "b")
        try await sync(2)
        try await sync(3)

        for step in 0..<operations {
            currentStep = step
            let index = Int.random(in: 0..<devices.count, using: &g)
            let device = devices[index], account = device.account
            findings.operations += 1
            let operation = Int.random(in: 0..<100, using: &g)
            if trace { print("step \(step): device \(index) operation \(operation), \(log.count) writes logged") }
            switch operation {
            case 0..<10:   // a folder, maybe under a key deleted before
                let id = g.pick(folders[account] ?? []), title = "F\(step)"
                try await write(index, step: step) { db in
                    guard try db.find(SyncFolder.self, id: id) == nil else { return }
                    try db.insert(SyncFolder(id: id, title: title))
                }
            case 10..<25:  // an item in a folder the device sees
                let id = g.pick(items[account] ?? []), title = "I\(step)", pickFolder = Int.random(in: 0..<100, using: &g)
                try await write(index, step: step) { db in
                    let visible = try visibleFolders(db)
                    guard !visible.isEmpty, try db.find(SyncItem.self, id: id) == nil else { return }
                    try db.insert(SyncItem(id: id, folderID: visible[pickFolder % visible.count], title: title))
                }
            case 25..<45:  // one column of an item or a folder
                let title = "E\(step)", pick = Int.random(in: 0..<100, using: &g), folder = g.chance(4)
                try await write(index, step: step) { db in
                    let table = folder ? "syncFolders" : "syncItems"
                    let keys = try db.fetchAll(String.self, "SELECT \"id\" FROM \(ident: table) ORDER BY \"id\"")
                    guard !keys.isEmpty else { return }
                    try db.execute("UPDATE \(ident: table) SET \"title\" = \(title) WHERE \"id\" = \(keys[pick % keys.count])")
                }
            case 45..<55:  // a move to another folder the device sees
                let (pickItem, pickFolder) = (Int.random(in: 0..<100, using: &g), Int.random(in: 0..<100, using: &g))
                // Half of a sharee's moves take one of its own items into a folder shared with it.
                let (own, others) = account == "b" && g.chance(2) ? (items["b"] ?? [], folders["a"] ?? []) : ([], [])
                try await write(index, step: step) { db in
                    var keys = try db.fetchAll(String.self, "SELECT \"id\" FROM \"syncItems\" ORDER BY \"id\"")
                    var visible = try visibleFolders(db)
                    if !own.isEmpty, case let mine = keys.filter({ key in own.contains { $0.uuidString.lowercased() == key } }),
                       case let shared = visible.filter(others.contains), !mine.isEmpty, !shared.isEmpty {
                        (keys, visible) = (mine, shared)
                    }
                    guard !keys.isEmpty, !visible.isEmpty else { return }
                    try db.execute("UPDATE \"syncItems\" SET \"folderID\" = \(visible[pickFolder % visible.count]) WHERE \"id\" = \(keys[pickItem % keys.count])")
                }
            case 55..<57:  // a word, under a key some other key is canonically equivalent to
                let id = g.pick(words[account] ?? []), meaning = "W\(step)", delete = g.chance(3)
                try await write(index, step: step) { db in
                    if try db.find(SyncWord.self, id: id) == nil { try db.insert(SyncWord(id: id, meaning: meaning)) }
                    else if delete { _ = try db.delete(SyncWord.self, id: id) }
                    else { try db.execute("UPDATE \"syncWords\" SET \"meaning\" = \(meaning) WHERE \"id\" = \(id)") }
                }
            case 57..<60:  // a label
                let (pickItem, pickFolder) = (Int.random(in: 0..<100, using: &g), Int.random(in: 0..<100, using: &g))
                try await write(index, step: step) { db in
                    let keys = try db.fetchAll(UUID.self, "SELECT \"id\" FROM \"syncItems\" ORDER BY \"id\"")
                    let visible = try visibleFolders(db)
                    guard !keys.isEmpty, !visible.isEmpty else { return }
                    try db.execute("INSERT INTO \"syncLabels\" VALUES (\(keys[pickItem % keys.count]), \(visible[pickFolder % visible.count])) ON CONFLICT DO NOTHING")
                }
            case 60..<68:  // a delete (a folder's takes its items along)
                let pick = Int.random(in: 0..<100, using: &g), folder = g.chance(4)
                try await write(index, step: step) { db in
                    let table = folder ? "syncFolders" : "syncItems"
                    let keys = try db.fetchAll(String.self, "SELECT \"id\" FROM \(ident: table) ORDER BY \"id\"")
                    guard !keys.isEmpty else { return }
                    try db.execute("DELETE FROM \(ident: table) WHERE \"id\" = \(keys[pick % keys.count])")
                }
            case 66..<72:  // the owner shares a folder it has on the server, or stops sharing one
                let shared = try await server.shares(of: "a", in: "syncFolders").filter { $0.value.contains("b") }.keys.sorted()
                if g.chance(2) {
                    let own = folders["a"] ?? []
                    let onServer = try await server.store.read { db in
                        try db.fetchAll(UUID.self, "SELECT \"id\" FROM \"syncFolders\" WHERE \"id\" IN \(list: own) ORDER BY \"id\"")
                    }.map { $0.uuidString.lowercased() }.filter { !shared.contains($0) }
                    guard !onServer.isEmpty else { break }
                    let key = g.pick(onServer)
                    try await server.share("syncFolders", key: key, owner: "a", with: "b")
                    if trace { print("  shared syncFolders \(key.prefix(13))") }
                } else {
                    guard !shared.isEmpty else { break }
                    var key = g.pick(shared)
                    // Most often the folder a sharee's device has just moved one of its own items into: the
                    // server drops the move, and the eviction that follows must not take the item along.
                    if !g.chance(4), let target = try await folderMovedIntoBySharee(items["b"] ?? [], of: (folders["a"] ?? []).filter { shared.contains($0.uuidString.lowercased()) }) {
                        key = target
                        if trace { print("  a sharee's device moved an item into syncFolders \(key.prefix(13))") }
                    }
                    try await server.unshare("syncFolders", key: key, owner: "a", with: "b")
                    if trace { print("  unshared syncFolders \(key.prefix(13))") }
                }
                findings.shares += 1
            case 72..<75:  // a copy of the device's file, for a restore later
                await device.client.store.close()
                let copy = folder.appendingPathComponent("snapshot\(index).sqlite").path
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: device.path, toPath: copy)
                device.snapshot = (copy, step)
                if trace { print("  copied device \(index)'s file") }
                device.client = SyncClient(store: try Store.sqlite(at: device.path), tables: tables, transport: device.client.transport)
            case 75..<78:  // the device restored from its copy: what it wrote since is gone, for good, with its file
                guard let snapshot = device.snapshot else { continue }
                await device.client.store.close()
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: device.path + suffix) }
                try FileManager.default.copyItem(atPath: snapshot.path, toPath: device.path)
                device.client = SyncClient(store: try Store.sqlite(at: device.path), tables: tables, transport: device.client.transport)
                // Writes made after the copy and never acknowledged are lost with the file; those before it are pending again.
                for i in log.indices where log[i].device == index && log[i].lineage == device.lineage && !log[i].acknowledged && log[i].step > snapshot.step {
                    log[i].dropped = true
                }
                for i in log.indices where log[i].device == index && log[i].lineage == device.lineage { log[i].lineage = device.lineage + 1 }
                device.lineage += 1
                device.lastSeen = [:]
                findings.restores += 1
                if trace { print("  restored device \(index) from its copy of step \(snapshot.step)") }
            case 78..<81:
                // The wall clock jumps ahead, now and then a day (past the drift bound), and back: the clock
                // register moves ahead and the wall clock the capture trigger reads stays where it is, so the
                // device's next writes see a wall clock behind its last stamp, as after a jump back (an HLC
                // never goes back; it counts on from its register).
                let far = g.chance(4)
                let ahead = far ? Int64.random(in: 86_400_000...172_800_000, using: &g) : Int64.random(in: 1_000...120_000, using: &g)
                if far { farJumped.insert(index); findings.farJumps += 1 }
                try await device.client.store.write { db in
                    let now = Int64(Date().timeIntervalSince1970 * 1000)
                    try db.execute("UPDATE \"depot_sync_state\" SET \"hlc\" = max(\"hlc\", \((now + ahead) << 16))")
                }
                findings.jumps += 1
                if trace { print("  device \(index)'s clock jumped \(ahead) ms ahead") }
            case 86..<89:  // the server compacts its log: every row deleted before its version now is forgotten
                // A sync instead with DEPOT_SYNC_HISTORY_COMPACT=0.
                guard compacting else {
                    findings.syncs += 1
                    try await sync(index)
                    continue
                }
                let before = try await server.store.read { db in try SyncHistory.states(db, server: true) }
                let done = try await server.compact(olderThan: .zero)
                let after = try await server.store.read { db in try SyncHistory.states(db, server: true) }
                for (row, state) in before where after[row] == nil { compacted[row] = max(compacted[row] ?? 0, state.cl) }
                findings.compactions += 1
                findings.forgotten += done.tombstones
                if trace { print("  the server compacted before version \(done.horizon), forgetting \(done.tombstones) deleted rows") }
            case 81..<86:  // a pull alone, as a live app pulls when told of a change
                findings.pulls += 1
                do {
                    let report = try await device.client.pull()
                    let dropped = Set(report.dropped.map { RowID(table: $0.table, key: $0.key) })
                    findings.dropped += dropped.count
                    for i in log.indices where log[i].device == index && !log[i].acknowledged && dropped.contains(log[i].row) { log[i].dropped = true }
                    if trace { print("  device \(index) pulled \(report.received) changes") }
                } catch is InProcessSyncTransport.Lost {
                    if trace {
                        let staged = try await device.client.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"depot_sync_inbox\"") } ?? 0
                        print("  device \(index)'s pull was cut off with \(staged) pages staged")
                    }
                } catch {
                    findings.problems.append("seed \(seed): device \(index)'s pull failed: \(error)")
                }
                try await takeRestamps(index)
            default:
                findings.syncs += 1
                try await sync(index)
            }
        }

        /// A write stamped past the drift bound (its device's clock jumped a day ahead) was refused and
        /// stamped again at what the server takes, by a push even if the sync or pull that made it failed
        /// later (a pull pushes first when it starts over, history seed 9115802247171586900): its stamp is
        /// now the device's own register's.
        func takeRestamps(_ index: Int) async throws {
            let device = devices[index]
            let restamped = try await device.client.store.read { db in try SyncHistory.states(db, server: false) }
            let farthest = HybridTimestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 300_000, counter: UInt16.max).rawValue
            // A write lost with its file (a restore from before it) is not what the replica stamped again.
            for i in log.indices where log[i].device == index && log[i].lineage == device.lineage && !log[i].dropped {
                for (column, stamp) in log[i].original where stamp.hlc > farthest {
                    // Stamped again at the server's bound (the last stamp of a millisecond), under the node id
                    // the replica has now: after a restore it may be another than the one that wrote.
                    guard let now = restamped[log[i].row], let held = now.stamps[column], held < stamp,
                          held.node == stamp.node || held.hlc & 0xFFFF == 0xFFFF else { continue }
                    if let current = log[i].state.stamps[column], current.hlc > farthest {
                        log[i].state.stamps[column] = held
                        if trace { print("  device \(index)'s write to \(log[i].row).\(column) (step \(log[i].step)) stamped again: \(stamp) to \(held)") }
                    }
                    // A copy restored from before the refusal stamps the write again, later: each stamp
                    // that holds the write's value in its life is one the write was given (history seed
                    // 2138671920306839971, 300 operations, where the checker knew only the first).
                    if now.cl == log[i].state.cl, SyncHistory.sameIfBothShown(now.values[column], log[i].state.values[column]) {
                        log[i].restamps[column, default: []].insert(held)
                    }
                }
            }
        }

        /// One sync; on success, the writes before it are acknowledged and its reads are checked.
        func sync(_ index: Int, quiet: Bool = false) async throws {
            let device = devices[index]
            if trace {
                let pending = try await device.client.store.read { db in try db.sync.pendingChanges(tables, limit: 1000).changes }
                let state = try await device.client.store.read { db in try db.fetchOne(String.self, "SELECT \"pushed\" || ' ' || \"push_upto\" || ' ' || \"cursor_version\" || ' body ' || coalesce((SELECT \"number\" FROM \"depot_sync_pushing\"), 0) FROM \"depot_sync_state\"") } ?? ""
                print("  device \(index) pending (\(state)): \(pending.map { "\($0.table) \($0.key.prefix(8)) \($0.row.causalLength)" })")
                if let watched = ProcessInfo.processInfo.environment["DEPOT_SYNC_HISTORY_WATCH"] {
                    let rows = try await device.client.store.read { db in
                        try db.fetchAll(String.self, "SELECT \"tbl\" || ' ' || \"row_key\" || ' cl ' || \"cl\" || ' synced ' || \"synced\" FROM \"depot_sync_rows\" WHERE \"row_key\" LIKE \(watched + "%")")
                    }
                    print("    watched: \(rows)")
                }
            }
            var attempt: SyncReport?
            do {
                attempt = try await device.client.sync()
            } catch is InProcessSyncTransport.Lost {
            } catch {
                // A sync that fails for any other reason wedges the device: a finding, not an abort.
                findings.problems.append("seed \(seed): device \(index)'s sync failed: \(error)")
            }
            try await takeRestamps(index)
            guard let report = attempt else { return }
            // A completed sync leaves the device showing what the server shows its account, then.
            if let difference = try await difference(device, from: server) {
                findings.problems.append("seed \(seed): after a completed sync (step \(currentStep)), device \(index) (\(device.account)) differs from the server: \(difference)")
            }
            let dropped = Set(report.dropped.map { RowID(table: $0.table, key: $0.key) })
            findings.dropped += dropped.count
            if trace {
                print("  synced device \(index): sent \(report.sent), received \(report.received), dropped \(dropped.sorted())")
                let states = try await server.store.read { db in try SyncHistory.states(db, server: true) }
                print("  server: \(states.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.cl)" }.joined(separator: ", "))")
            }
            for i in log.indices where log[i].device == index && !log[i].acknowledged && !log[i].dropped {
                if dropped.contains(log[i].row) { log[i].dropped = true } else { log[i].acknowledged = true }
            }
            let (local, visible) = try await (device.client.store.read { db in try SyncHistory.states(db, server: false) },
                                             server.store.read { [account = device.account] db in try SyncHistory.visible(db, account: account) })
            // Read-your-writes: each acknowledged write of this file, or a later one.
            for write in log where write.device == index && write.lineage == device.lineage && write.acknowledged
            && !forgotten(write.row, upTo: write.state.cl) {
                guard let now = local[write.row] else {
                    if visible.contains(write.row) { findings.problems.append("seed \(seed): device \(index) lost its own write to \(write.row) (step \(write.step))") }
                    continue
                }
                if let problem = superseded(write.state, by: now) {
                    findings.problems.append("seed \(seed): device \(index) reads its write to \(write.row) (step \(write.step)) back older: \(problem)")
                }
            }
            // Monotonic reads: no row's life or stamp goes back between syncs.
            // A life a compaction forgot compares with none: a device that never knew it may start the key over.
            for (row, before) in device.lastSeen where !forgotten(row, upTo: before.cl) {
                guard let now = local[row], now.cl == before.cl else {
                    if let now = local[row], now.cl < before.cl { findings.problems.append("seed \(seed): device \(index) saw \(row) go back a life") }
                    continue
                }
                for (column, stamp) in before.stamps where (now.stamps[column].map { $0 < stamp } ?? false) {
                    findings.problems.append("seed \(seed): device \(index) saw \(row).\(column) go back from \(stamp) to \(now.stamps[column].map(String.init(describing:)) ?? "-")")
                }
            }
            device.lastSeen = local
        }

        // Quiet: no faults, everyone syncs until nothing moves.
        for device in devices { (device.client.transport as? InProcessSyncTransport)?.faults = InProcessSyncTransport.Faults() }
        for _ in 0..<3 { for index in devices.indices { try await sync(index, quiet: true) } }
        try await check(seed: seed, log: log, devices: devices, server: server, compacted: compacted, into: &findings)
        // Bounded clocks: nothing on the server past the drift bound, and no device's clock dragged past it by another's.
        let bound = HybridTimestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 300_000, counter: UInt16.max).rawValue
        let farthest = try await server.store.read { db in try db.fetchOne(Int64.self, "SELECT max(\"hlc\") FROM \"depot_sync_server_clocks\"") } ?? 0
        if farthest > bound { findings.problems.append("seed \(seed): the server holds a stamp past the drift bound (\(farthest))") }
        for (index, device) in devices.enumerated() where !farJumped.contains(index) {
            let clock = try await device.client.store.read { db in try db.fetchOne(Int64.self, "SELECT \"hlc\" FROM \"depot_sync_state\"") } ?? 0
            if clock > bound { findings.problems.append("seed \(seed): device \(index)'s clock was dragged past the drift bound by another's") }
        }
        for device in devices { await device.client.store.close() }
        return findings
    }

    /// Whether two values are one, where both are shown (a row kept aside, its parent not in its table, shows none).
    static func sameIfBothShown(_ a: String?, _ b: String?) -> Bool {
        guard let a, let b else { return true }
        return a == b
    }

    /// Whether `now` holds `write` or something later: a later life, or per column a stamp at least as late.
    static func superseded(_ write: RowState, by now: RowState) -> String? {
        if now.cl > write.cl { return nil }
        if now.cl < write.cl { return "life \(now.cl) < \(write.cl)" }
        for (column, stamp) in write.stamps where write.cl % 2 == 1 {
            guard let held = now.stamps[column] else { return "\(column) missing" }
            if held < stamp { return "\(column) \(held) < \(stamp)" }
        }
        return nil
    }

    /// The end state against the log.
    static func check(seed: UInt64, log: [Write], devices: [Device], server: SyncServer, compacted: [RowID: Int64],
                      into findings: inout Findings) async throws {
        let onServer = try await server.store.read { db in try SyncHistory.states(db, server: true) }
        let serverNode = try await server.store.read { db in try db.fetchOne(String.self, "SELECT \"node\" FROM \"depot_sync_server_state\"") } ?? ""
        // No lost write.
        // A write of a life a compaction forgot (that life or an earlier one) is superseded by a delete no one remembers.
        for write in log where write.acknowledged && !write.dropped && (compacted[write.row] ?? -1) < write.state.cl {
            guard let held = onServer[write.row] else {
                findings.problems.append("seed \(seed): lost: device \(write.device)'s write to \(write.row) (step \(write.step)) never reached the server")
                continue
            }
            if let problem = superseded(write.state, by: held) {
                findings.problems.append("seed \(seed): lost: device \(write.device)'s write to \(write.row) (step \(write.step)): \(problem)")
            }
        }
        // No resurrected row, no invented value.
        // A stamp may carry more than one value: a device restored from a copy stamps again what its
        // original stamped after the copy (same node, same clock), and the merge's value order settles it.
        var lives: [RowID: Set<Int64>] = [:], written: [RowID: [String: [Stamp: Set<String>]]] = [:]
        for write in log {
            lives[write.row, default: []].insert(write.state.cl)
            for (column, stamp) in write.state.stamps {
                written[write.row, default: [:]][column, default: [:]][stamp, default: []].insert(write.state.values[column] ?? "")
            }
            for (column, stamps) in write.restamps {
                for stamp in stamps { written[write.row, default: [:]][column, default: [:]][stamp, default: []].insert(write.state.values[column] ?? "") }
            }
        }
        for (row, state) in onServer where state.cl % 2 == 1 {
            if lives[row]?.contains(state.cl) != true {
                findings.problems.append("seed \(seed): resurrected: \(row) is in life \(state.cl), which no device wrote")
            }
            guard state.inTable else { continue }
            for (column, stamp) in state.stamps where stamp.node != serverNode {
                let value = state.values[column] ?? ""
                guard let values = written[row]?[column]?[stamp] else {
                    // The last stamp of a millisecond is what the server gave a device to stamp a refused
                    // write again (its clock ran a day ahead); a device's copy restored from before it
                    // gets its own. It must carry a value that node wrote there.
                    let restamped = stamp.hlc & 0xFFFF == 0xFFFF && (written[row]?[column] ?? [:]).contains { $0.value.contains(value) }
                    if !restamped { findings.problems.append("seed \(seed): invented: \(row).\(column) holds a stamp no device wrote (\(stamp))") }
                    continue
                }
                if !values.contains(value) {
                    findings.problems.append("seed \(seed): \(row).\(column) holds another value than its stamp's write (\(value.debugDescription) at \(stamp); written there: \(values.sorted()))")
                }
            }
        }
        // Convergence: each device shows what the server shows its account.
        for (index, device) in devices.enumerated() {
            if let difference = try await difference(device, from: server) {
                findings.problems.append("seed \(seed): device \(index) (\(device.account)) differs from the server: \(difference)")
            }
            if try await device.client.pendingCount() != 0 { findings.problems.append("seed \(seed): device \(index) still has changes to push") }
        }
    }

    /// How a device's tables differ from what the server shows its account, if they do.
    static func difference(_ device: Device, from server: SyncServer) async throws -> String? {
        let account = device.account
        let (onServer, visible) = try await server.store.read { db in
            try (SyncHistory.states(db, server: true), SyncHistory.visible(db, account: account))
        }
        let local = try await device.client.store.read { db in try SyncHistory.states(db, server: false) }
        // What the account sees, in its tables: a row whose parent it does not see (a label on a shared
        // item that names the sharee's own folder) is kept aside on its devices, as the rules say.
        var expected: [RowID: [String: String]] = [:]
        for table in server.tables {
            for (row, state) in onServer where row.table == table.name && visible.contains(row) && state.inTable {
                let parentsShown = table.parents.allSatisfy { parent in
                    state.values[parent.column].map { expected[RowID(table: parent.table, key: $0)] != nil } ?? true
                }
                if parentsShown { expected[row] = state.values }
            }
        }
        let shown = local.filter(\.value.inTable).mapValues(\.values)
        guard expected != shown else { return nil }
        let missing = expected.keys.filter { shown[$0] != expected[$0] }.sorted().prefix(3)
        let extra = shown.keys.filter { expected[$0] == nil }.sorted().prefix(3)
        if ProcessInfo.processInfo.environment["DEPOT_SYNC_HISTORY_TRACE"] != nil {
            for row in missing + extra {
                let synced = try await device.client.store.read { db in
                    try db.fetchAll(String.self, "SELECT CAST(\"synced\" AS TEXT) || ' ' || CAST(\"cl\" AS TEXT) FROM \"depot_sync_rows\" WHERE \"row_key\" = \(row.key)")
                }
                print("    \(row): server \(String(describing: onServer[row])), device \(String(describing: local[row])), synced and cl \(synced)")
            }
        }
        return "missing or other \(Array(missing)), extra \(Array(extra))"
    }
}

/// A folder: a row shared as a whole, with what is in it.
@Columns
struct SyncFolder: Record, Equatable {
    static let tableName = "syncFolders"
    var id: UUID
    var title: String
}

/// An item in a folder.
@Columns
struct SyncItem: Record, Equatable {
    static let tableName = "syncItems"
    var id: UUID
    var folderID: UUID
    var title: String
}

/// A link between an item and a folder: a key of two parents.
@Columns
struct SyncLabel: Record, Equatable {
    static let tableName = "syncLabels"
    static let primaryKey = ["itemID", "folderID"]
    var itemID: UUID
    var folderID: UUID
}

/// A word keyed by its text, some of which Swift calls equal.
@Columns
struct SyncWord: Record, Equatable {
    static let tableName = "syncWords"
    var id: String
    var meaning: String
}

extension SeededGenerator {
    /// Sixteen random bytes, for a UUID that the seed makes again.
    mutating func uuid() -> uuid_t {
        let (a, b) = (next(), next())
        func byte(_ word: UInt64, _ n: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> UInt64(8 * n)) }
        return (byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), byte(a, 6) & 0x0F | 0x40, byte(a, 7),
                byte(b, 0) & 0x3F | 0x80, byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7))
    }
}

@_spi(Sync) import Depot
import Foundation
import Synchronization

/// A device's side of sync: pushes what its replica captured and pulls what
/// changed on the server, over a ``SyncTransport``.
///
/// ```swift
/// let client = SyncClient(store: local, tables: [try SyncedTable(Reminder.self)], transport: transport)
/// try await client.sync()     // push everything pending, then pull until caught up
/// ```
///
/// A push keeps its number and its outbox range until the server answers, so a
/// retry after a lost answer is recognised and applied once; writes made
/// meanwhile go in the next push. A pull stages pages until it reaches the
/// server's head and applies them in one write, so the replica moves from one
/// server state to a later one, never to half of one, and observations of the
/// replica wake once. Any lost request or answer throws: call `sync()` again;
/// a pull goes on after the pages it had staged.
public struct SyncClient: Sendable {
    /// The replica.
    public let store: Store
    /// The synced tables.
    public let tables: [SyncedTable]
    /// The way to the server.
    public let transport: any SyncTransport
    /// The most rows one push or pull page holds.
    public var pageSize = 500
    /// Runs in the write that applies pulled changes, once per page, after
    /// the page is applied: to keep what the app derives from synced rows
    /// (a search index, a count) in step with them.
    public var afterApplying: (@Sendable (Database, [SyncChange]) throws -> Void)?

    /// A client of a store whose migrations ran `db.sync.installReplica(of:node:)`.
    public init(store: Store, tables: [SyncedTable], transport: any SyncTransport) {
        self.store = store
        self.tables = tables
        self.transport = transport
    }

    struct State: Decodable {
        var node: String
        var pushed: Int64
        var push_upto: Int64
        var cursor_version: Int64
        var cursor_tbl: String
        var cursor_key: String
        /// 1 while a pull starts over (the server compacted past this replica's cursor).
        var resync: Int64 = 0

        enum CodingKeys: String, CodingKey { case node, pushed, push_upto, cursor_version, cursor_tbl, cursor_key, resync }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            node = try container.decode(String.self, forKey: .node)
            pushed = try container.decode(Int64.self, forKey: .pushed)
            push_upto = try container.decode(Int64.self, forKey: .push_upto)
            cursor_version = try container.decode(Int64.self, forKey: .cursor_version)
            cursor_tbl = try container.decode(String.self, forKey: .cursor_tbl)
            cursor_key = try container.decode(String.self, forKey: .cursor_key)
            resync = try container.decodeIfPresent(Int64.self, forKey: .resync) ?? 0
        }
    }

    /// How far ahead of this device's clock a pulled stamp may move its
    /// clock (see `Database.Sync.applyChanges(_:_:maximumDrift:)`).
    public var maximumDrift: Duration = .seconds(300)

    /// Pushes every pending change, then pulls until caught up, and tells
    /// what happened to this device's changes.
    ///
    /// - Returns: what was sent and received, the changes the server dropped
    ///   (to a root no longer shared with the account) and this device's
    ///   values that another device's later edit replaced unseen. What a
    ///   sync decided and could not tell, because it failed after (a lost
    ///   answer to its pull), is kept in the replica and told by the next
    ///   sync that completes; so is what ``push()`` and ``pull()`` called
    ///   alone decided, which they return too.
    @discardableResult
    public func sync() async throws -> SyncReport {
        let tables = self.tables
        try await store.read { db in try db.checkSyncReplica(of: tables) }
        var report = try await push()
        report.received = try await pull().received
        // Told once the whole sync completed: what this one, and any earlier one that failed after it, decided.
        (report.dropped, report.overridden, report.identityRenewed) = try await store.write { db in
            try SyncTables.makeClientTables(db)
            return try db.takeUntold()
        }
        return report
    }

    /// Pushes until the outbox is empty.
    ///
    /// A push the server refuses as too far ahead is stamped again at what it
    /// takes and sent again; one it refuses as coming from a copy of this
    /// device (a restored backup) goes again under a new device identity.
    @discardableResult
    public func push() async throws -> SyncReport {
        let tables = self.tables, pageSize = self.pageSize
        var report = SyncReport()
        var refusedAhead = false
        while true {
            // The push's number, range and body are fixed (and stored) before it is sent,
            // so a retry sends the same push, byte for byte.
            let fixed: (push: SyncPush, body: Data)? = try await store.write { db in
                try SyncTables.makeClientTables(db)
                let state = try Self.state(db)
                guard let node = UUID(uuidString: state.node) else { throw DatabaseError(.misuse, "a sync replica without a node id") }
                struct Pushing: Decodable { var number: Int64; var body: Data }
                if state.push_upto > 0, let pushing = try db.fetchOne(Pushing.self, "SELECT \"number\", \"body\" FROM \(ident: SyncTables.pushing) WHERE \"id\" = 1"),
                   pushing.number == state.pushed + 1 {
                    return (try SyncPush(wireJSON: pushing.body), pushing.body)
                }
                let fixed = state.push_upto > 0 ? state.push_upto : nil
                let (changes, pending) = try db.pendingSyncChanges(tables, limit: pageSize, upTo: fixed)
                // A push in flight whose body went with a refusal (a clock ahead) and
                // whose every row a pull has since forgotten (dropped by rule): it goes
                // empty under its number, so the server's count of this device's pushes
                // moves past it whether it saw that number or not, and the changes made
                // since go in the next push. Fixed on nothing, it sent none of them, ever.
                let upTo = pending > 0 ? pending : fixed ?? 0
                guard upTo > 0 else { return nil }
                if fixed == nil { try db.execute("UPDATE \(ident: SyncTables.state) SET \"push_upto\" = \(upTo) WHERE \"id\" = 1") }
                let push = SyncPush(client: node, number: state.pushed + 1, changes: changes, seen: state.cursor_version,
                                    protocolVersion: SyncSchema.protocolVersion, schema: SyncSchema(tables))
                let body = push.wireJSON()
                try db.insert(into: SyncTables.pushing, columns: ["id", "number", "body"], "VALUES (1, \(push.number), \(body))",
                              onConflict: .update(["id"], setting: ["number", "body"]))
                return (push, body)
            }
            guard let (push, _) = fixed else { return report }
            let answer: SyncPushAnswer
            do {
                answer = try await transport.push(push)
            } catch let refused as SyncPushRefused where refused.reason == .stampAhead && !refusedAhead {
                // This device's clock runs ahead: its pending stamps come back to what the server takes.
                refusedAhead = true
                _ = try await store.write { db in try db.restampPendingSyncChanges(atMost: refused.latestAccepted) }
                continue
            } catch let refused as SyncPushRefused where refused.reason == .deviceCopied {
                let node = UUID()
                try await store.write { db in
                    guard try Self.state(db).node == push.client.uuidString.lowercased() else { return }
                    try db.rotateSyncIdentity(to: node)
                    try db.recordUntold(identityRenewed: true)
                }
                report.identityRenewed = true
                continue
            }
            refusedAhead = false
            let acknowledged: Bool = try await store.write { db in
                let state = try Self.state(db)
                guard state.node == push.client.uuidString.lowercased(), state.pushed + 1 == push.number, state.push_upto > 0 else { return false }
                try db.acknowledgeSyncChanges(upTo: state.push_upto)
                let dropped = Set(answer.droppedRows)
                for table in tables {
                    let taken = push.changes.filter { $0.table == table.name && !dropped.contains(SyncRowID(table: $0.table, key: $0.key)) }
                    try db.requeueForgottenDeletes(of: table.name, pushed: taken, horizon: answer.horizon)
                    try db.markSynced(table.name, taken.map { ($0.key, answer.version) })
                }
                try db.discardDroppedSyncRows(answer.droppedRows, pushedUpTo: state.push_upto, version: answer.version, among: tables)
                try db.recordUntold(dropped: answer.droppedRows, overridden: answer.overridden)
                try db.execute("UPDATE \(ident: SyncTables.state) SET \"pushed\" = \(push.number), \"push_upto\" = 0 WHERE \"id\" = 1")
                try db.execute("DELETE FROM \(ident: SyncTables.pushing)")
                return true
            }
            if acknowledged {
                report.sent += push.changes.count - answer.droppedRows.count
                report.dropped += answer.droppedRows.filter { !report.dropped.contains($0) }
                report.overridden += answer.overridden.filter { !report.overridden.contains($0) }
            }
        }
    }

    /// Pulls pages until the server's head, staging each in the replica (so
    /// memory holds one page, however many there are), then applies them all
    /// in one write with the new cursor.
    @discardableResult
    public func pull() async throws -> SyncReport {
        // A pull that was cut off (a lost answer, a crash) left its pages
        // staged: go on after the last of them, so pulls progress however
        // often requests are lost.
        var (cursor, node, fromStartAt, fromStartHorizon): (SyncCursor, UUID?, Int64?, Int64?) = try await store.read { db in
            let state = try Self.state(db)
            let stored = SyncCursor(version: state.cursor_version, table: state.cursor_tbl, key: state.cursor_key)
            let node = UUID(uuidString: state.node)
            guard let last = try db.fetchOne(Data.self, "SELECT \"page\" FROM \(ident: SyncTables.inbox) ORDER BY \"seq\" DESC LIMIT 1") else { return (stored, node, nil, nil) }
            let staged = try StagedPage(wireJSON: last)
            return (staged.next, node, staged.fromStartAt, staged.fromStartHorizon)
        }
        var report = SyncReport()
        let schema = SyncSchema(tables)
        // A pull from the start forgets the rows it had from the server that it is not sent: first the
        // push in flight is settled, since its rows may be on the server (its answer lost) and deleted since.
        if cursor == .start { try await settlePushInFlight() }
        let (transport, pageSize) = (self.transport, self.pageSize)
        func request(after cursor: SyncCursor, fromStartAt: Int64?) -> SyncPull {
            SyncPull(after: cursor, limit: pageSize, client: node, protocolVersion: SyncSchema.protocolVersion, schema: schema, fromStartAt: fromStartAt)
        }
        // The next page is asked for while this one is staged (a pull only reads on the server): the
        // server's time and the network's overlap the device's.
        var prefetched: (pull: SyncPull, answer: Task<SyncPage, any Error>)?
        do {
            while true {
                let pull = request(after: cursor, fromStartAt: fromStartAt)
                let page: SyncPage
                if let ahead = prefetched, ahead.pull == pull {
                    prefetched = nil
                    page = try await ahead.answer.value
                } else {
                    page = try await transport.pull(pull)
                }
                // A pull from the start during which the server compacted holds staged tombstones the server
                // forgot since, and a later life of such a key would lose to them here: it starts over too.
                let compactedSince = fromStartAt != nil && page.horizon > (fromStartHorizon ?? 0)
                if page.startsOver || compactedSince {
                    // Behind the server's compaction horizon: everything again, then forget what did not come.
                    try await store.write { db in
                        try SyncTables.makeClientTables(db)
                        try db.execute("""
                            UPDATE \(ident: SyncTables.state) SET "cursor_version" = 0, "cursor_tbl" = '', "cursor_key" = '', "resync" = 1 WHERE "id" = 1
                            """)
                        try db.execute("DELETE FROM \(ident: SyncTables.inbox)")
                    }
                    guard cursor != .start else { throw DatabaseError(.misuse, "the sync server told a pull from the start to start over: a server no replica of this version can follow") }
                    (cursor, fromStartAt, fromStartHorizon) = (.start, nil, nil)
                    try await settlePushInFlight()
                    continue
                }
                if cursor == .start { (fromStartAt, fromStartHorizon) = (page.head, page.horizon) }
                // The page's own cursor: the server's order of keys, which Swift's may not share.
                cursor = page.next.version >= cursor.version ? page.next : cursor
                if !page.isCaughtUp {
                    let next = request(after: cursor, fromStartAt: fromStartAt)
                    prefetched = (next, Task { try await transport.pull(next) })
                }
                let staged = StagedPage(changes: page.changes, next: cursor, overridden: page.overridden, fromStartAt: fromStartAt,
                                        horizon: page.horizon, fromStartHorizon: fromStartHorizon).wireJSON()
                try await store.write { db in
                    try db.execute("""
                        INSERT INTO \(ident: SyncTables.inbox) ("seq", "page")
                        VALUES ((SELECT coalesce(max("seq"), 0) + 1 FROM \(ident: SyncTables.inbox)), \(staged))
                        """)
                }
                if page.isCaughtUp { break }
            }
        } catch {
            // A request asked for ahead is cancelled and ends before the pull does: nothing of this pull outlives it.
            prefetched?.answer.cancel()
            _ = try? await prefetched?.answer.value
            throw error
        }
        let (tables, reached, afterApplying, maximumDrift) = (self.tables, cursor, self.afterApplying, self.maximumDrift)
        (report.received, report.overridden, report.dropped) = try await store.write { db in
            try SyncTables.makeClientTables(db)
            let now = try Self.state(db)
            var overridden: [SyncOverride] = [], forgotten: [SyncRowID] = []
            let stored = SyncCursor(version: now.cursor_version, table: now.cursor_tbl, key: now.cursor_key)
            var received = 0
            // Checkpoints only move forward: a slower sync that finished later changes nothing.
            if reached.version > stored.version || (reached.version == stored.version && reached != stored) {
                var sent: Set<SyncRowID> = []
                let pages = try db.fetchAll(Int64.self, "SELECT \"seq\" FROM \(ident: SyncTables.inbox) ORDER BY \"seq\"")
                // The server's horizon first: a later life of a key it forgot is taken as the server took it.
                var horizon: Int64 = 0
                if let last = pages.last, let page = try db.fetchOne(Data.self, "SELECT \"page\" FROM \(ident: SyncTables.inbox) WHERE \"seq\" = \(last)") {
                    horizon = try StagedPage(wireJSON: page).horizon ?? 0
                    try db.forgetCompactedTombstones(before: horizon)
                }
                // Each page is decoded on another thread while the one before it is applied.
                func decoding(_ index: Int) throws -> PageDecoding? {
                    guard index < pages.count else { return nil }
                    let page = try db.fetchOne(Data.self, "SELECT \"page\" FROM \(ident: SyncTables.inbox) WHERE \"seq\" = \(pages[index])")
                    return page.map(PageDecoding.init)
                }
                var next = try decoding(0)
                for index in pages.indices {
                    let current = next
                    next = try decoding(index + 1)
                    guard let staged = try current?.page() else { continue }
                    let changes = staged.changes
                    let fromStart = now.resync == 1 || stored == .start
                    if fromStart { sent.formUnion(changes.lazy.filter { !$0.isEvicted }.map { SyncRowID(table: $0.table, key: $0.key) }) }
                    overridden += (staged.overridden ?? []).filter { !overridden.contains($0) }
                    forgotten += try db.applySyncChanges(changes, tables, maximumDrift: maximumDrift, replacingSettled: fromStart)
                        .filter { !forgotten.contains($0) }
                    // A page staged before the server compacted may hold deletes it has forgotten since, and a
                    // later page a later life of such a key (history seed 6130267861268296540): forgotten here too.
                    if changes.contains(where: { !$0.isEvicted && !$0.row.exists && ($0.version ?? 0) < horizon }) {
                        try db.forgetCompactedTombstones(before: horizon)
                        try db.forgetCompactedTombstones(changes, before: horizon)
                    }
                    try afterApplying?(db, changes)
                    received += changes.count
                }
                if now.resync == 1 || stored == .start {
                    forgotten += try db.forgetUnsentSyncRows(sent: sent, among: tables).filter { !forgotten.contains($0) }
                }
                try db.execute("""
                    UPDATE \(ident: SyncTables.state) SET "cursor_version" = \(reached.version), "cursor_tbl" = \(reached.table),
                        "cursor_key" = \(reached.key), "resync" = 0 WHERE "id" = 1
                    """)
            }
            try db.execute("DELETE FROM \(ident: SyncTables.inbox)")
            try SyncTables.makeClientTables(db)
            try db.recordUntold(dropped: forgotten, overridden: overridden)
            return (received, overridden, forgotten)
        }
        return report
    }

    /// Pushes until the outbox is empty when a push is in flight (sent, its
    /// answer not yet had): its rows are then known to be on the server.
    private func settlePushInFlight() async throws {
        let inFlight = try await store.read { db in try Self.state(db).push_upto > 0 }
        if inFlight { try await push() }
    }

    /// A staged page being decoded off the connection's thread.
    final class PageDecoding: Sendable {
        /// A queue of its own: such a queue always gets a thread, even when
        /// every thread of the global pool is busy or waiting, as the
        /// connection's waits for this decoding.
        private static let queue = DispatchQueue(label: "depot.sync.page-decoding")
        private let result = Mutex<Result<StagedPage, any Error>?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ data: Data) {
            Self.queue.async { [self] in
                let decoded = Result { try StagedPage(wireJSON: data) }
                result.withLock { $0 = decoded }
                done.signal()
            }
        }

        /// Waits for the decoding (CPU work, never I/O) and returns the page.
        func page() throws -> StagedPage {
            done.wait()
            done.signal()
            guard let decoded = result.withLock({ $0 }) else {
                throw DatabaseError(.other, "a staged page of the pull was not decoded")
            }
            return try decoded.get()
        }
    }

    /// A page a pull staged, and where the pull stood after it.
    struct StagedPage: Codable, Sendable {
        var changes: [SyncChange]
        var next: SyncCursor
        /// The device's values that pages replaced (none in a page staged by an earlier version).
        var overridden: [SyncOverride]?
        /// The server's head at the first page, in a pull from the start (``SyncPull/fromStartAt``).
        var fromStartAt: Int64?
        /// The server's compaction horizon (``SyncPage/horizon``).
        var horizon: Int64?
        /// The server's compaction horizon at the first page, in a pull from the start.
        var fromStartHorizon: Int64?
    }

    static func state(_ db: Database) throws -> State {
        guard let state = try db.fetchOne(State.self, "SELECT * FROM \(ident: SyncTables.state) WHERE \"id\" = 1") else {
            throw DatabaseError(.misuse, "this database is no sync replica: db.sync.installReplica(of:) was never run")
        }
        return state
    }

    /// How many changes wait to be pushed.
    public func pendingCount() async throws -> Int {
        try await store.read { db in try db.pendingSyncChangeCount() }
    }
}


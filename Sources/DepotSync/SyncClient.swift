@_spi(Sync) import Depot
import Foundation

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

    /// A client of a store whose migrations ran `installSyncReplica(of:node:)`.
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
    }

    /// Pushes every pending change, then pulls until caught up.
    public func sync() async throws {
        let tables = self.tables
        try await store.read { db in try db.checkSyncReplica(of: tables) }
        try await push()
        try await pull()
    }

    /// Pushes until the outbox is empty.
    public func push() async throws {
        let tables = self.tables, pageSize = self.pageSize
        while true {
            // The push's number and range are fixed (and stored) before it is sent.
            let push: SyncPush? = try await store.write { db in
                let state = try Self.state(db)
                guard let node = UUID(uuidString: state.node) else { throw DatabaseError(.misuse, "a sync replica without a node id") }
                let fixed = state.push_upto > 0 ? state.push_upto : nil
                let (changes, upTo) = try db.pendingSyncChanges(tables, limit: pageSize, upTo: fixed)
                guard upTo > 0 else { return nil }
                if fixed == nil { try db.execute("UPDATE \(ident: SyncTables.state) SET \"push_upto\" = \(upTo) WHERE \"id\" = 1") }
                return SyncPush(client: node, number: state.pushed + 1, changes: changes, seen: state.cursor_version)
            }
            guard let push else { return }
            _ = try await transport.push(push)
            try await store.write { db in
                let state = try Self.state(db)
                guard state.pushed + 1 == push.number, state.push_upto > 0 else { return }
                try db.acknowledgeSyncChanges(upTo: state.push_upto)
                try db.execute("UPDATE \(ident: SyncTables.state) SET \"pushed\" = \(push.number), \"push_upto\" = 0 WHERE \"id\" = 1")
            }
        }
    }

    /// Pulls pages until the server's head, staging each in the replica (so
    /// memory holds one page, however many there are), then applies them all
    /// in one write with the new cursor.
    public func pull() async throws {
        // A pull that was cut off (a lost answer, a crash) left its pages
        // staged: go on after the last of them, so pulls progress however
        // often requests are lost.
        var cursor = try await store.read { db in
            let state = try Self.state(db)
            let stored = SyncCursor(version: state.cursor_version, table: state.cursor_tbl, key: state.cursor_key)
            guard let last = try db.fetchOne(Data.self, "SELECT \"page\" FROM \(ident: SyncTables.inbox) ORDER BY \"seq\" DESC LIMIT 1") else { return stored }
            return max(stored, try JSONDecoder().decode(StagedPage.self, from: last).next)
        }
        while true {
            let page = try await transport.pull(SyncPull(after: cursor, limit: pageSize))
            cursor = max(cursor, page.next)
            let staged = try JSONEncoder().encode(StagedPage(changes: page.changes, next: cursor))
            try await store.write { db in
                try db.execute("""
                    INSERT INTO \(ident: SyncTables.inbox) ("seq", "page")
                    VALUES ((SELECT coalesce(max("seq"), 0) + 1 FROM \(ident: SyncTables.inbox)), \(staged))
                    """)
            }
            if page.isCaughtUp { break }
        }
        let (tables, reached, afterApplying) = (self.tables, cursor, self.afterApplying)
        try await store.write { db in
            let now = try Self.state(db)
            // Checkpoints only move forward: a slower sync that finished later changes nothing.
            if reached > SyncCursor(version: now.cursor_version, table: now.cursor_tbl, key: now.cursor_key) {
                for number in try db.fetchAll(Int64.self, "SELECT \"seq\" FROM \(ident: SyncTables.inbox) ORDER BY \"seq\"") {
                    guard let page = try db.fetchOne(Data.self, "SELECT \"page\" FROM \(ident: SyncTables.inbox) WHERE \"seq\" = \(number)") else { continue }
                    let changes = try JSONDecoder().decode(StagedPage.self, from: page).changes
                    try db.applySyncChanges(changes, tables)
                    try afterApplying?(db, changes)
                }
                try db.execute("""
                    UPDATE \(ident: SyncTables.state) SET "cursor_version" = \(reached.version), "cursor_tbl" = \(reached.table),
                        "cursor_key" = \(reached.key) WHERE "id" = 1
                    """)
            }
            try db.execute("DELETE FROM \(ident: SyncTables.inbox)")
        }
    }

    /// A page a pull staged, and where the pull stood after it.
    struct StagedPage: Codable {
        var changes: [SyncChange]
        var next: SyncCursor
    }

    static func state(_ db: Database) throws -> State {
        guard let state = try db.fetchOne(State.self, "SELECT \"node\", \"pushed\", \"push_upto\", \"cursor_version\", \"cursor_tbl\", \"cursor_key\" FROM \(ident: SyncTables.state) WHERE \"id\" = 1") else {
            throw DatabaseError(.misuse, "this database is no sync replica: installSyncReplica(of:) was never run")
        }
        return state
    }

    /// How many changes wait to be pushed.
    public func pendingCount() async throws -> Int {
        try await store.read { db in try db.pendingSyncChangeCount() }
    }
}


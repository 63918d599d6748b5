@_spi(Sync) import Depot
import Foundation

/// The server of a sync system: it merges pushes into its store (any Depot
/// store; PostgreSQL in production) and serves the rows changed after a
/// client's cursor, in commit order.
///
/// Versions follow commit order: each push takes the next version by updating
/// one counter row, whose lock it holds until it commits, so a push that took
/// a later version commits later, and a pull never passes a push still in
/// flight. Pushes are applied exactly once: a client's push number is recorded
/// in the push's own transaction, and a retried push is answered as a duplicate.
///
/// Conflicts: per column, the later hybrid stamp wins; two writes with the
/// same time from two devices (a tie the stamps cannot order) are settled by
/// the server's order: the one pushed later wins, written again with the
/// server's stamp so every device takes it. A ``SyncResolver`` may settle a
/// conflict otherwise.
public struct SyncServer: Sendable {
    /// The store holding the synced tables and the server's sync tables.
    public let store: Store
    /// The synced tables, parents before their children.
    public let tables: [SyncedTable]
    /// Settles conflicts in Swift, on the server (see ``SyncConflict``).
    public var resolver: SyncResolver?
    /// Runs in the push's transaction after its changes are applied: to keep
    /// what the server derives from synced rows in step with them.
    public var afterApplying: (@Sendable (Database, [SyncChange]) throws -> Void)?

    static let state = "depot_sync_server_state", clients = "depot_sync_server_clients"
    static let pushes = "depot_sync_server_pushes", notices = "depot_sync_server_notices"

    /// The type of a table's or a column's name in the server's tables:
    /// bounded, as the text of every key there (`\(keyType: .text)`), so that
    /// an engine that keys only bounded text (MariaDB) holds their keys, and
    /// a key of five such columns fits its 3,072 bytes. Names are at most 63
    /// bytes on PostgreSQL and 64 characters on MariaDB.
    static let nameType: SQL = "VARCHAR(64)"

    /// How far ahead of the server's clock a pushed stamp may be: a push
    /// with a later one is refused whole (``SyncPushRefused/Reason/stampAhead``),
    /// so no device's clock, however wrong, drags the others' along and wins
    /// every conflict. Five minutes by default.
    public var maximumDrift: Duration = .seconds(300)

    /// The changes applied since the planner's statistics were last refreshed (``refreshStatisticsIfGrown(by:)``).
    let statisticsGrowth = SyncStatisticsGrowth()

    /// A server over a store whose migrations ran ``installSyncServer(in:node:)``.
    public init(store: Store, tables: [SyncedTable], resolver: SyncResolver? = nil) {
        self.store = store
        self.tables = tables
        self.resolver = resolver
    }

    /// Whether the store holds the server's sync tables: ``installSyncServer(in:node:)`` ran.
    public static func isInstalled(in db: Database) throws -> Bool {
        // In a savepoint: a failed statement would otherwise end the caller's transaction on PostgreSQL.
        (try? db.savepoint { db in try db.fetchOne(Int64.self, "SELECT count(*) FROM \(ident: state)") }) != nil
    }

    /// Creates the server's sync tables, in a migration.
    public static func installSyncServer(in db: Database, node: UUID = UUID()) throws {
        try db.execute("""
            CREATE TABLE \(ident: state) ("id" \(type: .integer) PRIMARY KEY, "version" \(type: .integer) NOT NULL,
                "node" \(type: .text) NOT NULL, "hlc" \(type: .integer) NOT NULL)
            """)
        try db.execute("INSERT INTO \(ident: state) VALUES (1, 0, \(node.uuidString.lowercased()), 0)")
        let names = SyncStateTables.server
        try db.execute("""
            CREATE TABLE \(ident: names.rows) ("tbl" \(SyncServer.nameType) NOT NULL, "row_key" \(keyType: .text) NOT NULL, "cl" \(type: .integer) NOT NULL,
                "version" \(type: .integer) NOT NULL, "account" \(keyType: .text) NOT NULL DEFAULT '', "root_tbl" \(SyncServer.nameType) NOT NULL DEFAULT '',
                "root_key" \(keyType: .text) NOT NULL DEFAULT '', "parent" \(keyType: .text) NOT NULL DEFAULT '', PRIMARY KEY ("tbl", "row_key"))
            """)
        try db.execute("CREATE INDEX \(ident: names.rows + "_version") ON \(ident: names.rows) (\"version\", \"tbl\", \"row_key\")")
        try createAccountTables(in: db)
        try db.execute("""
            CREATE TABLE \(ident: names.clocks) ("tbl" \(SyncServer.nameType) NOT NULL, "row_key" \(keyType: .text) NOT NULL, "col" \(SyncServer.nameType) NOT NULL,
                "hlc" \(type: .integer) NOT NULL, "node" \(type: .text) NOT NULL, "version" \(type: .integer) NOT NULL DEFAULT 0,
                PRIMARY KEY ("tbl", "row_key", "col"))
            """)
        try db.execute("""
            CREATE TABLE \(ident: names.hidden) ("tbl" \(SyncServer.nameType) NOT NULL, "row_key" \(keyType: .text) NOT NULL, "registers" \(type: .blob) NOT NULL,
                PRIMARY KEY ("tbl", "row_key"))
            """)
        // `applied` counts the pushes applied: equal to `last_push` when each was applied once.
        try db.execute("""
            CREATE TABLE \(ident: clients) ("client" \(keyType: .text) PRIMARY KEY, "last_push" \(type: .integer) NOT NULL,
                "applied" \(type: .integer) NOT NULL, "account" \(keyType: .text) NOT NULL DEFAULT '')
            """)
        try createPushLog(in: db)
        try enableWaiting(in: db)
        try addHorizon(in: db)
    }

    /// Makes a commit of the version counter heard by every store on the
    /// database (a ``SyncWait`` observes it): on PostgreSQL a
    /// notification, so devices waiting on another server instance hear it.
    static func enableWaiting(in db: Database) throws {
        try db.enableObservation(of: [state])
    }

    /// Brings the sync tables of a server installed by an earlier version up
    /// to date, in a migration (doing it again changes nothing): the
    /// notification that wakes devices waiting for a change (``SyncWait``),
    /// accounts (``addAccounts(in:account:)``), the log of pushes that tells a retried
    /// push from a restored device's, and the stamps' versions that tell
    /// whose value another device's later edit replaced, and the horizon of
    /// compaction (``compact(olderThan:now:)``).
    public static func updateSyncServer(in db: Database) throws {
        try enableWaiting(in: db)
        try addHorizon(in: db)
        if try !hasAccounts(in: db) { try addAccounts(in: db) }
        let hasLog = (try? db.savepoint { db in try db.fetchOne(Int64.self, "SELECT count(*) FROM \(ident: pushes)") }) != nil
        guard !hasLog else { return }
        try db.execute("ALTER TABLE \(ident: SyncStateTables.server.clocks) ADD COLUMN \"version\" \(type: .integer) NOT NULL DEFAULT 0")
        try createPushLog(in: db)
    }

    /// The pushes applied, by device and number, with their content's hash
    /// and their answer (a retry whose answer was lost gets the same one: what
    /// was dropped and replaced included); and the notices of values
    /// replaced, for the devices that wrote them.
    static func createPushLog(in db: Database) throws {
        try db.execute("""
            CREATE TABLE \(ident: pushes) ("client" \(keyType: .text) NOT NULL, "number" \(type: .integer) NOT NULL, "hash" \(type: .text) NOT NULL,
                "answer" \(type: .blob) NOT NULL, PRIMARY KEY ("client", "number"))
            """)
        try db.execute("""
            CREATE TABLE \(ident: notices) ("client" \(keyType: .text) NOT NULL, "version" \(type: .integer) NOT NULL, "tbl" \(SyncServer.nameType) NOT NULL,
                "row_key" \(keyType: .text) NOT NULL, "col" \(SyncServer.nameType) NOT NULL, PRIMARY KEY ("client", "version", "tbl", "row_key", "col"))
            """)
    }

    /// Plans each statement for its own values in this transaction, where
    /// the engine would not: a page looks up hundreds of keys in tables that
    /// grow fast, and a generic plan made while a table was small (its index
    /// for the table name only) reads the whole table for every page.
    static func planForEachPage(_ db: Database) throws {
        try db.planForEachExecution()
    }

    /// The server version of each row's last change.
    static func versions(_ db: Database, _ table: SyncedTable, keys: [String]) throws -> [ExactText: Int64] {
        struct Version: Decodable { var row_key: String; var version: Int64 }
        var versions: [ExactText: Int64] = [:]
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for row in try db.fetchAll(Version.self, "SELECT \"row_key\", \"version\" FROM \(ident: SyncStateTables.server.rows) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                versions[ExactText(row.row_key)] = row.version
            }
        }
        return versions
    }

    /// For each client: the number of its last push and how many pushes were applied (equal when each was applied once).
    public func pushCounts() async throws -> [UUID: (lastPush: Int64, applied: Int64)] {
        struct Counts: Decodable { var client: String; var last_push: Int64; var applied: Int64 }
        let rows = try await store.read { db in try db.fetchAll(Counts.self, "SELECT \"client\", \"last_push\", \"applied\" FROM \(ident: Self.clients)") }
        return Dictionary(rows.compactMap { row in UUID(uuidString: row.client).map { ($0, (row.last_push, row.applied)) } }, uniquingKeysWith: { a, _ in a })
    }

    /// The rows changed after a cursor, in version order, up to the version
    /// committed when the pull began: those `account` may see (its roots and
    /// those shared with it), and the rows it is to forget (a root no longer
    /// shared with it, a row moved out of what it sees).
    ///
    /// A device that sends its ``SyncSchema`` is sent only the tables and
    /// columns it syncs; one that syncs more than the server is refused
    /// (``SyncPushRefused/Reason/deviceNewer``). A device whose cursor is
    /// before the horizon of ``compact(olderThan:now:)`` gets an empty page
    /// that starts over (``SyncPage/startsOver``), or a refusal when its
    /// protocol predates compaction (``SyncPushRefused/Reason/deviceOlder``).
    public func handle(_ pull: SyncPull, account: String = "") async throws -> SyncPage {
        try checkDevice(protocolVersion: pull.protocolVersion, schema: pull.schema)
        var page = try await page(pull, account: account)
        if let schema = pull.schema {
            page.changes = page.changes.compactMap { schema.visible($0) }
            page.overridden = page.overridden.filter { schema.tables[$0.row.table]?.contains($0.column) == true }
        }
        return page
    }

    private func page(_ pull: SyncPull, account: String) async throws -> SyncPage {
        let (tables, maximumDrift) = (self.tables, self.maximumDrift)
        return try await store.read { db in
            try Self.planForEachPage(db)
            let head = try db.fetchOne(Int64.self, "SELECT \"version\" FROM \(ident: Self.state) WHERE \"id\" = 1") ?? 0
            // A device that has nothing (version 0) has nothing to forget; one behind the horizon missed deletes,
            // and so did one pulling from the start since before the horizon moved past its first page.
            let horizon = try Self.horizon(db)
            let behind = pull.fromStartAt.map { $0 < horizon } ?? (pull.after.version > 0 && Self.isBehind(pull.after.version, horizon: horizon))
            if behind {
                try Self.checkCompactionAware(protocolVersion: pull.protocolVersion, maximumDrift: maximumDrift)
                return SyncPage(changes: [], next: .start, head: head, isCaughtUp: false, startsOver: true)
            }
            struct Changed: Decodable { var tbl: String; var row_key: String; var version: Int64; var evicted: Int64 }
            let (after, limit) = (pull.after, max(1, pull.limit))
            let rows = try db.fetchAll(Changed.self, """
                SELECT "tbl", "row_key", "version", 0 AS "evicted" FROM \(ident: SyncStateTables.server.rows) r
                WHERE "version" <= \(head) AND ("version", "tbl", "row_key") > (\(after.version), \(after.table), \(after.key))
                  AND ("account" = \(account) OR EXISTS (SELECT 1 FROM \(ident: SyncAccountTables.shares) s
                       WHERE s."account" = \(account) AND s."root_tbl" = r."root_tbl" AND s."root_key" = r."root_key"))
                ORDER BY "version", "tbl", "row_key" LIMIT \(limit)
                """)
            let evicted = try db.fetchAll(Changed.self, """
                SELECT "tbl", "row_key", "version", 1 AS "evicted" FROM \(ident: SyncAccountTables.evictions)
                WHERE "account" = \(account) AND "version" <= \(head)
                  AND ("version", "tbl", "row_key") > (\(after.version), \(after.table), \(after.key))
                ORDER BY "version", "tbl", "row_key" LIMIT \(limit)
                """)
            let both = (rows + evicted).sorted { ($0.version, $0.tbl, $0.row_key) < ($1.version, $1.tbl, $1.row_key) }
            let changed = Array(both.prefix(limit))
            var changes: [SyncChange] = []
            for table in tables {
                let keys = changed.filter { $0.tbl == table.name && $0.evicted == 0 }.map(\.row_key)
                guard !keys.isEmpty else { continue }
                let states = try db.syncRows(table, keys: keys, in: .server)
                let versions = Dictionary(changed.filter { $0.tbl == table.name && $0.evicted == 0 }.map { (ExactText($0.row_key), $0.version) },
                                          uniquingKeysWith: max)
                changes += keys.map { SyncChange(table: table.name, key: $0, row: states[ExactText($0)] ?? SyncRow(), version: versions[ExactText($0)]) }
            }
            changes += changed.filter { $0.evicted == 1 }.map { SyncChange(table: $0.tbl, key: $0.row_key, row: SyncRow(), isEvicted: true) }
            let order = Dictionary(changed.enumerated().map { (ExactText("\($0.element.evicted)\u{0}\($0.element.tbl)\u{0}\($0.element.row_key)"), $0.offset) },
                                   uniquingKeysWith: { a, _ in a })
            func position(_ change: SyncChange) -> Int { order[ExactText("\(change.isEvicted ? 1 : 0)\u{0}\(change.table)\u{0}\(change.key)")] ?? 0 }
            changes.sort { position($0) < position($1) }
            let caughtUp = both.count < limit
            let last = changed.last.map { SyncCursor(version: $0.version, table: $0.tbl, key: $0.row_key) } ?? after
            let next = caughtUp && last.version < head ? SyncCursor(version: head, table: "", key: "") : last
            let overridden = try pull.client.map { try Self.notices(db, for: $0, after: after.version, through: next.version) } ?? []
            return SyncPage(changes: changes, next: next, head: head, isCaughtUp: caughtUp, overridden: overridden, horizon: horizon)
        }
    }
}

@_spi(Sync) import Depot
import Foundation

/// The tables a sync replica keeps beside the synced ones.
enum SyncTables {
    static let state = "depot_sync_state", rows = "depot_sync_rows", clocks = "depot_sync_clocks", outbox = "depot_sync_outbox",
               inbox = "depot_sync_inbox"
}

extension Database {
    /// Makes this SQLite database a sync replica of these tables, in a
    /// migration: the sync tables, and triggers that record every write to a
    /// synced table (raw SQL included) in the same transaction as the write:
    /// the row's existence, a stamp of the node's hybrid clock for each
    /// changed column, and an entry in the outbox. Rows already stored are
    /// recorded as written now, so a first sync sends them.
    ///
    /// - Throws: `misuse` on an engine other than SQLite (a server records
    ///   what it applies itself, without triggers).
    public func installSyncReplica(of tables: [SyncedTable], node: UUID = UUID()) throws {
        guard dialect.engineName == "SQLite" else {
            throw DatabaseError(.misuse, "installSyncReplica captures writes with SQLite triggers; this store is \(dialect.engineName)'s")
        }
        for table in tables { try checkSyncRules(table) }
        try execute(script: """
            CREATE TABLE \(ident: SyncTables.state) ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "node" TEXT NOT NULL,
                "hlc" INTEGER NOT NULL, "applying" INTEGER NOT NULL, "pushed" INTEGER NOT NULL DEFAULT 0,
                "push_upto" INTEGER NOT NULL DEFAULT 0, "cursor_version" INTEGER NOT NULL DEFAULT 0,
                "cursor_tbl" TEXT NOT NULL DEFAULT '', "cursor_key" TEXT NOT NULL DEFAULT '');
            CREATE TABLE \(ident: SyncTables.rows) ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "cl" INTEGER NOT NULL,
                PRIMARY KEY ("tbl", "row_key"));
            CREATE TABLE \(ident: SyncTables.clocks) ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "col" TEXT NOT NULL,
                "hlc" INTEGER NOT NULL, "node" TEXT NOT NULL, PRIMARY KEY ("tbl", "row_key", "col"));
            CREATE TABLE \(ident: SyncTables.outbox) ("seq" INTEGER PRIMARY KEY AUTOINCREMENT, "tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL);
            CREATE TABLE \(ident: SyncTables.inbox) ("seq" INTEGER PRIMARY KEY, "page" BLOB NOT NULL)
            """)
        try execute("INSERT INTO \(ident: SyncTables.state) (\"id\", \"node\", \"hlc\", \"applying\") VALUES (1, \(node.uuidString.lowercased()), 0, 0)")
        for table in tables {
            for trigger in SyncTriggers.sqlite(table, quote: dialect.quote(identifier:)) { try execute(SQL(unsafeRaw: trigger)) }
            // What is stored already: as inserted now.
            let keys = try fetchAll(String.self, "SELECT CAST(\(ident: table.key) AS TEXT) FROM \(ident: table.name)")
            for key in keys { try recordLocalInsert(table, key: key) }
        }
    }

    /// Refuses a table whose rows two devices could both create alone and
    /// collide on: an integer key (each device would count 1, 2, 3...), or a
    /// unique constraint besides the key (two "Groceries" lists made offline).
    /// The errors say what to change.
    func checkSyncRules(_ table: SyncedTable) throws {
        struct Column: Decodable { var name: String; var type: String; var pk: Int }
        struct Index: Decodable { var name: String; var unique: Int; var origin: String }
        let columns = try fetchAll(Column.self, "SELECT \"name\", \"type\", \"pk\" FROM pragma_table_info(\(table.name))")
        guard !columns.isEmpty else { throw DatabaseError(.misuse, "the synced table \(table.name) does not exist") }
        let keys = columns.filter { $0.pk > 0 }
        guard keys.count == 1, keys[0].name == table.key else {
            throw DatabaseError(.misuse, "the synced table \(table.name) must have one primary key column, \(table.key); it has \(keys.map(\.name))")
        }
        if keys[0].type.uppercased().contains("INT") {
            throw DatabaseError(.misuse, "the synced table \(table.name) has an integer key, \(table.key): rows made offline on two devices would get the same one. "
                + "Use a UUID key (`var id: UUID`, a TEXT column) made on the device")
        }
        for index in try fetchAll(Index.self, "SELECT \"name\", \"unique\", \"origin\" FROM pragma_index_list(\(table.name))")
        where index.unique == 1 && index.origin != "pk" {
            throw DatabaseError(.misuse, "the synced table \(table.name) has a unique constraint besides its key (\(index.name)): two devices could each "
                + "store a row the other's breaks. Drop it, and settle duplicates in the app or on the server")
        }
    }

    /// Records a row as inserted by this node now, as the insert trigger does.
    private func recordLocalInsert(_ table: SyncedTable, key: String) throws {
        try execute(SQL(unsafeRaw: SyncTriggers.stampSQL))
        try execute("""
            INSERT INTO \(ident: SyncTables.rows) ("tbl", "row_key", "cl") VALUES (\(table.name), \(key), 1)
            ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 0
            """)
        for column in table.columns {
            try execute("""
                INSERT INTO \(ident: SyncTables.clocks) ("tbl", "row_key", "col", "hlc", "node")
                SELECT \(table.name), \(key), \(column), "hlc", "node" FROM \(ident: SyncTables.state) WHERE "id" = 1
                ON CONFLICT ("tbl", "row_key", "col") DO UPDATE SET "hlc" = excluded."hlc", "node" = excluded."node"
                """)
        }
        try execute("INSERT INTO \(ident: SyncTables.outbox) (\"tbl\", \"row_key\") VALUES (\(table.name), \(key))")
    }

    /// This replica's node id.
    public func syncNode() throws -> UUID {
        guard let text = try fetchOne(String.self, "SELECT \"node\" FROM \(ident: SyncTables.state) WHERE \"id\" = 1"),
              let node = UUID(uuidString: text) else {
            throw DatabaseError(.misuse, "this database is no sync replica: installSyncReplica(of:) was never run")
        }
        return node
    }

    /// The changes waiting to be pushed: the rows of the oldest `limit` outbox
    /// entries, each row's whole state now, and the outbox position they
    /// reach: pass it to ``acknowledgeSyncChanges(upTo:)`` once the server has them.
    /// Every entry up to that position is one of these rows; a row written
    /// again later keeps its later entries and goes again.
    public func pendingSyncChanges(_ tables: [SyncedTable], limit: Int = 500, upTo fixed: Int64? = nil) throws -> (changes: [SyncChange], upTo: Int64) {
        struct Pending: Decodable, Hashable { var tbl: String; var row_key: String }
        struct Entry: Decodable { var seq: Int64; var tbl: String; var row_key: String }
        let entries = try fetchAll(Entry.self, fixed.map { upTo in """
            SELECT "seq", "tbl", "row_key" FROM \(ident: SyncTables.outbox) WHERE "seq" <= \(upTo) ORDER BY "seq"
            """ } ?? """
            SELECT "seq", "tbl", "row_key" FROM \(ident: SyncTables.outbox) ORDER BY "seq" LIMIT \(max(1, limit))
            """)
        guard let upTo = entries.last?.seq else { return ([], 0) }
        var seen: Set<Pending> = []
        let pending = entries.map { Pending(tbl: $0.tbl, row_key: $0.row_key) }.filter { seen.insert($0).inserted }
        var changes: [SyncChange] = []
        for table in tables {
            let keys = pending.filter { $0.tbl == table.name }.map(\.row_key)
            guard !keys.isEmpty else { continue }
            let states = try syncRows(table, keys: keys)
            changes += keys.map { SyncChange(table: table.name, key: $0, row: states[$0] ?? SyncRow()) }
        }
        return (changes, upTo)
    }

    /// The state of every row this replica knows, deleted ones included: what
    /// a new replica starts from.
    public func allSyncChanges(_ tables: [SyncedTable]) throws -> [SyncChange] {
        var changes: [SyncChange] = []
        for table in tables {
            let keys = try fetchAll(String.self, "SELECT \"row_key\" FROM \(ident: SyncTables.rows) WHERE \"tbl\" = \(table.name) ORDER BY \"row_key\"")
            let states = try syncRows(table, keys: keys)
            changes += keys.map { SyncChange(table: table.name, key: $0, row: states[$0] ?? SyncRow()) }
        }
        return changes
    }

    /// Removes the outbox entries up to a position the server acknowledged.
    public func acknowledgeSyncChanges(upTo position: Int64) throws {
        try execute("DELETE FROM \(ident: SyncTables.outbox) WHERE \"seq\" <= \(position)")
    }

    /// The replica's state of these rows: existence, clocks, and the values stored now.
    func syncRows(_ table: SyncedTable, keys: [String], rows rowsTable: String = SyncTables.rows,
                  clocks clocksTable: String = SyncTables.clocks) throws -> [String: SyncRow] {
        struct Clock: Decodable { var row_key: String; var col: String; var hlc: Int64; var node: String }
        struct Length: Decodable { var row_key: String; var cl: Int64 }
        var rows: [String: SyncRow] = [:]
        let values = try table.read(self, keys)
        for chunk in stride(from: 0, to: keys.count, by: 500).map({ Array(keys[$0..<min($0 + 500, keys.count)]) }) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for length in try fetchAll(Length.self, "SELECT \"row_key\", \"cl\" FROM \(ident: rowsTable) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                rows[length.row_key, default: SyncRow()].causalLength = length.cl
            }
            for clock in try fetchAll(Clock.self, "SELECT \"row_key\", \"col\", \"hlc\", \"node\" FROM \(ident: clocksTable) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                guard let node = UUID(uuidString: clock.node) else { continue }
                // A deleted row's registers keep their stamps; their values went with the row.
                let value = values[clock.row_key]?[clock.col] ?? .null
                rows[clock.row_key, default: SyncRow()].registers[clock.col] = SyncRegister(value: value, stamp: SyncStamp(time: HybridTimestamp(rawValue: clock.hlc), node: node))
            }
        }
        return rows
    }

    /// Merges changes from elsewhere into this replica in one go: each row's
    /// state merged with the local one, the synced table written to match (an
    /// upsert of the winning values, or a delete), without recording these
    /// writes as local ones; the node's clock moves past every stamp received.
    public func applySyncChanges(_ changes: [SyncChange], _ tables: [SyncedTable]) throws {
        guard !changes.isEmpty else { return }
        try savepoint { db in
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 1 WHERE \"id\" = 1")
            for table in tables {
                let incoming = changes.filter { $0.table == table.name }
                guard !incoming.isEmpty else { continue }
                let local = try db.syncRows(table, keys: incoming.map(\.key))
                for change in incoming {
                    let merged = (local[change.key] ?? SyncRow()).merged(with: change.row)
                    try db.store(merged, of: table, key: change.key)
                }
            }
            let latest = changes.flatMap { $0.row.registers.values.map(\.stamp.time.rawValue) }.max() ?? 0
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 0, \"hlc\" = max(\"hlc\", \(latest)) WHERE \"id\" = 1")
        }
    }

    /// Writes a merged row state: the sync tables, then the synced table.
    private func store(_ row: SyncRow, of table: SyncedTable, key: String) throws {
        try execute("""
            INSERT INTO \(ident: SyncTables.rows) ("tbl", "row_key", "cl") VALUES (\(table.name), \(key), \(row.causalLength))
            ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = excluded."cl"
            """)
        try storeClocks(row, of: table, key: key, in: SyncTables.clocks)
        try storeSyncedRow(row, of: table, key: key)
    }

    /// Writes a merged row's registers' stamps.
    func storeClocks(_ row: SyncRow, of table: SyncedTable, key: String, in clocks: String) throws {
        for (column, register) in row.registers.sorted(by: { $0.key < $1.key }) {
            try execute("""
                INSERT INTO \(ident: clocks) ("tbl", "row_key", "col", "hlc", "node")
                VALUES (\(table.name), \(key), \(column), \(register.stamp.time.rawValue), \(register.stamp.node.uuidString.lowercased()))
                ON CONFLICT ("tbl", "row_key", "col") DO UPDATE SET "hlc" = excluded."hlc", "node" = excluded."node"
                """)
        }
    }

    /// Writes the synced table to match a merged row: its winning values, or no row.
    func storeSyncedRow(_ row: SyncRow, of table: SyncedTable, key: String) throws {
        guard row.exists else {
            try execute("DELETE FROM \(ident: table.name) WHERE \(SyncKey.matching(table.key, [key]))")
            return
        }
        let columns = table.columns.filter { row.registers[$0] != nil }
        guard columns.contains(table.key) else { return }
        let names = SQL.join(columns.map { "\(ident: $0)" }, separator: ", ")
        let values = SQL.join(columns.map { "\(row.registers[$0]?.value ?? .null)" }, separator: ", ")
        let updates = columns.filter { $0 != table.key }.map { "\(ident: $0) = excluded.\(ident: $0)" as SQL }
        if updates.isEmpty {
            try execute("INSERT INTO \(ident: table.name) (\(names)) VALUES (\(values)) ON CONFLICT (\(ident: table.key)) DO NOTHING")
        } else {
            try execute("INSERT INTO \(ident: table.name) (\(names)) VALUES (\(values)) ON CONFLICT (\(ident: table.key)) DO UPDATE SET \(SQL.join(updates, separator: ", "))")
        }
    }
}

/// The capture triggers.
enum SyncTriggers {
    /// Moves the node's hybrid clock: `max(last + 1, now in ms << 16)`, as ``HybridClock/tick(at:)``.
    static let stampSQL = """
        UPDATE "depot_sync_state" SET "hlc" = max("hlc" + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) << 16) WHERE "id" = 1
        """

    /// A text literal: a trigger's body cannot bind values.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    static func sqlite(_ table: SyncedTable, quote ident: (String) -> String) -> [String] {
        let name = literal(table.name)
        let when = "WHEN (SELECT \"applying\" FROM \"depot_sync_state\" WHERE \"id\" = 1) = 0"
        func clock(_ column: String, key: String, onlyIfChanged: Bool) -> String {
            """
            INSERT INTO "depot_sync_clocks" ("tbl", "row_key", "col", "hlc", "node")
              SELECT \(name), \(key), \(literal(column)), "hlc", "node" FROM "depot_sync_state"
              WHERE "id" = 1\(onlyIfChanged ? " AND OLD.\(ident(column)) IS NOT NEW.\(ident(column))" : "")
              ON CONFLICT ("tbl", "row_key", "col") DO UPDATE SET "hlc" = excluded."hlc", "node" = excluded."node";
            """
        }
        let newKey = "CAST(NEW.\(ident(table.key)) AS TEXT)", oldKey = "CAST(OLD.\(ident(table.key)) AS TEXT)"
        let insert = """
            CREATE TRIGGER \(ident("depot_sync_insert_" + table.name)) AFTER INSERT ON \(ident(table.name)) \(when) BEGIN
              \(stampSQL);
              INSERT INTO "depot_sync_rows" ("tbl", "row_key", "cl") VALUES (\(name), \(newKey), 1)
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 0;
              \(table.columns.map { clock($0, key: newKey, onlyIfChanged: false) }.joined(separator: "\n  "))
              INSERT INTO "depot_sync_outbox" ("tbl", "row_key") VALUES (\(name), \(newKey));
            END
            """
        let update = """
            CREATE TRIGGER \(ident("depot_sync_update_" + table.name)) AFTER UPDATE ON \(ident(table.name)) \(when) BEGIN
              \(stampSQL);
              \(table.columns.filter { $0 != table.key }.map { clock($0, key: newKey, onlyIfChanged: true) }.joined(separator: "\n  "))
              INSERT INTO "depot_sync_outbox" ("tbl", "row_key") VALUES (\(name), \(newKey));
            END
            """
        let delete = """
            CREATE TRIGGER \(ident("depot_sync_delete_" + table.name)) AFTER DELETE ON \(ident(table.name)) \(when) BEGIN
              INSERT INTO "depot_sync_rows" ("tbl", "row_key", "cl") VALUES (\(name), \(oldKey), 2)
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 1;
              INSERT INTO "depot_sync_outbox" ("tbl", "row_key") VALUES (\(name), \(oldKey));
            END
            """
        return [insert, update, delete]
    }
}

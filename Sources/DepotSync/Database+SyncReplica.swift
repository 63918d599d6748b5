@_spi(Sync) import Depot
import Foundation

/// The tables a sync replica keeps beside the synced ones.
enum SyncTables {
    static let state = "depot_sync_state", outbox = "depot_sync_outbox", inbox = "depot_sync_inbox", columns = "depot_sync_columns"
    /// The push in flight, as sent: a retry sends the same bytes, so the
    /// server can tell it from another push under the same number.
    static let pushing = "depot_sync_pushing"

    /// The statement that makes ``pushing`` where a replica installed by an earlier version lacks it.
    static let createPushing: SQL = """
        CREATE TABLE IF NOT EXISTS "depot_sync_pushing" ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "number" INTEGER NOT NULL, "body" BLOB NOT NULL)
        """
}

extension Database {
    /// The body of `db.sync.installReplica`.
    func installSyncReplica(of tables: [SyncedTable], node: UUID = UUID()) throws {
        _ = try SyncTriggers.capturing(dialect)
        try execute(script: """
            CREATE TABLE \(ident: SyncTables.state) ("id" INTEGER PRIMARY KEY CHECK ("id" = 1), "node" TEXT NOT NULL,
                "hlc" INTEGER NOT NULL CHECK (typeof("hlc") = 'integer'), "applying" INTEGER NOT NULL, "pushed" INTEGER NOT NULL DEFAULT 0,
                "push_upto" INTEGER NOT NULL DEFAULT 0, "cursor_version" INTEGER NOT NULL DEFAULT 0,
                "cursor_tbl" TEXT NOT NULL DEFAULT '', "cursor_key" TEXT NOT NULL DEFAULT '');
            CREATE TABLE \(ident: SyncStateTables.replica.rows) ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "cl" INTEGER NOT NULL,
                PRIMARY KEY ("tbl", "row_key"));
            CREATE TABLE \(ident: SyncStateTables.replica.clocks) ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "col" TEXT NOT NULL,
                "hlc" INTEGER NOT NULL CHECK (typeof("hlc") = 'integer'), "node" TEXT NOT NULL, PRIMARY KEY ("tbl", "row_key", "col"));
            CREATE TABLE \(ident: SyncStateTables.replica.hidden) ("tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL, "registers" BLOB NOT NULL,
                PRIMARY KEY ("tbl", "row_key"));
            CREATE TABLE \(ident: SyncTables.outbox) ("seq" INTEGER PRIMARY KEY AUTOINCREMENT, "tbl" TEXT NOT NULL, "row_key" TEXT NOT NULL);
            CREATE INDEX \(ident: SyncTables.outbox + "_row") ON \(ident: SyncTables.outbox) ("tbl", "row_key", "seq");
            CREATE TABLE \(ident: SyncTables.inbox) ("seq" INTEGER PRIMARY KEY, "page" BLOB NOT NULL);
            CREATE TABLE \(ident: SyncTables.columns) ("tbl" TEXT NOT NULL, "col" TEXT NOT NULL, PRIMARY KEY ("tbl", "col"))
            """)
        try SyncTables.makeClientTables(self)
        try execute("INSERT INTO \(ident: SyncTables.state) (\"id\", \"node\", \"hlc\", \"applying\") VALUES (1, \(node.uuidString.lowercased()), 0, 0)")
        try updateSyncReplica(of: tables)
    }

    /// The body of `db.sync.updateReplica`.
    func updateSyncReplica(of tables: [SyncedTable]) throws {
        for table in tables { try checkSyncRules(table, among: tables) }
        struct Column: Decodable { var name: String; var notnull: Int; var dflt_value: String? }
        // A table or column synced from now on: the server sent none of its values before (a
        // device sends its schema, and is sent only what it syncs), so the next pull starts over.
        var grew = false
        for table in tables {
            let known = Set(try fetchAll(String.self, "SELECT \"col\" FROM \(ident: SyncTables.columns) WHERE \"tbl\" = \(table.name)"))
            if known.isEmpty || !Set(table.columns).isSubset(of: known) { grew = true }
            if !known.isEmpty {
                let schema = try fetchAll(Column.self, "SELECT \"name\", \"notnull\", \"dflt_value\" FROM pragma_table_info(\(table.name))")
                for column in schema where table.columns.contains(column.name) && !known.contains(column.name)
                    && column.notnull == 1 && column.dflt_value == nil {
                    throw DatabaseError(.misuse, "the column \(column.name) added to the synced table \(table.name) is NOT NULL without a default: "
                        + "a row from a device that does not know it yet could not be stored. Give it a DEFAULT, or let it be NULL")
                }
                if let dropped = known.subtracting(table.columns).sorted().first {
                    throw DatabaseError(.misuse, "the synced column \(table.name).\(dropped) is no longer declared: devices that do not know yet "
                        + "still send it and expect it stored. Keep the column (it may become nullable), or sync a new table")
                }
            }
            let capturing = try SyncTriggers.capturing(dialect)
            for statement in capturing.dropCaptureStatements(table: table.name) { try execute(SQL(unsafeRaw: statement)) }
            for statement in capturing.captureStatements(SyncTriggers.capture(table, dialect: dialect)) { try execute(SQL(unsafeRaw: statement)) }
            if known.isEmpty {
                // What is stored already: as inserted now.
                let keys = try fetchAll(String.self, "SELECT \(unsafeRaw: SyncKey.expression(table.keyColumns, row: nil, dialect: dialect)) FROM \(ident: table.name)")
                for key in keys { try recordLocalInsert(table, key: key) }
            }
            try execute("DELETE FROM \(ident: SyncTables.columns) WHERE \"tbl\" = \(table.name)")
            for column in table.columns {
                try execute("INSERT INTO \(ident: SyncTables.columns) (\"tbl\", \"col\") VALUES (\(table.name), \(column))")
            }
        }
        if grew {
            // Merging is idempotent: pulling again what the device has changes nothing of it. A pull from
            // the start is not told of deletes the server compacted away: it forgets what it is not sent.
            try SyncTables.makeClientTables(self)
            try execute("UPDATE \(ident: SyncTables.state) SET \"cursor_version\" = 0, \"cursor_tbl\" = '', \"cursor_key\" = '', \"resync\" = 1 WHERE \"id\" = 1")
            try execute("DELETE FROM \(ident: SyncTables.inbox)")
        }
    }

    /// The body of `db.sync.checkReplica`.
    func checkSyncReplica(of tables: [SyncedTable]) throws {
        for table in tables {
            let known = Set(try fetchAll(String.self, "SELECT \"col\" FROM \(ident: SyncTables.columns) WHERE \"tbl\" = \(table.name)"))
            guard known == Set(table.columns) else {
                let added = Set(table.columns).subtracting(known).sorted()
                throw DatabaseError(.misuse, known.isEmpty
                    ? "the synced table \(table.name) is not captured by this replica: run db.sync.updateReplica(of:) in the migration that made it"
                    : "the synced table \(table.name) has columns the replica does not capture (\(added.joined(separator: ", "))): "
                        + "run db.sync.updateReplica(of:) in the migration that added them")
            }
        }
    }

    /// Refuses a table whose rows two devices could both create alone and
    /// collide on: an integer key (each device would count 1, 2, 3...), or a
    /// unique constraint over synced columns besides the key (two "Groceries"
    /// lists made offline); and a foreign key to another synced table that is
    /// not declared as a parent. The errors say what to change.
    func checkSyncRules(_ table: SyncedTable, among tables: [SyncedTable]) throws {
        struct Column: Decodable { var name: String; var type: String; var pk: Int }
        struct Index: Decodable { var name: String; var unique: Int; var origin: String }
        struct Reference: Decodable { var table: String; var from: String }
        let columns = try fetchAll(Column.self, "SELECT \"name\", \"type\", \"pk\" FROM pragma_table_info(\(table.name))")
        guard !columns.isEmpty else { throw DatabaseError(.misuse, "the synced table \(table.name) does not exist") }
        let keys = columns.filter { $0.pk > 0 }.sorted { $0.pk < $1.pk }.map(\.name)
        guard keys == table.keyColumns else {
            throw DatabaseError(.misuse, "the synced table \(table.name) must have the primary key \(table.keyColumns); it has \(keys)")
        }
        if keys.count == 1, let key = columns.first(where: { $0.pk > 0 }), key.type.uppercased().contains("INT") {
            throw DatabaseError(.misuse, "the synced table \(table.name) has an integer key, \(key.name): rows made offline on two devices would get the same one. "
                + "Use a UUID key (`var id: UUID`, a TEXT column) made on the device")
        }
        if keys.count > 1, let loose = keys.first(where: { key in !table.parents.contains { $0.column == key } }) {
            throw DatabaseError(.misuse, "the synced table \(table.name) has a key of several columns, and \(loose) names no parent: "
                + "a key of several columns is a link's, each part a parent's key")
        }
        for index in try fetchAll(Index.self, "SELECT \"name\", \"unique\", \"origin\" FROM pragma_index_list(\(table.name))")
        where index.unique == 1 && index.origin != "pk" {
            let indexed = try fetchAll(String.self, "SELECT coalesce(\"name\", '') FROM pragma_index_info(\(index.name))")
            guard indexed.contains(where: { !table.localColumns.contains($0) }) else { continue }
            throw DatabaseError(.misuse, "the synced table \(table.name) has a unique constraint besides its key (\(index.name)): two devices could each "
                + "store a row the other's breaks. Drop it, make the key from what must be unique (a name-based UUID), or settle duplicates in the app")
        }
        for parent in table.parents where !tables.contains(where: { $0.name == parent.table && $0.keyColumns.count == 1 }) {
            throw DatabaseError(.misuse, "the parent \(parent.table) of the synced table \(table.name) must be a synced table with a one-column key, listed with it")
        }
        for reference in try fetchAll(Reference.self, "SELECT \"table\", \"from\" FROM pragma_foreign_key_list(\(table.name))")
        where tables.contains(where: { $0.name == reference.table }) && !table.parents.contains(SyncParent(reference.from, table: reference.table)) {
            throw DatabaseError(.misuse, "the synced table \(table.name) references \(reference.table) by \(reference.from): declare it, "
                + "SyncParent(\"\(reference.from)\", table: \"\(reference.table)\"), so a row whose parent was deleted elsewhere is kept aside, not refused")
        }
    }

    /// Records a row as inserted by this node now, as the insert trigger does.
    private func recordLocalInsert(_ table: SyncedTable, key: String) throws {
        if try fetchOne(Int64.self, "SELECT \"hlc\" FROM \(ident: SyncTables.state) WHERE \"id\" = 1") == Int64.max {
            throw DatabaseError(.misuse, SyncTriggers.exhausted)
        }
        try execute(SQL(unsafeRaw: try SyncTriggers.capturing(dialect).clockTickStatement(SyncTriggers.tables)))
        let rows = SyncStateTables.replica.rows
        // A deleted row (an even causal length) lives again; a living one stays as it is.
        try insert(into: rows, columns: ["tbl", "row_key", "cl"], "VALUES (\(table.name), \(key), 1)", onConflict: .update(["tbl", "row_key"], set: [
            .init("cl", "CASE WHEN \(ident: rows).\"cl\" % 2 = 0 THEN \(ident: rows).\"cl\" + 1 ELSE \(ident: rows).\"cl\" END"),
        ]))
        for column in table.columns {
            try insert(into: SyncStateTables.replica.clocks, columns: ["tbl", "row_key", "col", "hlc", "node"], """
                SELECT \(table.name), \(key), \(column), "hlc", "node" FROM \(ident: SyncTables.state) WHERE "id" = 1
                """, onConflict: .update(["tbl", "row_key", "col"], setting: ["hlc", "node"]))
        }
        try execute("INSERT INTO \(ident: SyncTables.outbox) (\"tbl\", \"row_key\") VALUES (\(table.name), \(key))")
    }

    /// The body of `db.sync.isReplica`.
    func isSyncReplica() throws -> Bool {
        // Only an engine that captures writes holds a replica.
        guard dialect.capturesChanges else { return false }
        let objects = SQL(unsafeRaw: dialect.schemaObjectsQuery)
        return try fetchOne(Int.self, "SELECT count(*) FROM (\(objects)) AS \"objects\" WHERE \"kind\" = 'table' AND \"name\" = \(SyncTables.state)") == 1
    }

    /// The body of `db.sync.node`.
    func syncNode() throws -> UUID {
        guard let text = try fetchOne(String.self, "SELECT \"node\" FROM \(ident: SyncTables.state) WHERE \"id\" = 1"),
              let node = UUID(uuidString: text) else {
            throw DatabaseError(.misuse, "this database is no sync replica: db.sync.installReplica(of:) was never run")
        }
        return node
    }

    /// The body of `db.sync.pendingChanges`.
    func pendingSyncChanges(_ tables: [SyncedTable], limit: Int = 500, upTo fixed: Int64? = nil) throws -> (changes: [SyncChange], upTo: Int64) {

        struct Entry: Decodable { var seq: Int64; var tbl: String; var row_key: String }
        let entries = try fetchAll(Entry.self, fixed.map { upTo in """
            SELECT "seq", "tbl", "row_key" FROM \(ident: SyncTables.outbox) WHERE "seq" <= \(upTo) ORDER BY "seq"
            """ } ?? """
            SELECT "seq", "tbl", "row_key" FROM \(ident: SyncTables.outbox) ORDER BY "seq" LIMIT \(max(1, limit))
            """)
        guard let upTo = entries.last?.seq else { return ([], 0) }
        try SyncTables.makeClientTables(self)
        var seen: Set<SyncRowID> = []
        let pending = entries.map { SyncRowID(table: $0.tbl, key: $0.row_key) }.filter { seen.insert($0).inserted }
        var changes: [SyncChange] = []
        for table in tables {
            let keys = pending.filter { $0.table == table.name }.map(\.key)
            guard !keys.isEmpty else { continue }
            let states = try syncRows(table, keys: keys, in: .replica)
            let synced = try syncedKeys(table.name, among: keys)
            changes += keys.map { key in
                SyncChange(table: table.name, key: key, row: states[ExactText(key)] ?? SyncRow(), wasSynced: synced.contains(ExactText(key)))
            }
        }
        return (changes, upTo)
    }

    /// Those of these rows the replica had from the server: pulled, or pushed and acknowledged.
    func syncedKeys(_ table: String, among keys: [String]) throws -> Set<ExactText> {
        var synced: Set<ExactText> = []
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for key in try fetchAll(String.self, """
                SELECT "row_key" FROM \(ident: SyncStateTables.replica.rows) WHERE "tbl" = \(table) AND "synced" > 0 AND "row_key" IN (\(list))
                """) {
                synced.insert(ExactText(key))
            }
        }
        return synced
    }

    /// Notes the server version at which rows were last synced (pulled, or
    /// pushed and acknowledged): a row with one is a row the server has or
    /// had, and its tombstone goes once the server's horizon passes it.
    func markSynced(_ table: String, _ rows: [(key: String, version: Int64)]) throws {
        // By version, a list of keys each (a page holds a few versions; a push one): the keys' index finds each row.
        for (version, keys) in Dictionary(grouping: rows, by: \.version).sorted(by: { $0.key < $1.key }) {
            for chunk in SyncKey.chunks(keys.map(\.key)) {
                try execute("""
                    UPDATE \(ident: SyncStateTables.replica.rows) SET "synced" = \(version)
                    WHERE "tbl" = \(table) AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", "))) AND "synced" < \(version)
                    """)
            }
        }
    }

    /// Queues again the deletes this replica pulled while a push was in
    /// flight, of rows the push carried at an earlier life, when the server
    /// had forgotten them as it applied the push (deleted before its
    /// compaction `horizon`).
    ///
    /// The push was fixed before the pull, and a retry sends it as it was:
    /// the server, no longer knowing the delete, took the pushed life as a
    /// new row. The replica shows the delete, and no change of its own is
    /// left to say so: without this, the two would differ for good (history
    /// seed 6425823999124693192). Sent again, the delete wins on the server
    /// as it would have had the server remembered it. Call it before the
    /// push's rows are marked synced at its version.
    func requeueForgottenDeletes(of table: String, pushed: [SyncChange], horizon: Int64) throws {
        guard horizon > 0, !pushed.isEmpty else { return }
        var lengths: [ExactText: Int64] = [:]
        for change in pushed { lengths[ExactText(change.key)] = max(lengths[ExactText(change.key)] ?? 0, change.row.causalLength) }
        struct Held: Decodable { var row_key: String; var cl: Int64 }
        let (rows, outbox) = (SyncStateTables.replica.rows, SyncTables.outbox)
        for chunk in SyncKey.chunks(pushed.map(\.key)) {
            let held = try fetchAll(Held.self, """
                SELECT "row_key", "cl" FROM \(ident: rows)
                WHERE "tbl" = \(table) AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                  AND "cl" % 2 = 0 AND "synced" > 0 AND "synced" < \(horizon)
                """)
            for row in held where row.cl > lengths[ExactText(row.row_key), default: row.cl] {
                try execute("""
                    INSERT INTO \(ident: outbox) ("tbl", "row_key") SELECT \(table), \(row.row_key)
                    WHERE NOT EXISTS (SELECT 1 FROM \(ident: outbox) WHERE "tbl" = \(table) AND "row_key" = \(row.row_key))
                    """)
            }
        }
    }

    /// Forgets the tombstones the server forgot (deleted rows synced before
    /// its compaction horizon, with no change waiting to be pushed), so that
    /// a later life of the key made by a device that never knew the deleted
    /// one is taken here as the server takes it.
    func forgetCompactedTombstones(before horizon: Int64) throws {
        guard horizon > 0 else { return }
        let (rows, outbox) = (SyncStateTables.replica.rows, SyncTables.outbox)
        let gone: SQL = """
            SELECT r."tbl", r."row_key" FROM \(ident: rows) r WHERE r."cl" % 2 = 0 AND r."synced" > 0 AND r."synced" < \(horizon)
              AND NOT EXISTS (SELECT 1 FROM \(ident: outbox) o WHERE o."tbl" = r."tbl" AND o."row_key" = r."row_key")
            """
        for table in [SyncStateTables.replica.clocks, SyncStateTables.replica.hidden, rows] {
            try execute("DELETE FROM \(ident: table) WHERE (\"tbl\", \"row_key\") IN (\(gone))")
        }
    }

    /// Forgets the rows that these deletes, older than the server's
    /// compaction horizon (so forgotten by the server), left deleted here
    /// with no change waiting to be pushed, whatever version the replica
    /// last synced them at.
    ///
    /// A pull that staged such a delete and was cut off, then went on after
    /// a push, applies it over the life of the key the push just gave the
    /// server (synced past the horizon, so ``forgetCompactedTombstones(before:)``
    /// keeps it): that life comes back in a later page, and must find the
    /// key forgotten, not dead (history seed 8928958688283521337).
    func forgetCompactedTombstones(_ changes: [SyncChange], before horizon: Int64) throws {
        let compacted = changes.filter { !$0.isEvicted && !$0.row.exists && ($0.version ?? horizon) < horizon }
        let (rows, outbox) = (SyncStateTables.replica.rows, SyncTables.outbox)
        for (table, group) in Dictionary(grouping: compacted, by: \.table) {
            // Keyed by causal length: a row deleted here at another life than the forgotten delete's stays.
            for (length, changes) in Dictionary(grouping: group, by: \.row.causalLength) {
                for chunk in SyncKey.chunks(changes.map(\.key)) {
                    let gone: SQL = """
                        SELECT r."tbl", r."row_key" FROM \(ident: rows) r
                        WHERE r."tbl" = \(table) AND r."row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", "))) AND r."cl" = \(length)
                          AND NOT EXISTS (SELECT 1 FROM \(ident: outbox) o WHERE o."tbl" = r."tbl" AND o."row_key" = r."row_key")
                        """
                    for name in [SyncStateTables.replica.clocks, SyncStateTables.replica.hidden, rows] {
                        try execute("DELETE FROM \(ident: name) WHERE (\"tbl\", \"row_key\") IN (\(gone))")
                    }
                }
            }
        }
    }

    /// The body of `db.sync.allChanges`.
    func allSyncChanges(_ tables: [SyncedTable]) throws -> [SyncChange] {
        var changes: [SyncChange] = []
        for table in tables {
            let keys = try fetchAll(String.self, "SELECT \"row_key\" FROM \(ident: SyncStateTables.replica.rows) WHERE \"tbl\" = \(table.name) ORDER BY \"row_key\"")
            let states = try syncRows(table, keys: keys, in: .replica)
            changes += keys.map { SyncChange(table: table.name, key: $0, row: states[ExactText($0)] ?? SyncRow()) }
        }
        return changes
    }

    /// The body of `db.sync.pendingChangeCount`.
    func pendingSyncChangeCount() throws -> Int {
        try fetchOne(Int.self, "SELECT count(DISTINCT \"tbl\" || ' ' || \"row_key\") FROM \(ident: SyncTables.outbox)") ?? 0
    }

    /// The body of `db.sync.acknowledgeChanges`.
    func acknowledgeSyncChanges(upTo position: Int64) throws {
        try execute("DELETE FROM \(ident: SyncTables.outbox) WHERE \"seq\" <= \(position)")
    }

    /// Those of these rows the replica had from the server and has not
    /// changed since (no change waiting to be pushed): their state here is
    /// one the server had, or one it refused.
    func settledKeys(_ table: String, among keys: [String]) throws -> Set<ExactText> {
        var settled: Set<ExactText> = []
        let (rows, outbox) = (SyncStateTables.replica.rows, SyncTables.outbox)
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for key in try fetchAll(String.self, """
                SELECT "row_key" FROM \(ident: rows) WHERE "tbl" = \(table) AND "synced" > 0 AND "row_key" IN (\(list))
                    AND NOT EXISTS (SELECT 1 FROM \(ident: outbox) WHERE \(ident: outbox)."tbl" = \(ident: rows)."tbl"
                        AND \(ident: outbox)."row_key" = \(ident: rows)."row_key")
                """) {
                settled.insert(ExactText(key))
            }
        }
        return settled
    }

    /// The body of `db.sync.applyChanges`.
    ///
    /// With `replacingSettled` (a pull from the start, which brings every row
    /// the server has), a row this replica had from the server and has not
    /// changed since takes the server's state as it is, not merged: its
    /// state here may be one the server refused (a push that lost to a
    /// delete whose tombstone the server has since forgotten), which a merge
    /// would mix into a later life of the key.
    @discardableResult
    func applySyncChanges(_ changes: [SyncChange], _ tables: [SyncedTable], maximumDrift: Duration = .seconds(300),
                          replacingSettled: Bool = false) throws -> [SyncRowID] {
        guard !changes.isEmpty else { return [] }
        try SyncTables.makeClientTables(self)
        return try savepoint { db in
            var forgotten: [SyncRowID] = []
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 1 WHERE \"id\" = 1")
            // Runs of changes in order: a row forgotten and shared again later is forgotten first.
            var start = changes.startIndex
            while start < changes.endIndex {
                let evicting = changes[start].isEvicted
                let end = changes[start...].firstIndex { $0.isEvicted != evicting } ?? changes.endIndex
                let run = Array(changes[start..<end])
                if evicting {
                    forgotten += try db.forgetSyncRows(run, among: tables)
                } else {
                    for table in tables {
                        let incoming = SyncChange.mergedByKey(run.filter { $0.table == table.name })
                        guard !incoming.isEmpty else { continue }
                        let keys = incoming.map(\.key)
                        let local = try db.syncRows(table, keys: keys, in: .replica)
                        let settled = replacingSettled ? try db.settledKeys(table.name, among: keys) : []
                        let merged = incoming.map { change in
                            let key = ExactText(change.key)
                            return (key: change.key, row: settled.contains(key) ? change.row : (local[key] ?? SyncRow()).merged(with: change.row))
                        }
                        try db.storeSyncStates(merged, of: table, in: .replica, stored: local)
                        try db.markSynced(table.name, incoming.map { ($0.key, $0.version ?? 1) })
                        try db.materialize(merged, of: table, among: tables, in: .replica)
                    }
                }
                start = end
            }
            let latest = changes.flatMap { $0.row.registers.values.map(\.stamp.time) }.max() ?? .zero
            let bound = HybridClock.bound(at: Date(), maximumDrift: maximumDrift)
            try db.execute("""
                UPDATE \(ident: SyncTables.state) SET "applying" = 0, "hlc" = max("hlc", \(min(latest, bound).rawValue)) WHERE "id" = 1
                """)
            return forgotten
        }
    }

    /// Forgets rows as if this replica had never seen them (their account
    /// may no longer see them): out of their tables without recording a
    /// delete, their sync state and pending pushes gone, and the rows in
    /// them (children) that the server names too, recursively. A row in them
    /// the server does not name (this device moved it there, or made it
    /// there, and the server has not taken the change) is kept aside with
    /// its state: its push is dropped by the server, and the row comes back
    /// where the server has it, if anywhere.
    ///
    /// - Returns: the forgotten rows that had changes waiting to be pushed.
    func forgetSyncRows(_ changes: [SyncChange], among tables: [SyncedTable]) throws -> [SyncRowID] {
        let named = Set(changes.map { SyncRowID(table: $0.table, key: $0.key) })
        var pending: [SyncRowID] = []
        for table in tables {
            let keys = changes.filter { $0.table == table.name }.map(\.key).exactlyDistinct().sorted { ExactText($0) < ExactText($1) }
            try forgetSyncRows(keys, of: table, named: named, among: tables, pending: &pending)
        }
        return pending
    }

    private func forgetSyncRows(_ keys: [String], of table: SyncedTable, named: Set<SyncRowID>, among tables: [SyncedTable],
                                pending: inout [SyncRowID]) throws {
        guard !keys.isEmpty else { return }
        for child in tables {
            for parent in child.parents where parent.table == table.name {
                for chunk in SyncKey.chunks(keys) {
                    let inTable = try fetchAll(String.self, """
                        SELECT \(unsafeRaw: SyncKey.expression(child.keyColumns, row: nil, dialect: dialect)) FROM \(ident: child.name)
                        WHERE \(SyncKey.matching([parent.column], chunk))
                        """)
                    let isNamed = { (key: String) in named.contains(SyncRowID(table: child.name, key: key)) }
                    try forgetSyncRows(inTable.filter(isNamed), of: child, named: named, among: tables, pending: &pending)
                    try hideSyncRows(inTable.filter { !isNamed($0) }, of: child, among: tables, in: .replica)
                }
            }
        }
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            pending += try fetchAll(String.self, """
                SELECT DISTINCT "row_key" FROM \(ident: SyncTables.outbox) WHERE "tbl" = \(table.name) AND "row_key" IN (\(list))
                """).map { SyncRowID(table: table.name, key: $0) }
            try execute("DELETE FROM \(ident: table.name) WHERE \(SyncKey.matching(table.keyColumns, chunk))")
            for name in [SyncStateTables.replica.rows, SyncStateTables.replica.clocks, SyncStateTables.replica.hidden, SyncTables.outbox] {
                try execute("DELETE FROM \(ident: name) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))")
            }
        }
    }
}

@_spi(Sync) import Depot
import Foundation

// What a sync is to tell a person is kept in the replica until a sync that
// completes tells it: a push whose drops were answered, followed by a pull
// that failed, must not lose the drops with the failed sync's return value.

extension SyncTables {
    /// What is yet to be told: drops, overrides, a renewed identity.
    static let untold = "depot_sync_untold"

    /// The client's own tables an earlier version did not make: made where they lack.
    static func makeClientTables(_ db: Database) throws {
        let present = Set(try db.fetchAll(String.self, """
            SELECT "name" FROM sqlite_schema WHERE "type" = 'table' AND "name" IN (\(pushing), \(untold))
            UNION ALL SELECT 'synced' FROM pragma_table_info(\(SyncStateTables.replica.rows)) WHERE "name" = 'synced'
            UNION ALL SELECT 'resync' FROM pragma_table_info(\(state)) WHERE "name" = 'resync'
            """))
        if !present.contains(pushing) { try db.execute(createPushing) }
        if !present.contains("synced") {
            // The server version at which each row was last synced (compaction; 0: never): version 1 for
            // every row a replica of an earlier version holds and has not changed since its last push (the
            // earliest, so its tombstone goes with the server's first compaction); a pending one may be new.
            let rows = SyncStateTables.replica.rows
            try db.execute("ALTER TABLE \(ident: rows) ADD COLUMN \"synced\" INTEGER NOT NULL DEFAULT 0")
            try db.execute("""
                UPDATE \(ident: rows) SET "synced" = 1 WHERE NOT EXISTS (SELECT 1 FROM \(ident: outbox) o
                    WHERE o."tbl" = \(ident: rows)."tbl" AND o."row_key" = \(ident: rows)."row_key")
                """)
        }
        if !present.contains("resync") {
            try db.execute("ALTER TABLE \(ident: state) ADD COLUMN \"resync\" INTEGER NOT NULL DEFAULT 0")
        }
        if !present.contains(untold) {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS "depot_sync_untold" ("seq" INTEGER PRIMARY KEY AUTOINCREMENT, "kind" TEXT NOT NULL,
                    "tbl" TEXT NOT NULL DEFAULT '', "row_key" TEXT NOT NULL DEFAULT '', "col" TEXT NOT NULL DEFAULT '')
                """)
        }
    }
}

extension Database {
    /// Keeps what a push or a pull decided for the next completed sync to tell.
    func recordUntold(dropped: [SyncRowID] = [], overridden: [SyncOverride] = [], identityRenewed: Bool = false) throws {
        for row in dropped {
            try execute("INSERT INTO \(ident: SyncTables.untold) (\"kind\", \"tbl\", \"row_key\") VALUES ('dropped', \(row.table), \(row.key))")
        }
        for value in overridden {
            try execute("""
                INSERT INTO \(ident: SyncTables.untold) ("kind", "tbl", "row_key", "col") VALUES ('overridden', \(value.row.table), \(value.row.key), \(value.column))
                """)
        }
        if identityRenewed { try execute("INSERT INTO \(ident: SyncTables.untold) (\"kind\") VALUES ('renewed')") }
    }

    /// Everything not told yet, in the order it happened, and forgets it.
    func takeUntold() throws -> (dropped: [SyncRowID], overridden: [SyncOverride], identityRenewed: Bool) {
        struct Untold: Decodable { var kind: String; var tbl: String; var row_key: String; var col: String }
        let all = try fetchAll(Untold.self, "SELECT \"kind\", \"tbl\", \"row_key\", \"col\" FROM \(ident: SyncTables.untold) ORDER BY \"seq\"")
        try execute("DELETE FROM \(ident: SyncTables.untold)")
        var dropped: [SyncRowID] = [], overridden: [SyncOverride] = []
        for item in all {
            let row = SyncRowID(table: item.tbl, key: item.row_key)
            switch item.kind {
            case "dropped" where !dropped.contains(row): dropped.append(row)
            case "overridden":
                let value = SyncOverride(row: row, column: item.col)
                if !overridden.contains(value) { overridden.append(value) }
            default: break
            }
        }
        return (dropped, overridden, all.contains { $0.kind == "renewed" })
    }
}

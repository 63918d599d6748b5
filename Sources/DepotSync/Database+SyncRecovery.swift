@_spi(Sync) import Depot
import Foundation

// What a replica does when the server refuses or drops part of what it
// pushed: nothing of its own is lost, and it ends where the server is.

extension Database {
    /// Forgets this replica's own version of rows whose pushed changes the
    /// server dropped (their root is no longer shared with the account), so
    /// that the next pull brings each as the server has it: a row the device
    /// moved into an unshared root goes back where the server holds it, a row
    /// it made there is gone. The rows in them are kept aside until their
    /// parent is back. A row written again since the push was taken keeps
    /// its state and goes in the next push.
    ///
    /// The server gives each dropped row the push's `version`, so a pull
    /// brings it back; when this replica has pulled past that version (the
    /// answer came late: a retry of a push whose answer was lost, after a
    /// pull), its cursor goes back before it, or the row would stay away
    /// until it next changed. What a pull brings again merges to the same.
    func discardDroppedSyncRows(_ rows: [SyncRowID], pushedUpTo position: Int64, version: Int64, among tables: [SyncedTable]) throws {
        guard !rows.isEmpty else { return }
        try savepoint { db in
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 1 WHERE \"id\" = 1")
            let cursor = try db.fetchOne(Int64.self, "SELECT \"cursor_version\" FROM \(ident: SyncTables.state) WHERE \"id\" = 1") ?? 0
            if cursor >= version, version > 0 {
                try db.execute("""
                    UPDATE \(ident: SyncTables.state) SET "cursor_version" = \(version - 1), "cursor_tbl" = '', "cursor_key" = '' WHERE "id" = 1
                    """)
                try db.execute("DELETE FROM \(ident: SyncTables.inbox)")
            }
            for table in tables {
                var keys: [String] = []
                for key in rows.filter({ $0.table == table.name }).map(\.key).exactlyDistinct() {
                    let later = try db.fetchOne(Int.self, """
                        SELECT count(*) FROM \(ident: SyncTables.outbox) WHERE "tbl" = \(table.name) AND "row_key" = \(key) AND "seq" > \(position)
                        """) ?? 0
                    if later == 0 { keys.append(key) }
                }
                guard !keys.isEmpty else { continue }
                try db.removeFromTable(table, keys: keys, among: tables, in: .replica)
                for chunk in SyncKey.chunks(keys) {
                    let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
                    for name in [SyncStateTables.replica.rows, SyncStateTables.replica.clocks, SyncStateTables.replica.hidden] {
                        try db.execute("DELETE FROM \(ident: name) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))")
                    }
                }
            }
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 0 WHERE \"id\" = 1")
        }
    }

    /// Stamps this replica's pending changes again at `latest` where they are
    /// later (the server refused them as too far ahead: this device's clock
    /// runs ahead), under its node id now, and holds the clock there. A stamp
    /// that far ahead can only be this replica's own (the server takes none,
    /// so no pull brings one), made under this node id or one it had before
    /// it went on under a new identity; the changes never left the device, so
    /// no one else holds the later stamps. Returns how many stamps it moved.
    func restampPendingSyncChanges(atMost latest: HybridTimestamp) throws -> Int {
        let node = try syncNode().uuidString.lowercased()
        let moved = try execute("""
            UPDATE \(ident: SyncStateTables.replica.clocks) SET "hlc" = \(latest.rawValue), "node" = \(node)
            WHERE "hlc" > \(latest.rawValue)
              AND EXISTS (SELECT 1 FROM \(ident: SyncTables.outbox) o
                          WHERE o."tbl" = \(ident: SyncStateTables.replica.clocks)."tbl" AND o."row_key" = \(ident: SyncStateTables.replica.clocks)."row_key")
            """)
        try execute("UPDATE \(ident: SyncTables.state) SET \"hlc\" = \(latest.rawValue) WHERE \"id\" = 1 AND \"hlc\" > \(latest.rawValue)")
        try execute("DELETE FROM \(ident: SyncTables.pushing)")
        return moved
    }

    /// Goes on under a new node id, as a new device: pushes start again at
    /// number 1 and send every change the outbox holds. For a replica the
    /// server found to be a copy (restored from a backup, or copied to
    /// another machine), whose push numbers the original used already.
    func rotateSyncIdentity(to node: UUID = UUID()) throws {
        try execute("""
            UPDATE \(ident: SyncTables.state) SET "node" = \(node.uuidString.lowercased()), "pushed" = 0, "push_upto" = 0 WHERE "id" = 1
            """)
        try execute("DELETE FROM \(ident: SyncTables.pushing)")
    }
}

extension Database {
    /// After a pull that started over (the server compacted past this
    /// replica's cursor): forgets every row this replica had from the
    /// server that the server did not send (deleted and forgotten there
    /// before this device heard), its pending changes included, since the
    /// server drops those (``SyncChange/wasSynced``). Rows the server never
    /// had (made here, not yet pushed) stay, and go in the next push.
    ///
    /// - Returns: the forgotten rows that had changes waiting to be pushed.
    func forgetUnsentSyncRows(sent: Set<SyncRowID>, among tables: [SyncedTable]) throws -> [SyncRowID] {
        var gone: [SyncChange] = []
        for table in tables {
            for key in try fetchAll(String.self, """
                SELECT "row_key" FROM \(ident: SyncStateTables.replica.rows) WHERE "tbl" = \(table.name) AND "synced" > 0
                """) where !sent.contains(SyncRowID(table: table.name, key: key)) {
                gone.append(SyncChange(table: table.name, key: key, row: SyncRow(), isEvicted: true))
            }
        }
        guard !gone.isEmpty else { return [] }
        return try savepoint { db in
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 1 WHERE \"id\" = 1")
            let pending = try db.forgetSyncRows(gone, among: tables)
            try db.execute("UPDATE \(ident: SyncTables.state) SET \"applying\" = 0 WHERE \"id\" = 1")
            return pending
        }
    }
}

@_spi(Sync) import Depot
import Foundation

/// The capture triggers of a replica.
enum SyncTriggers {
    /// Moves the node's hybrid clock: `max(last + 1, now in ms << 16)`, as
    /// `HybridClock.tick(at:)`. At the last value it would overflow (SQLite
    /// would store a REAL): it becomes NULL instead, which the column refuses,
    /// so the write fails rather than every later sync. (Pulls never move the
    /// clock past the drift bound, so only a clock set by hand gets there.)
    static let stampSQL = """
        UPDATE "depot_sync_state" SET "hlc" = CASE WHEN "hlc" < 9223372036854775807
            THEN max("hlc" + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) << 16) END WHERE "id" = 1
        """

    /// What a write says when the clock has no later stamp to give.
    static let exhausted = "the sync clock of this replica reached its last value: a stamp from elsewhere was far in the future"

    /// Refuses the write in a trigger when the clock has no later stamp to give.
    static let exhaustedGuard = """
        SELECT RAISE(ABORT, '\(exhausted)') WHERE (SELECT "hlc" FROM "depot_sync_state" WHERE "id" = 1) >= 9223372036854775807
        """

    /// An outbox entry for a row, unless one waits already for the next push
    /// (entries up to `push_upto` are in flight: a row written meanwhile gets
    /// a new one). So the outbox holds each changed row once, however often
    /// it was written, and a push reads the row's state as it is then.
    static func enqueue(_ table: String, _ key: String) -> String {
        """
        INSERT INTO "depot_sync_outbox" ("tbl", "row_key") SELECT \(table), \(key)
                WHERE NOT EXISTS (SELECT 1 FROM "depot_sync_outbox" WHERE "tbl" = \(table) AND "row_key" = \(key)
                  AND "seq" > (SELECT "push_upto" FROM "depot_sync_state" WHERE "id" = 1));
        """
    }

    /// A text literal: a trigger's body cannot bind values.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

    /// The triggers of one table: an insert stamps every synced column, an
    /// update the synced columns it changed (an update that changes none, or
    /// only local columns, records nothing), a delete ends the row's life; an
    /// update of the key is refused.
    static func sqlite(_ table: SyncedTable, dialect: some SQLDialect) -> [String] {
        let ident = dialect.quote(identifier:)
        let name = literal(table.name)
        let applying = "(SELECT \"applying\" FROM \"depot_sync_state\" WHERE \"id\" = 1) = 0"
        func clock(_ column: String, key: String, onlyIfChanged: Bool) -> String {
            """
            INSERT INTO "depot_sync_clocks" ("tbl", "row_key", "col", "hlc", "node")
              SELECT \(name), \(key), \(literal(column)), "hlc", "node" FROM "depot_sync_state"
              WHERE "id" = 1\(onlyIfChanged ? " AND OLD.\(ident(column)) IS NOT NEW.\(ident(column))" : "")
              ON CONFLICT ("tbl", "row_key", "col") DO UPDATE SET "hlc" = excluded."hlc", "node" = excluded."node";
            """
        }
        let newKey = SyncKey.expression(table.keyColumns, row: "NEW", dialect: dialect)
        let oldKey = SyncKey.expression(table.keyColumns, row: "OLD", dialect: dialect)
        let values = table.columns.filter { !table.keyColumns.contains($0) }
        let changed = values.isEmpty ? "0" : values.map { "OLD.\(ident($0)) IS NOT NEW.\(ident($0))" }.joined(separator: " OR ")
        let insert = """
            CREATE TRIGGER \(ident("depot_sync_insert_" + table.name)) AFTER INSERT ON \(ident(table.name)) WHEN \(applying) BEGIN
              \(exhaustedGuard);
              \(stampSQL);
              INSERT INTO "depot_sync_rows" ("tbl", "row_key", "cl") VALUES (\(name), \(newKey), 1)
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 0;
              \(table.columns.map { clock($0, key: newKey, onlyIfChanged: false) }.joined(separator: "\n  "))
              \(enqueue(name, newKey))
            END
            """
        let update = """
            CREATE TRIGGER \(ident("depot_sync_update_" + table.name)) AFTER UPDATE ON \(ident(table.name)) WHEN \(applying) AND (\(changed)) BEGIN
              \(exhaustedGuard);
              \(stampSQL);
              \(values.map { clock($0, key: newKey, onlyIfChanged: true) }.joined(separator: "\n  "))
              \(enqueue(name, newKey))
            END
            """
        let key = """
            CREATE TRIGGER \(ident("depot_sync_key_" + table.name)) BEFORE UPDATE ON \(ident(table.name)) WHEN \(oldKey) IS NOT \(newKey) BEGIN
              SELECT RAISE(ABORT, \(literal("the key of a synced row never changes (\(table.name)): delete the row and insert another")));
            END
            """
        let delete = """
            CREATE TRIGGER \(ident("depot_sync_delete_" + table.name)) AFTER DELETE ON \(ident(table.name)) WHEN \(applying) BEGIN
              INSERT INTO "depot_sync_rows" ("tbl", "row_key", "cl") VALUES (\(name), \(oldKey), 2)
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 1;
              \(enqueue(name, oldKey))
            END
            """
        return [insert, update, key, delete]
    }
}

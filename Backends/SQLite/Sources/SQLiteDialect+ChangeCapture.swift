import Depot

/// A sync replica's capture on SQLite: four triggers per table, as
/// ``ChangeCapture`` says, in the write's own transaction.
extension SQLiteDialect: ChangeCapturingDialect {
    /// `max(hlc + 1, now in ms << 16)`, as `HybridClock.tick(at:)`; at the
    /// last value it would overflow (SQLite would store a REAL), so it
    /// becomes NULL, which the column refuses: the write fails rather than
    /// every later sync.
    public func clockTickStatement(_ tables: ChangeCapture.Tables) -> String {
        """
        UPDATE \(quote(identifier: tables.state)) SET "hlc" = CASE WHEN "hlc" < 9223372036854775807
            THEN max("hlc" + 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) << 16) END WHERE "id" = 1
        """
    }

    /// The four triggers' names.
    public func dropCaptureStatements(table: String) -> [String] {
        ["insert", "update", "delete", "key"].map { "DROP TRIGGER IF EXISTS " + quote(identifier: "depot_sync_\($0)_" + table) }
    }

    /// An insert stamps every column, an update the value columns it
    /// changed (one that changes none records nothing), a delete ends the
    /// row's life; a change of the key is refused.
    public func captureStatements(_ capture: ChangeCapture) -> [String] {
        let t = capture.tables
        let (state, rows, clocks, outbox) = (quote(identifier: t.state), quote(identifier: t.rows), quote(identifier: t.clocks), quote(identifier: t.outbox))
        let name = literal(capture.table)
        let table = quote(identifier: capture.table)
        let applying = "(SELECT \"applying\" FROM \(state) WHERE \"id\" = 1) = 0"
        let exhausted = "SELECT RAISE(ABORT, \(literal(capture.exhaustedMessage))) WHERE (SELECT \"hlc\" FROM \(state) WHERE \"id\" = 1) >= 9223372036854775807"
        func clock(_ column: String, key: String, onlyIfChanged: Bool) -> String {
            let quoted = quote(identifier: column)
            return """
                INSERT INTO \(clocks) ("tbl", "row_key", "col", "hlc", "node")
                  SELECT \(name), \(key), \(literal(column)), "hlc", "node" FROM \(state)
                  WHERE "id" = 1\(onlyIfChanged ? " AND OLD.\(quoted) IS NOT NEW.\(quoted)" : "")
                  ON CONFLICT ("tbl", "row_key", "col") DO UPDATE SET "hlc" = excluded."hlc", "node" = excluded."node";
                """
        }
        // Once per row until the next push takes it: entries up to push_upto are in flight.
        func enqueue(_ key: String) -> String {
            """
            INSERT INTO \(outbox) ("tbl", "row_key") SELECT \(name), \(key)
                    WHERE NOT EXISTS (SELECT 1 FROM \(outbox) WHERE "tbl" = \(name) AND "row_key" = \(key)
                      AND "seq" > (SELECT "push_upto" FROM \(state) WHERE "id" = 1));
            """
        }
        let (newKey, oldKey) = (capture.newKey, capture.oldKey)
        let values = capture.columns.filter { !capture.keyColumns.contains($0) }
        let changed = values.isEmpty ? "0" : values.map { "OLD.\(quote(identifier: $0)) IS NOT NEW.\(quote(identifier: $0))" }.joined(separator: " OR ")
        let tick = clockTickStatement(t)
        let insert = """
            CREATE TRIGGER \(quote(identifier: "depot_sync_insert_" + capture.table)) AFTER INSERT ON \(table) WHEN \(applying) BEGIN
              \(exhausted);
              \(tick);
              INSERT INTO \(rows) ("tbl", "row_key", "cl") VALUES (\(name), \(newKey), 1)
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 0;
              \(capture.columns.map { clock($0, key: newKey, onlyIfChanged: false) }.joined(separator: "\n  "))
              \(enqueue(newKey))
            END
            """
        let update = """
            CREATE TRIGGER \(quote(identifier: "depot_sync_update_" + capture.table)) AFTER UPDATE ON \(table) WHEN \(applying) AND (\(changed)) BEGIN
              \(exhausted);
              \(tick);
              \(values.map { clock($0, key: newKey, onlyIfChanged: true) }.joined(separator: "\n  "))
              \(enqueue(newKey))
            END
            """
        let key = """
            CREATE TRIGGER \(quote(identifier: "depot_sync_key_" + capture.table)) BEFORE UPDATE ON \(table) WHEN \(oldKey) IS NOT \(newKey) BEGIN
              SELECT RAISE(ABORT, \(literal(capture.keyChangeMessage)));
            END
            """
        let delete = """
            CREATE TRIGGER \(quote(identifier: "depot_sync_delete_" + capture.table)) AFTER DELETE ON \(table) WHEN \(applying) BEGIN
              INSERT INTO \(rows) ("tbl", "row_key", "cl") VALUES (\(name), \(oldKey), 2)
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = "cl" + 1 WHERE "cl" % 2 = 1;
              \(enqueue(oldKey))
            END
            """
        return [insert, update, key, delete]
    }

    /// A text literal: a trigger's body cannot bind values.
    private func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}

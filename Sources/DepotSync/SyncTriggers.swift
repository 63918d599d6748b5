@_spi(Sync) import Depot
import Foundation

/// What a replica's capture is told: its tables, its messages, and each
/// table's key text (the engine writes the triggers: ``ChangeCapturingDialect``).
enum SyncTriggers {
    /// The replica's tables, as the capture names them.
    static let tables = ChangeCapture.Tables(state: SyncTables.state, rows: SyncStateTables.replica.rows,
                                             clocks: SyncStateTables.replica.clocks, outbox: SyncTables.outbox)

    /// What a write says when the clock has no later stamp to give.
    static let exhausted = "the sync clock of this replica reached its last value: a stamp from elsewhere was far in the future"

    /// The capture of one synced table.
    static func capture(_ table: SyncedTable, dialect: some SQLDialect) -> ChangeCapture {
        ChangeCapture(table: table.name, keyColumns: table.keyColumns, columns: table.columns,
                      newKey: SyncKey.expression(table.keyColumns, row: "NEW", dialect: dialect),
                      oldKey: SyncKey.expression(table.keyColumns, row: "OLD", dialect: dialect),
                      tables: tables, exhaustedMessage: exhausted,
                      keyChangeMessage: "the key of a synced row never changes (\(table.name)): delete the row and insert another")
    }

    /// The engine's capture, or `misuse` on an engine that has none.
    static func capturing(_ dialect: any SQLDialect) throws -> any ChangeCapturingDialect {
        guard let capturing = dialect as? any ChangeCapturingDialect else {
            throw DatabaseError(.misuse, "a sync replica records writes with its engine's triggers, and \(dialect.engineName)'s dialect writes none "
                + "(a store on it can serve sync: SyncServer)")
        }
        return capturing
    }
}

import CSQLite
import Depot

/// The tables a connection's statements read and write, as SQLite's authorizer
/// reports them when a statement is compiled: writes by triggers and by
/// foreign-key actions included, and the tables behind a view.
///
/// A statement's reads and writes are kept with it; when it runs, its writes
/// join the transaction's. Statements compiled outside ``SQLiteStatement``
/// (scripts, automatic recompiles) add their writes to the transaction's at once.
final class SQLiteTableLog {
    private var statementReads: Set<String>?
    private var statementWrites: Set<String>?
    /// Whether the statement being compiled makes, alters or drops a schema
    /// object (or attaches a database), as the authorizer's action codes say.
    private var statementChangesSchema = false
    /// Tables written since the last ``takeWritten()``.
    private var written: Set<String> = []
    /// What each statement's text reads, for observations.
    private var readsBySQL: [String: Set<String>] = [:]
    private static let readsLimit = 1024

    /// Collects what the statement compiled next reads and writes.
    func beginStatement() {
        statementReads = []
        statementWrites = []
        statementChangesSchema = false
    }

    /// What the statement just compiled writes, and whether it changes the schema.
    func endStatement(sql: String) -> (writes: Set<String>, changesSchema: Bool) {
        let writes = statementWrites ?? []
        if readsBySQL.count >= Self.readsLimit { readsBySQL.removeAll(keepingCapacity: true) }
        readsBySQL[sql] = statementReads ?? []
        statementReads = nil
        statementWrites = nil
        defer { statementChangesSchema = false }
        return (writes, statementChangesSchema)
    }

    /// Forgets what the statement just compiled reads and writes: one compiled
    /// only to be looked at (an EXPLAIN), which never runs.
    func discardStatement() {
        statementReads = nil
        statementWrites = nil
    }

    /// Bumped each time the written tables are taken: a statement adds its
    /// writes once per transaction, not once per execution.
    private(set) var epoch = 0

    /// A statement that writes `tables` is about to run.
    func willRun(writing tables: Set<String>) {
        written.formUnion(tables)
    }

    func reads(ofSQL sql: String) -> Set<String>? { readsBySQL[sql] }

    func takeWritten() -> Set<String> {
        defer {
            written = []
            epoch &+= 1
        }
        return written
    }

    fileprivate func read(_ table: String) {
        statementReads?.insert(table)
    }

    fileprivate func changesSchema() {
        statementChangesSchema = true
    }

    /// The authorizer's action codes for statements that make, alter or drop
    /// tables, indexes, views, triggers and virtual tables, or attach and
    /// detach databases: what the connection keeps about the schema is stale after them.
    static let schemaActions: Set<Int32> = [
        SQLITE_CREATE_INDEX, SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_INDEX, SQLITE_CREATE_TEMP_TABLE,
        SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_VIEW, SQLITE_CREATE_TRIGGER, SQLITE_CREATE_VIEW,
        SQLITE_DROP_INDEX, SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_INDEX, SQLITE_DROP_TEMP_TABLE,
        SQLITE_DROP_TEMP_TRIGGER, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_TRIGGER, SQLITE_DROP_VIEW,
        SQLITE_ATTACH, SQLITE_DETACH, SQLITE_ALTER_TABLE, SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE,
    ]

    fileprivate func wrote(_ table: String) {
        if statementWrites != nil { statementWrites?.insert(table) } else { written.insert(table) }
    }

    /// Installs the authorizer that feeds `log` on `handle`; `log` must outlive the connection.
    static func install(_ log: SQLiteTableLog, on handle: OpaquePointer) {
        let callback: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                      UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32 = { context, action, first, _, _, _ in
            guard let context else { return SQLITE_OK }
            let log = Unmanaged<SQLiteTableLog>.fromOpaque(context).takeUnretainedValue()
            if SQLiteTableLog.schemaActions.contains(action) { log.changesSchema() }
            guard let first else { return SQLITE_OK }
            switch action {
            case SQLITE_READ, SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
                let table = String(cString: first)
                // SQLite's own tables (sqlite_schema, sqlite_sequence) are nobody's data.
                guard !table.hasPrefix("sqlite_") else { return SQLITE_OK }
                if action == SQLITE_READ { log.read(table) } else { log.wrote(table) }
            default:
                break
            }
            return SQLITE_OK
        }
        sqlite3_set_authorizer(handle, callback, Unmanaged.passUnretained(log).toOpaque())
    }
}

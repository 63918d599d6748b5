import CSQLite
import Depot
import Foundation

/// One SQLite connection, configured the way every Depot connection is:
/// extended result codes, foreign keys on, a busy timeout; the writer of a file
/// database in WAL mode, readers refusing writes.
final class SQLiteConnection: DriverConnection {
    let handle: OpaquePointer
    /// The tables statements read and write, from the authorizer.
    let tables = SQLiteTableLog()
    /// Tables found recorded by ``Database/enableObservation(of:)``.
    private var observableTables: Set<String> = []
    private var dataVersion: OpaquePointer?

    init(path: String, role: ConnectionRole, configuration: SQLiteConfiguration, isMemory: Bool, mode: SQLiteDriver.OpenMode = .readWrite) throws {
        var handle: OpaquePointer?
        let access = mode == .readWrite ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let code = sqlite3_open_v2(mode == .immutable ? Self.immutableURI(path) : path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError.make(code, handle)
            sqlite3_close_v2(handle)
            throw DatabaseError(.connection, "cannot open SQLite database at \(path): \(error.message)", engineCode: error.engineCode)
        }
        self.handle = handle
        SQLiteTableLog.install(tables, on: handle)
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        do {
            // "name" is an identifier on every engine: SQLite would otherwise read a quoted
            // name that matches no column as the text 'name', and answer silently.
            let dqs = depot_sqlite_disable_double_quoted_strings(handle)
            guard dqs == SQLITE_OK else { throw SQLiteError.make(dqs, handle, sql: nil) }
            // The query builder's checked integer arithmetic (see SQLiteDialect.integerArithmetic).
            let functions = depot_sqlite_register_functions(handle)
            guard functions == SQLITE_OK else { throw SQLiteError.make(functions, handle, sql: nil) }
            try Self.waitingWhileBusy(configuration.busyTimeout) {
                // Foreign keys are off by default in SQLite, per connection: turn them on for every one.
                try executeOnce("PRAGMA foreign_keys = ON")
                if role == .writer, !isMemory, mode == .readWrite {
                    try executeOnce("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
                }
                if role == .reader {
                    try executeOnce("PRAGMA query_only = ON")
                    queryOnly = true
                }
                readsNeverWait = try isMemory || mode == .immutable || journalMode() == "wal"
            }
        } catch let error as DatabaseError {
            sqlite3_close_v2(handle)
            throw DatabaseError(.connection, "cannot open SQLite database at \(path): \(error.message)", engineCode: error.engineCode)
        }
    }

    /// Runs `body` again while it fails with `SQLITE_BUSY`, until `timeout` has passed.
    ///
    /// Opening waits on a lock as any statement does. The busy timeout alone does
    /// not cover it: while another connection sets up a new file (switches it to
    /// WAL, or builds its WAL index), SQLite answers `SQLITE_BUSY` at once
    /// without calling the busy handler, so processes that open one new file
    /// together would fail.
    static func waitingWhileBusy(_ timeout: Duration, _ body: () throws -> Void) throws {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.kind == .busy && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds))
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }

    /// `file:PATH?immutable=1`, the path percent-encoded where a URI needs it.
    static func immutableURI(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path) + "?immutable=1"
    }

    func prepare(_ sql: String) throws -> any DriverStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    func execute(script: String) throws {
        // The user's SQL may set the flag Depot tracks: then it is unknown.
        if Self.mentionsQueryOnly(script) { queryOnly = nil }
        try executeOnce(script)
    }

    /// True in memory, for an immutable file, and in WAL mode (as found when
    /// the connection opened): there a reader takes no lock a writer holds,
    /// so a read only computes and reads the file. A file in a rollback
    /// journal mode (another app's database opened read-only) says false:
    /// its readers wait, up to the busy timeout, while a writer commits.
    private(set) var readsNeverWait = false

    /// The file's journal mode, in lower case ("wal", "delete", "memory"…).
    private func journalMode() throws -> String {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, "PRAGMA journal_mode", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard code == SQLITE_OK, let statement else { throw SQLiteError.make(code, handle, sql: nil) }
        let step = sqlite3_step(statement)
        guard step == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            throw SQLiteError.make(step == SQLITE_ROW ? SQLITE_ERROR : step, handle, sql: nil)
        }
        return String(cString: text).lowercased()
    }

    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    // Like the statements below, touched on the connection's queue only, one access at a time.
    /// The connection's `query_only` flag as Depot last set it; nil when unknown
    /// (SQL that names the flag ran, so it may have changed).
    @exclusivity(unchecked) var queryOnly: Bool? = false

    static func mentionsQueryOnly(_ sql: some StringProtocol) -> Bool {
        sql.range(of: "query_only", options: .caseInsensitive) != nil
    }

    // MARK: Transactions

    /// `BEGIN IMMEDIATE` for writes, so the write lock is taken up front and a
    /// busy database fails at BEGIN, not halfway through; `BEGIN DEFERRED` for
    /// reads. Each access also sets `query_only`, so a read refuses writes even
    /// on the single connection of an in-memory store. SQLite transactions are
    /// always serializable, so the isolation level changes nothing.
    func beginTransaction(_ transaction: TransactionOptions) throws {
        let wanted = transaction.isReadOnly
        if queryOnly != wanted {
            // Setting the flag expires every compiled statement of the connection (SQLite
            // then compiles each one again at its next step), so it is set only when it
            // changes. It takes effect when the PRAGMA is compiled: never keep that compiled.
            queryOnly = nil
            try executeOnce(wanted ? "PRAGMA query_only = ON" : "PRAGMA query_only = OFF")
            queryOnly = wanted
        }
        try runControl(wanted ? .beginDeferred : .beginImmediate)
    }

    func commitTransaction() throws { try runControl(.commit) }
    /// `ROLLBACK`. An interrupt that came while a statement of the access was
    /// still open (stepped, not reset: a read the access left unfinished)
    /// stays pending until every statement is done, and would fail the
    /// rollback with `SQLITE_INTERRUPT`; the store would then replace the
    /// connection, and an in-memory store's replaced connection is an empty
    /// database. So the open statements are reset (the access is over) and
    /// the rollback runs again.
    func rollbackTransaction() throws {
        try undoingAnInterrupt { try runControl(.rollback) }
    }
    func createSavepoint(named name: String) throws { try runControl("SAVEPOINT " + name) }
    func releaseSavepoint(named name: String) throws { try undoingAnInterrupt { try runControl("RELEASE SAVEPOINT " + name) } }
    func rollbackToSavepoint(named name: String) throws { try undoingAnInterrupt { try runControl("ROLLBACK TO SAVEPOINT " + name) } }

    /// Runs a statement that undoes or ends work (a rollback, a release) again
    /// when an interrupt stopped it: a cancelled access's interrupt may land
    /// after its last statement, or while a read of it is still open, and SQLite
    /// clears the interrupt only when a statement starts with none running. So
    /// the open statements are reset and the statement is tried again (a few
    /// times: the interrupt comes from another thread, and may come late). A
    /// rollback that fails breaks the connection, and an in-memory database
    /// lives in its connection.
    private func undoingAnInterrupt(_ body: () throws -> Void) throws {
        var attempts = 0
        while true {
            do {
                return try body()
            } catch is DatabaseError where sqlite3_errcode(handle) == SQLITE_INTERRUPT && sqlite3_get_autocommit(handle) == 0 && attempts < 3 {
                attempts += 1
                var statement = sqlite3_next_stmt(handle, nil)
                while let open = statement {
                    if sqlite3_stmt_busy(open) != 0 { sqlite3_reset(open) }
                    statement = sqlite3_next_stmt(handle, open)
                }
            }
        }
    }

    /// The statements every access runs, by their place in ``frequentControl``.
    private enum Frequent: Int, CaseIterable {
        case beginDeferred, beginImmediate, commit, rollback
        var sql: String { ["BEGIN DEFERRED", "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK"][rawValue] }
    }

    /// Every access's BEGIN and COMMIT, compiled once and found without hashing.
    @exclusivity(unchecked) private var frequentControl: [OpaquePointer?] = Array(repeating: nil, count: Frequent.allCases.count)

    private func runControl(_ frequent: Frequent) throws {
        if let statement = frequentControl[frequent.rawValue] { return try step(control: statement) }
        let statement = try compileControl(frequent.sql)
        frequentControl[frequent.rawValue] = statement
        try step(control: statement)
    }

    /// Savepoint statements, which this connection writes itself, compiled once
    /// and kept: compiling one costs more than running it.
    @exclusivity(unchecked) private var controlStatements: [String: OpaquePointer] = [:]

    /// Runs one transaction control statement, compiled on first use.
    private func runControl(_ sql: String) throws {
        let statement: OpaquePointer
        if let compiled = controlStatements[sql] {
            statement = compiled
        } else {
            statement = try compileControl(sql)
            controlStatements[sql] = statement
        }
        try step(control: statement)
    }

    private func compileControl(_ sql: String) throws -> OpaquePointer {
        var compiled: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
        guard code == SQLITE_OK, let compiled else {
            throw SQLiteError.make(sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
        }
        return compiled
    }

    private func step(control statement: OpaquePointer) throws {
        let code = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else {
            throw SQLiteError.make(sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    private func executeOnce(_ script: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, script, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            throw SQLiteError.make(sqlite3_extended_errcode(handle), message: text)
        }
    }

    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    var isUsable: Bool { true }

    func interrupt() { sqlite3_interrupt(handle) }

    func close() {
        sqlite3_finalize(dataVersion)
        dataVersion = nil
        controlStatements.values.forEach { sqlite3_finalize($0) }
        controlStatements.removeAll()
        frequentControl.forEach { sqlite3_finalize($0) }
        frequentControl = Array(repeating: nil, count: Frequent.allCases.count)
        // close_v2 defers the close until cached statements are finalized.
        sqlite3_close_v2(handle)
    }
}

extension SQLiteConnection: ReadTrackingConnection, WriteTrackingConnection {
    func tablesRead(bySQL sql: String, values: [Value]) throws -> Set<String>? {
        var reads = tables.reads(ofSQL: sql)
        if reads == nil {
            // Compiled before the log forgot it: compiling again tells.
            _ = try SQLiteStatement(connection: self, sql: sql)
            reads = tables.reads(ofSQL: sql)
        }
        for table in reads ?? [] where !observableTables.contains(table) { try requireObservable(table) }
        return reads
    }

    /// Fails unless ``Database/enableObservation(of:)`` recorded the table (SQLite's
    /// own tables and the record itself need not be).
    private func requireObservable(_ table: String) throws {
        let lowered = table.lowercased()
        if lowered.hasPrefix("sqlite_") || lowered == "depotobservedtables" { return }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        let sql = "SELECT 1 FROM \"depotObservedTables\" WHERE \"name\" = ?1"
        let recorded = sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK
            && sqlite3_bind_text(statement, 1, table, -1, depot_sqlite_transient()) == SQLITE_OK
            && sqlite3_step(statement) == SQLITE_ROW
        guard recorded else { throw DatabaseError.notObservable(table) }
        observableTables.insert(table)
    }

    func takeWrittenTables() -> Set<String> {
        tables.takeWritten()
    }

    /// `PRAGMA data_version`: changes when another connection commits, never for this one's commits.
    func externalChangeCounter() throws -> Int64? {
        if dataVersion == nil {
            let code = sqlite3_prepare_v3(handle, "PRAGMA data_version", -1, UInt32(SQLITE_PREPARE_PERSISTENT), &dataVersion, nil)
            guard code == SQLITE_OK else { throw SQLiteError.make(code, handle, sql: "PRAGMA data_version") }
        }
        defer { sqlite3_reset(dataVersion) }
        let code = sqlite3_step(dataVersion)
        guard code == SQLITE_ROW else { throw SQLiteError.make(code, handle, sql: "PRAGMA data_version") }
        return sqlite3_column_int64(dataVersion, 0)
    }
}

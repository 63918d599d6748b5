import CoreMetrics
import Foundation

/// A connection inside one access of a ``Store``: what the closures of
/// `read` and `write` receive.
///
/// ```swift
/// try await store.write { db in
///     try db.execute("UPDATE reminders SET \(ident: "isFlagged") = \(true) WHERE id = \(id)")
///     let count = try db.fetchOne(Int.self, "SELECT count(*) FROM reminders")
/// }
/// ```
///
/// Caveat: a `Database` is valid only during the closure that received it;
/// using it afterwards throws a `misuse` error.
public final class Database {
    /// The engine's dialect, for SQL that must differ between engines.
    public let dialect: any SQLDialect
    /// The dialect as the query builder uses it; nil when the backend renders no queries.
    private(set) lazy var queryDialect: (any QueryDialect)? = dialect as? any QueryDialect
    /// The store's settings: coders and error verbosity.
    public var configuration: Store.Configuration { settings.configuration }
    /// The store's settings, shared: an access holds a reference, not a copy.
    let settings: StoreSettings
    let connection: PooledConnection
    /// The store's coders' options.
    var coding: CodingOptions { settings.coding }
    let cancellation: CancellationFlag
    /// The access this `Database` was made for.
    let access: Access
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    // Read before every statement, on the connection's queue.
    @exclusivity(unchecked) private var isValid = true
    /// Whether the access is still running and no statement failed: the cheap part of ``checkUsable()``.
    var isOpen: Bool { isValid && failedAtDepth == nil }
    @exclusivity(unchecked) private var savepointDepth = 0
    /// The savepoint depth at which an engine error left the transaction failed, if one did.
    @exclusivity(unchecked) private var failedAtDepth: Int?
    /// Whether the access's closure started: before it, a failure changed nothing.
    @exclusivity(unchecked) private(set) var bodyStarted = false

    /// What this access logs; nil when its logger would drop everything.
    let log: AccessLog?
    /// Where statement durations go; nil when the store records no metrics.
    let metrics: StoreMetrics?

    /// The access's span, for the statements' spans; nil when the store traces nothing.
    let tracing: AccessTracing?
    /// Whether statements are logged, timed or traced: when not, a statement
    /// records nothing and costs nothing for it.
    let recordsStatements: Bool
    /// Whether a statement keeps its bound values after binding them: for an
    /// error that shows them, a log line, or an observation's read.
    var keepsValues: Bool { recordsStatements || settings.showsBoundValues || readRecorder != nil }

    /// Collects the tables the statements read, when an observation reads.
    let readRecorder: ReadRecorder?
    /// The store's observations, told about this access's commit.
    let observers: ObservationCenter?
    /// Tables the closure said it changed (``notifyChanges(in:)``).
    @exclusivity(unchecked) var notifiedTables: Set<String> = []
    /// Whether a write asks its connection where its commit ends in the log.
    let tracksCommitPosition: Bool
    /// The record operations' cache on this connection.
    var recordCache: RecordCache { connection.records }
    /// The query builder's cache on this connection.
    var queryCache: QueryCache { connection.queries }
    /// Column names of generated mappings under the store's key strategy.
    var columnNames: ColumnNamesCache { connection.columnNames }
    /// Where the write's commit ends in the log, once committed (when tracked).
    @exclusivity(unchecked) private(set) var commitPosition: CommitPosition?
    /// What a read's server must have applied before the read begins, and how long to wait for it.
    let replayTarget: (CommitPosition, Duration)?

    init(connection: PooledConnection, dialect: any SQLDialect, settings: StoreSettings, cancellation: CancellationFlag,
         log: AccessLog?, metrics: StoreMetrics?, tracing: AccessTracing?,
         readRecorder: ReadRecorder?, observers: ObservationCenter?, tracksCommitPosition: Bool, replayTarget: (CommitPosition, Duration)?,
         access: Access) {
        self.access = access
        self.readRecorder = readRecorder
        self.observers = observers
        self.tracksCommitPosition = tracksCommitPosition
        self.replayTarget = replayTarget
        self.log = log
        self.tracing = tracing
        self.metrics = metrics
        self.recordsStatements = log != nil || metrics != nil || tracing != nil
        self.connection = connection
        self.dialect = dialect
        self.settings = settings
        self.cancellation = cancellation
    }

    /// Ends this access: open cursors are closed and further use throws.
    func invalidate() {
        closeCursors()
        isValid = false
    }

    private func closeCursors() {
        guard !openCursors.isEmpty else { return }
        for entry in openCursors { entry.cursor?.close() }
        openCursors.removeAll()
    }

    /// Cursors opened in this access, held weakly, closed when it ends.
    @exclusivity(unchecked) var openCursors: [WeakCursor] = []

    /// The engine's name: `SQLite` or `PostgreSQL`.
    public var engineName: String { dialect.engineName }

    // MARK: Transactions

    func inTransaction<T>(_ kind: TransactionKind, isolation: IsolationLevel?, _ body: (Database) throws -> T) throws -> T {
        // Cancellation is checked before BEGIN (`control` checks it), and here
        // first only when a replica wait comes before.
        if let (position, timeout) = replayTarget, let replicated = connection.driver as? any ReplicatedConnection {
            try checkCancellation()
            let cancellation = self.cancellation
            do {
                try replicated.waitForReplay(to: position, timeout: timeout) {
                    cancellation.isCancelled || cancellation.isStopped || cancellation.timeout != nil
                }
            } catch let error as DatabaseError where error.kind != .connection {
                try checkCancellation()
                throw error
            }
            try checkCancellation()
        }
        let transaction = TransactionOptions(kind, isolation: isolation)
        let driver = connection.driver
        try control(transaction.description) { try driver.beginTransaction(transaction) }
        do {
            bodyStarted = true
            let result: T
            do {
                result = try body(self)
            } catch {
                // Repeated interrupts stop here: the ROLLBACK below is the access's own.
                cancellation.settle()
                throw error
            }
            cancellation.settle()
            closeCursors()
            // COMMIT's `control` checks cancellation first: a cancelled access rolls back.
            do {
                if kind == .write, tracksCommitPosition, let replicated = driver as? any ReplicatedConnection {
                    commitPosition = try control("COMMIT") { try replicated.commitReturningPosition() }
                } else {
                    try control("COMMIT") { try driver.commitTransaction() }
                }
            } catch let error as DatabaseError where error.kind == .connection && kind == .write {
                throw error.lostDuringCommit()
            }
            if kind == .write { didCommit() }
            return result
        } catch {
            closeCursors()
            rollback()
            _ = connection.writeTracking?.takeWrittenTables()
            // A COMMIT sent and never answered may have committed: that wins over
            // whatever stopped the access meanwhile, which would say it rolled back.
            if let error = error as? DatabaseError, error.commitOutcomeUnknown { throw error }
            if cancellation.isCancelled { throw CancellationError() }
            if let timeout = cancellation.timeout { throw DatabaseError.accessTimedOut(timeout) }
            if cancellation.isStopped { throw DatabaseError.stoppedByShutdown }
            throw error
        }
    }

    /// Tells the store's observations which tables the committed transaction wrote.
    private func didCommit() {
        var written = connection.writeTracking?.takeWrittenTables() ?? []
        written.formUnion(notifiedTables)
        if !written.isEmpty { observers?.notify(.tables(written)) }
    }

    /// Rolls back, and makes sure the connection leaves no transaction open:
    /// if it cannot, the connection is marked broken and never reused.
    /// An error as a reason a connection broke: a database error's kind and
    /// message (never its SQL or bound values), else its type.
    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return "\(error.kind.rawValue): \(error.message)" }
        return "\(type(of: error))"
    }

    private func rollback() {
        if connection.driver.isInTransaction {
            do {
                log?.script("ROLLBACK")
                try connection.driver.rollbackTransaction()
            } catch {
                connection.markBroken("its rollback failed: \(Self.reason(error))")
            }
        }
        if connection.driver.isInTransaction {
            connection.markBroken("a transaction stayed open after the rollback")
        } else if !connection.driver.isUsable {
            connection.markBroken("the driver found it unusable")
        }
    }

    /// Runs the closure in a savepoint: a nested transaction that rolls back
    /// alone when the closure throws, leaving the enclosing transaction open.
    ///
    /// ```swift
    /// try await store.write { db in
    ///     try db.insert(list)
    ///     try? db.savepoint { db in
    ///         try db.insert(duplicate)   // throws: only this part rolls back
    ///     }
    /// }                                  // `list` is committed
    /// ```
    public func savepoint<T>(_ body: (Database) throws -> T) throws -> T {
        try checkUsable()
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "depot_savepoint_\(savepointDepth)"
        let driver = connection.driver
        try control("SAVEPOINT " + name) { try driver.createSavepoint(named: name) }
        do {
            let result = try body(self)
            try control("RELEASE SAVEPOINT " + name) { try driver.releaseSavepoint(named: name) }
            return result
        } catch {
            guard driver.isInTransaction else {
                // The engine rolled the whole transaction back itself (SQLite does on an
                // interrupt, InnoDB on a deadlock): the savepoint went with it. The
                // connection is sound, and the access can only end: a statement now
                // would run, and commit, outside any transaction.
                failedAtDepth = 0
                throw error
            }
            do {
                log?.script("ROLLBACK TO SAVEPOINT " + name)
                try driver.rollbackToSavepoint(named: name)
                try driver.releaseSavepoint(named: name)
                if let failed = failedAtDepth, failed >= savepointDepth { failedAtDepth = nil }
            } catch {
                connection.markBroken("its rollback to a savepoint failed: \(Self.reason(error))")
            }
            throw error
        }
    }

    // MARK: Statements

    /// Runs a statement and returns the number of rows it changed.
    ///
    /// Rows a statement returns are read and discarded.
    @discardableResult
    public func execute(_ sql: SQL) throws -> Int {
        try withStatement(sql) { statement, _ in
            while try statement.step() {}
            forgetSchemaFacts(after: statement)
            return statement.changes
        }
    }

    /// Schema facts the connection keeps (which columns have key generators,
    /// its prepared statements, whose result types may change) may change with
    /// DDL: forget them after a statement the engine reports as a schema change.
    func forgetSchemaFacts(after statement: any DriverStatement) {
        guard statement.changedSchema else { return }
        connection.forgetSchemaFacts()
    }

    /// Runs several statements separated by semicolons, for migrations and schema scripts.
    ///
    /// - Throws: a `misuse` error when the script binds values: only a single
    ///   statement can bind.
    public func execute(script: SQL) throws {
        try checkUsable()
        let (text, values) = try script.rendered(for: dialect)
        guard values.isEmpty else {
            throw DatabaseError.misuse("a script cannot bind values; run statements that bind one at a time with execute(_:)").with(sql: text, values: nil)
        }
        // A script (a migration) may change anything.
        connection.forgetSchemaFacts()
        // Logged, timed and traced as one statement.
        let record = StatementRecord.start(self, text: text)
        do {
            try control(text) { try connection.driver.execute(script: text) }
        } catch {
            record?.end(self, values: [], changes: nil, error: error)
            throw error
        }
        record?.end(self, values: [], changes: nil, error: nil)
    }

    /// Takes the migration lock `key` for this write transaction, through the
    /// connection's own call (``DriverConnection/lockForMigration(key:)``):
    /// another transaction that takes it waits until this one ends. Logged as
    /// `migration lock <key>`.
    @_spi(Driver)
    public func lockForMigration(key: Int64) throws {
        try control("migration lock \(key)") { try connection.driver.lockForMigration(key: key) }
    }

    func runScript(_ text: String) throws {
        try control(text) { try connection.driver.execute(script: text) }
    }

    /// Runs a script or a transaction control call through `body` (the
    /// driver's own way of running it), logged, with an engine failure noted
    /// and `text` (the script, or how the log names the call) in the error.
    /// The text is made only when it is logged or an error names it.
    @inline(__always)
    func control<T>(_ text: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        try checkUsable()
        if let log, log.scripts { log.script(text()) }
        do {
            return try body()
        } catch let error as DatabaseError {
            noteEngineFailure()
            throw error.with(sql: text(), values: nil)
        }
    }

    func checkUsable() throws {
        guard isValid else {
            throw DatabaseError.misuse("this Database was used after its read or write closure returned")
        }
        try checkCancellation()
        if failedAtDepth != nil {
            throw DatabaseError.misuse("an earlier statement of this transaction failed, so it can only roll back (PostgreSQL refuses further statements, and Depot makes every engine agree); run statements that may fail in db.savepoint { } to go on after them")
        }
    }

    /// Records that the engine refused a statement: like PostgreSQL, every engine
    /// then refuses further statements until the enclosing savepoint rolls back.
    func noteEngineFailure() {
        if bodyStarted, failedAtDepth == nil { failedAtDepth = savepointDepth }
    }

    func checkCancellation() throws {
        switch cancellation.interruption {
        case nil: return
        case .cancelled: throw CancellationError()
        case .timedOut(let timeout): throw DatabaseError.accessTimedOut(timeout)
        case .stopped: throw DatabaseError.stoppedByShutdown
        }
    }

    /// The decode plan for this statement's columns and a type, made once per connection.
    func plan(for statement: any DriverStatement, _ type: Any.Type) -> DecodePlan {
        connection.plan(columns: statement.columns, type: type, options: coding.decoding)
    }

    /// A statement reading the rows of the SELECT `text` through the
    /// connection's bulk export path; a `misuse` error on a connection without one.
    func prepareCopyOut(_ text: String) throws -> any DriverStatement {
        guard let copying = connection.driver as? any CopyingOutConnection else {
            throw DatabaseError.misuse("this engine has no bulk export path").with(sql: text, values: nil)
        }
        do {
            return try copying.prepareCopyOut(select: text)
        } catch let error as DatabaseError {
            noteEngineFailure()
            throw error.with(sql: text, values: nil)
        }
    }

    func prepare(_ text: String) throws -> (any DriverStatement, cached: CachedStatement?) {
        do {
            return try connection.statement(text)
        } catch let error as DatabaseError {
            noteEngineFailure()
            throw error.with(sql: text, values: nil)
        }
    }
}

extension DatabaseError {
    /// The store shut down before the access finished.
    static var stoppedByShutdown: DatabaseError {
        DatabaseError(.interrupted, "the store shut down before the access finished; its transaction rolled back")
    }

    /// An access ran past ``Store/Configuration/accessTimeout``.
    static func accessTimedOut(_ timeout: Duration) -> DatabaseError {
        DatabaseError(.timeout, "the access ran longer than its timeout (\(timeout)) and was interrupted; its transaction rolled back")
    }

    /// Whether the engine refused the statement (it carries the engine's code), as
    /// opposed to Depot refusing a value or a row before or after the engine ran it.
    var isEngineFailure: Bool { engineCode != nil }

    /// A decoding failure, with the column, coding path and SQL it happened at.
    init(decoding error: DecodingError, sql: String?, values: [Value]?) {
        let context: DecodingError.Context?
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c), .keyNotFound(_, let c): context = c
        @unknown default: context = nil
        }
        let failure = context?.underlyingError as? ColumnFailure
        var path = context?.codingPath ?? []
        if case .keyNotFound(let key, _) = error { path.append(key) }
        self.init(.decoding, failure?.message ?? context?.debugDescription ?? "\(error)",
                  column: failure?.column, columnIndex: failure?.index,
                  codingPath: describe(codingPath: path), sql: sql)
        self.boundValues = values
    }
}

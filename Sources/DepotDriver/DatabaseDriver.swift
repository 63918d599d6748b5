/// The interface a backend implements: the one seam between Depot's core and an engine.
///
/// A backend provides a driver (how to open connections, and the engine's
/// ``SQLDialect``), a connection (prepare, run a script, interrupt) and a
/// statement (bind, step, read a column). Everything else (pooling, threads,
/// transactions, savepoints, cancellation, Codable mapping, records,
/// migrations) lives in the core once, so a backend stays small.
///
/// The contract, which `DepotConformance` checks:
/// - Every call on a connection and its statements comes from one thread at a
///   time (each connection has its own serial queue); only
///   ``DriverConnection/interrupt()`` may come from another thread.
/// - Failures are thrown as ``DatabaseError`` with the right ``DatabaseError/Kind``
///   and the engine's own code and message.
/// - ``RowSource/value(at:)`` (a ``DriverStatement`` is one) returns the engine's value faithfully:
///   never a default for NULL, never a truncated number.
/// - Blocking calls are fine: the core never calls a driver from Swift's cooperative thread pool,
///   except for the reads of a connection that says its reads never wait
///   (``DriverConnection/readsNeverWait``).
public protocol DatabaseDriver: Sendable {
    /// The engine's dialect.
    var dialect: any SQLDialect { get }
    /// How many connections the store keeps, and which serve writes.
    var poolLayout: PoolLayout { get }
    /// Opens and configures one connection.
    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection
    /// Whether the database lives only as long as its one connection (an
    /// in-memory SQLite database). Default: false.
    ///
    /// When such a connection breaks, the store does not open another in its
    /// place (it would be an empty database): that access and every later one
    /// fail with a `connection` error that says the data is gone.
    var databaseLivesInItsConnection: Bool { get }
}

extension DatabaseDriver {
    /// False: a server's or a file's database outlives any one connection.
    public var databaseLivesInItsConnection: Bool { false }
}

/// Which accesses a connection serves.
public enum ConnectionRole: Sendable, Hashable {
    /// Writes (and reads, for a single-connection store).
    case writer
    /// Reads only.
    case reader
}

/// How a store spreads its accesses over connections.
public enum PoolLayout: Sendable, Hashable {
    /// One connection serves every access in turn (an in-memory SQLite database).
    case single
    /// One writer, and up to `readers` connections that run reads beside it (SQLite in WAL mode).
    case oneWriter(readers: Int)
    /// Up to `max` connections, each of which serves reads and writes (a server).
    case shared(max: Int)
    /// Up to `primary` connections to the primary, which serve writes and reads
    /// routed to it, and up to `replicas` reader connections to its replicas
    /// (a PostgreSQL primary with hot standbys). A reader connection may land on
    /// the primary when no replica is reachable.
    case primaryAndReplicas(primary: Int, replicas: Int)
}

/// One open connection to the engine. Used from one thread at a time.
public protocol DriverConnection: AnyObject {
    /// Compiles one statement. The core caches the result per connection.
    func prepare(_ sql: String) throws -> any DriverStatement
    /// Runs statements that bind nothing, such as a migration script.
    ///
    /// Transaction control never comes through here: the core calls the
    /// members below, so a backend never parses SQL the core wrote.
    func execute(script: String) throws

    // Transaction control. Each has a default that runs standard SQL through
    // ``execute(script:)``; a backend overrides one to spell it its own way, to
    // defer it (PostgreSQL sends `BEGIN` with the access's first statement), or
    // to track what it sent.

    /// Begins the transaction of one access. The default runs
    /// `START TRANSACTION [ISOLATION LEVEL …][, READ ONLY]`.
    func beginTransaction(_ transaction: TransactionOptions) throws
    /// Commits the open transaction. The default runs `COMMIT`.
    ///
    /// Caveat: when the connection is lost after the commit was sent, throw a
    /// `connection` error: the core tells the caller that the outcome is unknown.
    func commitTransaction() throws
    /// Rolls the open transaction back. The default runs `ROLLBACK`.
    func rollbackTransaction() throws
    /// Marks a savepoint inside the open transaction. The default runs `SAVEPOINT name`.
    ///
    /// Names are made by the core from ASCII letters, digits and `_`: they need no quoting.
    func createSavepoint(named name: String) throws
    /// Forgets a savepoint, keeping its work. The default runs `RELEASE SAVEPOINT name`.
    func releaseSavepoint(named name: String) throws
    /// Undoes the work since a savepoint, which stays marked. The default runs `ROLLBACK TO SAVEPOINT name`.
    func rollbackToSavepoint(named name: String) throws

    /// Takes the migration lock `key` inside the open write transaction:
    /// another connection that takes the same key (another process's migrator)
    /// waits until this transaction ends, by COMMIT or ROLLBACK, and then sees
    /// what it committed. ``Migrator`` takes it first, so migrators racing on
    /// one database apply each migration once.
    ///
    /// The default does nothing: right where every write transaction already
    /// excludes every other (SQLite's `BEGIN IMMEDIATE`). A lock that outlives
    /// the transaction on its engine (MariaDB's `GET_LOCK`) is the
    /// connection's to release when the transaction ends.
    ///
    /// - Throws: a `busy` error when another holder kept the lock past the
    ///   engine's wait.
    func lockForMigration(key: Int64) throws

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool { get }
    /// Whether the connection can still be used; false once it is broken.
    var isUsable: Bool { get }
    /// Whether the pool should close this healthy connection and open a new
    /// one when it comes back: a reader that fell back to the primary while no
    /// replica answered, once it is time to look for a replica again. The
    /// default is false.
    var wantsReplacement: Bool { get }
    /// Whether a read transaction on this connection only computes: it never
    /// waits on a network, on another process, or on another connection of
    /// this one (SQLite in WAL mode or in memory: readers take no lock a
    /// writer holds). The core may then run a read access on the calling
    /// task's thread instead of the connection's queue, saving two thread
    /// hops (see ``Store/Configuration/readsRunOnCallingThread``). The default
    /// is false; say true only when it holds for every read the engine runs,
    /// from `BEGIN` to `COMMIT`.
    var readsNeverWait: Bool { get }
    /// The server this connection reached, for the log line that says a
    /// connection opened (`db2:5432, standby`); nil when there is nothing to
    /// tell. The default is nil.
    var serverDescription: String? { get }
    /// Stops the statement running now, if any. Called from another thread.
    ///
    /// Nothing needs remembering when no statement runs: an interrupt that
    /// comes just before a statement starts reaches nothing, so the core
    /// interrupts again (after 10 ms, then less and less often) until the
    /// access's closure ends. An interrupt must therefore be harmless with
    /// nothing running, and must not break the connection.
    func interrupt()
    /// Closes the connection. Statements it prepared are released first.
    func close()
}

/// A prepared statement. The core binds it, steps through its rows, and resets it for reuse.
public protocol DriverStatement: AnyObject, RowSource {
    /// Resets the statement and binds values to its placeholders, in order.
    func bind(_ values: [Value]) throws
    /// Advances to the next row: true when a row is available, false when done.
    func step() throws -> Bool
    /// Resets the statement so it can run again; keeps it compiled.
    func reset()
    /// The number of rows the last completed INSERT, UPDATE or DELETE changed.
    var changes: Int { get }
    /// Whether the statement that just ran made, altered or dropped a table,
    /// index, view or trigger, as the engine tells it: asked after the last
    /// ``step()`` of a run. The connection then forgets what it keeps about the
    /// schema (its prepared statements, which columns have key generators).
    ///
    /// Answer from what the engine reports (SQLite's authorizer, PostgreSQL's
    /// command tag, MariaDB's implicit commit), never from the statement's
    /// text: a comment or a blank line before `ALTER` is still a schema change.
    /// Where the engine cannot tell, answer true for every statement that
    /// might be one: a wrong false leaves prepared statements of a table that
    /// changed; a wrong true costs a re-prepare.
    var changedSchema: Bool { get }
    /// Called after ``bind(_:)`` when a cursor will read the rows one at a time:
    /// a backend that buffers whole results should fetch row by row instead, so
    /// memory stays flat. The default does nothing.
    func prepareForStreaming() throws
    /// Whether the engine compiled the statement, as it runs now, into a plan
    /// that returns one row at most: a lookup by a key the engine itself holds
    /// unique (SQLite's rowid, a unique index). Asked on a row, after the first
    /// step. `find` then stops at the row it found; otherwise it steps again to
    /// prove the record type's key unique in the table. The default is false.
    ///
    /// Caveat: say true only when the engine guarantees it for every value
    /// bound; a wrong true lets a key that is not unique go unnoticed.
    var returnsOneRowAtMost: Bool { get }
}

/// The transaction an access begins: whether it may write, and its isolation level.
public struct TransactionOptions: Sendable, Hashable, CustomStringConvertible {
    /// A read or a write.
    public var kind: TransactionKind
    /// The level the caller chose, or nil for the engine's default for this kind.
    public var isolation: IsolationLevel?

    /// Creates the options of one transaction.
    public init(_ kind: TransactionKind, isolation: IsolationLevel? = nil) {
        self.kind = kind
        self.isolation = isolation
    }

    /// Whether the transaction may not write: true for a read.
    public var isReadOnly: Bool { kind == .read }

    /// Standard SQL: `START TRANSACTION`, then the isolation level and `READ ONLY`
    /// when they apply, separated by a comma.
    public var standardSQL: String {
        var modes: [String] = []
        if let isolation { modes.append("ISOLATION LEVEL " + isolation.rawValue) }
        if isReadOnly { modes.append("READ ONLY") }
        return modes.isEmpty ? "START TRANSACTION" : "START TRANSACTION " + modes.joined(separator: ", ")
    }

    /// `BEGIN read`, `BEGIN write, SERIALIZABLE`: how logs name it.
    public var description: String {
        "BEGIN " + (kind == .read ? "read" : "write") + (isolation.map { ", " + $0.rawValue } ?? "")
    }
}

extension DriverConnection {
    /// Runs ``TransactionOptions/standardSQL``.
    public func beginTransaction(_ transaction: TransactionOptions) throws { try execute(script: transaction.standardSQL) }
    /// Runs `COMMIT`.
    public func commitTransaction() throws { try execute(script: "COMMIT") }
    /// Runs `ROLLBACK`.
    public func rollbackTransaction() throws { try execute(script: "ROLLBACK") }
    /// Runs `SAVEPOINT name`.
    public func createSavepoint(named name: String) throws { try execute(script: "SAVEPOINT " + name) }
    /// Runs `RELEASE SAVEPOINT name`.
    public func releaseSavepoint(named name: String) throws { try execute(script: "RELEASE SAVEPOINT " + name) }
    /// Runs `ROLLBACK TO SAVEPOINT name`.
    public func rollbackToSavepoint(named name: String) throws { try execute(script: "ROLLBACK TO SAVEPOINT " + name) }
}

extension DriverConnection {
    /// Does nothing: the engine's write transactions already exclude each other.
    public func lockForMigration(key: Int64) throws {}
    /// False: a healthy connection is kept.
    public var wantsReplacement: Bool { false }
    /// False: a read may wait (on a server, or on a lock), so it runs on the connection's queue.
    public var readsNeverWait: Bool { false }
    /// Nil: nothing to tell.
    public var serverDescription: String? { nil }
}

extension DriverStatement {
    /// Does nothing: most engines already read row by row.
    public func prepareForStreaming() throws {}

    /// False: the engine does not say.
    public var returnsOneRowAtMost: Bool { false }
}

/// A connection with a bulk export path, such as PostgreSQL's binary
/// `COPY (SELECT ...) TO STDOUT`. Optional: ``Store/copyRows(_:bufferSize:)``
/// uses it for a query that binds no values, and streams the SELECT's own rows
/// otherwise. A call, not a statement: the backend writes its own COPY text.
public protocol CopyingOutConnection: DriverConnection {
    /// A statement whose rows are those of `select` (which binds no values),
    /// read through the engine's bulk export path as the SELECT's own rows
    /// would be: the same columns, the same values, in the same order.
    /// ``Store/copyRows(_:bufferSize:)`` runs it; the core does not cache it.
    func prepareCopyOut(select: String) throws -> any DriverStatement
}

/// A connection with a faster way to insert many rows than repeated INSERTs,
/// such as PostgreSQL's COPY. Optional: the core uses it for batch inserts when
/// a connection offers it, and multi-row INSERTs otherwise.
///
/// The contract is the INSERT's: the same rows, the same defaults for the columns
/// left out, the same constraint errors; all or none, inside the caller's savepoint.
public protocol BulkInsertingConnection: DriverConnection {
    /// Starts a bulk insert into `table`'s `columns`.
    func beginBulkInsert(table: String, columns: [String]) throws -> any BulkInsertWriter
}

/// Receives the rows of one bulk insert.
public protocol BulkInsertWriter: AnyObject {
    /// The statement the insert runs (`COPY "t" ("a", "b") FROM STDIN`), for the
    /// log line, span and metric the core records of it.
    var sql: String { get }
    /// Adds a row: one value per column, in order.
    func append(_ values: [Value]) throws
    /// Sends what is left and waits for the engine's verdict.
    func finish() throws
    /// Abandons the insert; the caller rolls its savepoint back.
    func cancel()
}

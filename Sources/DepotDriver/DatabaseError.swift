/// An error from Depot or from the engine under it, with the context to act on it.
///
/// Every error a ``Store`` throws is a `DatabaseError` (or a `CancellationError`
/// when the calling task was cancelled). Its ``kind`` is the same on every
/// engine, so this works on SQLite and on PostgreSQL alike:
///
/// ```swift
/// do {
///     try await store.write { db in try db.insert(user) }
/// } catch let error as DatabaseError where error.kind == .unique {
///     print("that name is taken")
/// }
/// ```
///
/// The description names the engine code, the message, the column and coding
/// path of a decoding failure and the SQL. Bound values are left out unless the
/// store's configuration asks for them (``Store/Configuration/showsBoundValues``):
/// they may hold personal data.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The engine-independent category of an error.
    public enum Kind: String, Sendable, CaseIterable {
        /// A UNIQUE or PRIMARY KEY constraint was violated.
        case unique
        /// A FOREIGN KEY constraint was violated.
        case foreignKey
        /// A NOT NULL constraint was violated.
        case notNull
        /// A CHECK constraint was violated.
        case check
        /// The database stayed locked by another connection past the busy timeout.
        case busy
        /// A serialization failure or deadlock: the transaction may succeed if retried.
        case serialization
        /// The connection is lost or could not be opened.
        case connection
        /// The server refused the credentials (a wrong password, an unknown
        /// user, no rule letting this user in): trying again does not help, so
        /// a store that waits for its server does not wait for this.
        case authentication
        /// Waiting for a connection from the pool took too long.
        case timeout
        /// The statement was interrupted because its task was cancelled.
        case interrupted
        /// The SQL is not valid for the engine, or names something that does not exist.
        case syntax
        /// A value read from the database does not fit the Swift type asked for.
        case decoding
        /// A Swift value cannot be stored (an unsigned integer above Int64.max, NaN...).
        case encoding
        /// A query meant to return at most one row returned more.
        case tooManyRows
        /// The record to update does not exist.
        case notFound
        /// Another writer saved the record since it was read: its
        /// ``Record/versionColumn`` no longer holds the record's version.
        /// Read it again, then retry or merge.
        case conflict
        /// A migration failed, or the recorded migrations do not match the registered ones.
        case migration
        /// The API was used in a way it does not allow (a write in a read, a cursor used late...).
        case misuse
        /// The engine could not read or write its files, or is out of space or memory.
        case io
        /// Anything else the engine reports.
        case other
    }

    /// The engine-independent category.
    public var kind: Kind
    /// The engine's own code: an SQLite extended result name such as
    /// `SQLITE_CONSTRAINT_UNIQUE (2067)`, or a PostgreSQL SQLSTATE such as `23505`.
    public var engineCode: String?
    /// What went wrong, in the engine's words or Depot's.
    public var message: String
    /// Extra detail the engine sent (PostgreSQL's DETAIL field).
    public var detail: String?
    /// The constraint involved, when the engine names it.
    public var constraint: String?
    /// The table involved, when known.
    public var table: String?
    /// The column involved: for a decoding error, the column that failed.
    public var column: String?
    /// The 0-based index of ``column`` in the row, for a decoding error.
    public var columnIndex: Int?
    /// The coding path of a decoding or encoding error, as `reminders[0].dueDate`-like text.
    public var codingPath: String?
    /// The SQL text that failed, with its placeholders (never its values).
    public var sql: String?
    /// The bound values, only when the store is configured to show them.
    public var boundValues: [Value]?
    /// Whether the transaction may have committed although the access failed:
    /// the connection was lost after `COMMIT` was sent, before its answer came.
    ///
    /// Every other failed write is rolled back. Such a write needs checking
    /// (or an idempotent retry) before it is tried again.
    public var commitOutcomeUnknown = false

    /// Creates an error. Backends use this to report engine failures.
    public init(
        _ kind: Kind,
        _ message: String,
        engineCode: String? = nil,
        detail: String? = nil,
        constraint: String? = nil,
        table: String? = nil,
        column: String? = nil,
        columnIndex: Int? = nil,
        codingPath: String? = nil,
        sql: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.engineCode = engineCode
        self.detail = detail
        self.constraint = constraint
        self.table = table
        self.column = column
        self.columnIndex = columnIndex
        self.codingPath = codingPath
        self.sql = sql
    }

    /// One line: `kind error [engine code]: message (column: ..., sql: ...)`.
    public var description: String {
        var text = "\(kind.rawValue) error"
        if let engineCode { text += " [\(engineCode)]" }
        text += ": \(message)"
        var context: [String] = []
        if let detail { context.append("detail: \(detail)") }
        if let constraint { context.append("constraint: \(constraint)") }
        if let table { context.append("table: \(table)") }
        if let column {
            context.append(columnIndex.map { "column: \(column) (index \($0))" } ?? "column: \(column)")
        }
        if let codingPath, !codingPath.isEmpty { context.append("coding path: \(codingPath)") }
        if let sql { context.append("sql: \(sql)") }
        if let boundValues {
            context.append("values: [\(boundValues.map(\.description).joined(separator: ", "))]")
        }
        if !context.isEmpty { text += " (" + context.joined(separator: ", ") + ")" }
        return text
    }

    package func with(sql: String, values: [Value]?) -> DatabaseError {
        var copy = self
        if copy.sql == nil { copy.sql = sql }
        if copy.boundValues == nil { copy.boundValues = values }
        return copy
    }
}

extension DatabaseError {
    package static func misuse(_ message: String) -> DatabaseError { DatabaseError(.misuse, message) }

    /// The error every backend gives when an observation reads a table that
    /// ``Database/enableObservation(of:)`` never made observable: one text on every engine.
    public static func notObservable(_ table: String) -> DatabaseError {
        DatabaseError(.misuse, "\"\(table)\" is read by an observation but was never made observable: "
            + "run db.enableObservation(of: [\"\(table)\"]) once, in a migration")
    }

    /// A `connection` error from COMMIT, said as what it means: the outcome is unknown.
    package func lostDuringCommit() -> DatabaseError {
        guard kind == .connection, !commitOutcomeUnknown else { return self }
        var copy = self
        copy.commitOutcomeUnknown = true
        copy.message = "the connection was lost after COMMIT was sent, so the transaction may or may not have committed: " + message
        return copy
    }
}

/// What a backend offers for ``Store/observe(_:)``: which tables a statement
/// reads, which tables a write transaction wrote, and commits made elsewhere.
///
/// Each part is optional. Without the first, an observation is refreshed by a
/// commit to any table; without the others, only by writes Depot itself
/// reports (``Database/notifyChanges(in:)``).

/// A connection that can say which tables a statement reads.
public protocol ReadTrackingConnection: DriverConnection {
    /// The tables the statement with this text reads when run with these
    /// values (a view's base tables, not the view), or nil when the engine
    /// cannot tell. Called after the statement ran, inside the same transaction.
    func tablesRead(bySQL sql: String, values: [Value]) throws -> Set<String>?
}

/// A connection that records the tables its statements write, triggers and
/// foreign-key actions included.
public protocol WriteTrackingConnection: DriverConnection {
    /// The tables written since the last call, forgotten as they are returned.
    /// The core calls it after each COMMIT (to notify observers) and ROLLBACK (to forget).
    func takeWrittenTables() -> Set<String>
    /// A number that changes when another connection or process commits, and
    /// not for this connection's own commits (SQLite's `PRAGMA data_version`);
    /// nil when the engine reports other commits through a ``ChangeListeningDriver``.
    func externalChangeCounter() throws -> Int64?
}

/// What a change listener reports.
public enum ObservedChange: Sendable, Hashable {
    /// Commits changed these tables.
    case tables(Set<String>)
    /// Changes may have been missed (the listener reconnected): every observation refreshes.
    case unknown
}

/// A driver that hears about commits from every connection and process, such
/// as PostgreSQL's LISTEN/NOTIFY.
public protocol ChangeListeningDriver: DatabaseDriver {
    /// Starts listening on a connection of its own; `onChange` runs on the
    /// listener's thread for each notification, and with `.unknown` each time
    /// it starts listening: after its first connect (the core waits for that
    /// before an observation's first read) and after every reconnect. Failures
    /// to connect are retried.
    func startChangeListener(_ onChange: @escaping @Sendable (ObservedChange) -> Void) -> any ChangeListener
}

/// A running change listener.
public protocol ChangeListener: AnyObject, Sendable {
    /// Whether the listener is listening now (false while it reconnects).
    var isListening: Bool { get }
    /// Stops listening and closes the listener's connection.
    func stop()
}

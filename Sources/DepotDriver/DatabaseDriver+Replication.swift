/// A connection to one server of a replicated set, such as a PostgreSQL
/// primary or one of its hot standbys. Optional: the core uses it for
/// ``Store/writeReturningPosition(isolation:logger:_:)`` and for reads routed
/// to a replica that must have caught up with a write.
public protocol ReplicatedConnection: DriverConnection {
    /// Commits the open write transaction, as `execute(script: "COMMIT")` does,
    /// and returns the position at which the commit ends in the primary's log.
    func commitReturningPosition() throws -> CommitPosition

    /// Returns once this connection's server has applied the log at least up to
    /// `position`. Called before a read's transaction begins. A primary returns
    /// at once. `shouldStop` turns true when the access is cancelled or stopped:
    /// return (or throw) soon after, and the core reports why.
    ///
    /// - Throws: a `timeout` ``DatabaseError`` naming both positions when the
    ///   server has not caught up within `timeout`.
    func waitForReplay(to position: CommitPosition, timeout: Duration, shouldStop: () -> Bool) throws
}

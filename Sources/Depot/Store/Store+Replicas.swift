import Foundation
import Logging

/// Where a read runs, on a store whose engine has replicas (a PostgreSQL
/// primary with hot standbys).
///
/// ```swift
/// try await store.read { db in ... }                        // a standby when there is one
/// try await store.read(from: .primary) { db in ... }        // the newest data, always
/// try await store.read(from: .replica(caughtUpWith: position)) { db in ... }
/// ```
///
/// On a store without replicas every route reads the one database.
public struct ReadRoute: Sendable, Hashable, CustomStringConvertible {
    enum Target: Hashable {
        case automatic
        case primary
        case caughtUp(CommitPosition, timeout: Duration)
    }
    let target: Target

    /// A replica when the store has any (the primary when none is reachable),
    /// otherwise the one database. With ``Store/Configuration/readYourWritesTimeout``
    /// set, the replica first catches up with every write this store committed.
    public static let automatic = ReadRoute(target: .automatic)

    /// The primary: sees every committed write, at the primary's cost. On a
    /// store without replicas, the same as ``automatic``: every reader sees
    /// every commit there.
    public static let primary = ReadRoute(target: .primary)

    /// A replica that has applied the log at least up to `position` (the primary
    /// when no replica is reachable): the read waits, up to `timeout`, for the
    /// replica to catch up, and then sees that write and everything before it.
    /// A store with ``Store/Configuration/readYourWritesTimeout`` set also waits
    /// for its own writes, as on every replica read.
    ///
    /// - Throws (from the read): a `timeout` ``DatabaseError`` naming both
    ///   positions when the replica does not catch up in time.
    public static func replica(caughtUpWith position: CommitPosition, timeout: Duration = .seconds(5)) -> ReadRoute {
        ReadRoute(target: .caughtUp(position, timeout: timeout))
    }

    /// The route in words, for logs: `primary`, `replica caught up with 0/16B3748 (waiting up to 5.0 seconds)`.
    public var description: String {
        switch target {
        case .automatic: "automatic"
        case .primary: "primary"
        case .caughtUp(let position, let timeout): "replica caught up with \(position) (waiting up to \(timeout))"
        }
    }
}

extension Store {
    /// Runs a write transaction, like ``write(logger:_:)`` (retried as it is,
    /// by ``Configuration/writeRetry``), and returns the position
    /// of its commit, for reads that must see it on a replica
    /// (``ReadRoute/replica(caughtUpWith:timeout:)``).
    ///
    /// On PostgreSQL the position is read in the same message as the `COMMIT`,
    /// so it costs no round trip of its own. A write that ran no statement
    /// returns 0: there is nothing for a read to wait for.
    ///
    /// Caveat: when the connection is lost after `COMMIT` was sent, the write
    /// may have committed or not; the error is a `connection` error either way,
    /// as for ``write(logger:_:)``.
    @discardableResult
    public func writeReturningPosition<T: Sendable>(isolation: IsolationLevel? = nil, logger: Logger? = nil,
                                                    _ body: @escaping @Sendable (Database) throws -> T) async throws -> (value: T, position: CommitPosition) {
        try await retrying(settings.writeRetry, logger: logger) { attempt in
            let box = PositionBox()
            let value = try await self.access(.write, isolation: isolation, route: .primary, logger: logger, position: box, attempt: attempt, body)
            return (value, box.position ?? CommitPosition(rawValue: 0))
        }
    }

    /// The newest commit position among this store's own writes, when the store
    /// tracks them (a store with replicas always does); nil before its first write.
    public var lastCommitPosition: CommitPosition? { commits.latest }

    /// Whether the store reads from replicas (a PostgreSQL store given a
    /// primary and standbys).
    public var hasReplicas: Bool { replicaReaders != nil }
}

/// The newest commit position a store's writes reached. Any thread.
final class CommitTracker: @unchecked Sendable {
    // Unchecked: `newest` is read and written under `lock`.
    private let lock = NSLock()
    private var newest: CommitPosition?

    var latest: CommitPosition? { lock.withLock { newest } }

    func note(_ position: CommitPosition) {
        lock.withLock {
            if newest.map({ $0 < position }) ?? true { newest = position }
        }
    }
}

/// Receives the position of one access's commit, set on the connection's queue
/// and read after the access returned.
final class PositionBox: @unchecked Sendable {
    // Unchecked: written on the connection's queue before the access's
    // continuation resumes, read after it: the resume orders the two.
    var position: CommitPosition?
}

import Foundation

/// Where a commit sits in the engine's log: on PostgreSQL, the WAL position
/// (LSN) at which a write transaction's commit ends.
///
/// A position lets a read on a replica wait until the replica has applied a
/// given write, so that a request can write on the primary and then read its
/// own write from a standby:
///
/// ```swift
/// let (saved, position) = try await store.writeReturningPosition { db in try db.insert(reminder) }
/// let fresh = try await store.read(from: .replica(caughtUpWith: position)) { db in
///     try db.find(Reminder.self, id: saved.id)
/// }
/// ```
///
/// Positions compare in log order and are `Codable`, so a server can hand one
/// to its client (a cookie, a header) and have the client's next request read
/// from a replica that has caught up with it.
///
/// Caveat: on an engine without replicas (SQLite) every read already sees
/// every commit; its positions are 0 and waiting for one returns at once.
public struct CommitPosition: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The position as one number (a PostgreSQL LSN as a 64-bit integer).
    public let rawValue: UInt64

    /// A position from its number, such as one a client sent back.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Whether `lhs` comes earlier in the log.
    public static func < (lhs: CommitPosition, rhs: CommitPosition) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The position as PostgreSQL prints an LSN: `16/B374D848`.
    public var description: String {
        String(rawValue >> 32, radix: 16, uppercase: true) + "/" + String(rawValue & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }
}

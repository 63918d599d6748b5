import Foundation

/// A client's push: its changes, under an id that makes a retry harmless.
public struct SyncPush: Codable, Hashable, Sendable {
    /// The client's node id.
    public var client: UUID
    /// The push's number: one more than the client's last acknowledged push.
    /// A retry of a push whose answer was lost carries the same number.
    public var number: Int64
    /// The rows' states.
    public var changes: [SyncChange]
    /// The server version the client had pulled when it pushed: a stored row
    /// changed after it was changed by someone the client had not heard from
    /// (a conflict, for the server's resolver). Nil: unknown, every overwrite counts.
    public var seen: Int64?

    /// A push from its parts.
    public init(client: UUID, number: Int64, changes: [SyncChange], seen: Int64? = nil) {
        self.client = client
        self.number = number
        self.changes = changes
        self.seen = seen
    }
}

/// The server's answer to a push.
public struct SyncPushAnswer: Codable, Hashable, Sendable {
    /// Whether the server had applied this push before (its answer was lost): nothing was applied again.
    public var wasDuplicate: Bool
    /// The server's version after the push.
    public var version: Int64
    /// How many changes the server dropped: changes to a root no longer
    /// shared with the device's account, made before the device heard.
    public var dropped: Int = 0
}

/// Where a client's pulls stand: after this server version, and within it
/// after this row (pages of one version end anywhere).
public struct SyncCursor: Codable, Hashable, Sendable, Comparable {
    /// The last server version read whole, or being read.
    public var version: Int64
    /// The last row read in that version's order, empty at the start of a version.
    public var table: String
    /// The last row's key.
    public var key: String

    /// The start: nothing read.
    public static let start = SyncCursor(version: 0, table: "", key: "")

    public static func < (lhs: SyncCursor, rhs: SyncCursor) -> Bool {
        (lhs.version, lhs.table, lhs.key) < (rhs.version, rhs.table, rhs.key)
    }
}

/// A client's pull: the rows changed after its cursor.
public struct SyncPull: Codable, Hashable, Sendable {
    /// Where the client stands.
    public var after: SyncCursor
    /// The most rows one answer holds.
    public var limit: Int

    /// A pull from its parts.
    public init(after: SyncCursor, limit: Int) {
        self.after = after
        self.limit = limit
    }
}

/// One page of changes, in the server's commit order.
public struct SyncPage: Codable, Hashable, Sendable {
    /// The rows' current states, each at its latest version.
    public var changes: [SyncChange]
    /// Where the next pull starts.
    public var next: SyncCursor
    /// The server's version when the page was read.
    public var head: Int64
    /// Whether the page reaches `head`: the client holds the server's state at `head`.
    public var isCaughtUp: Bool
}

/// How a client reaches its server: in process for tests, HTTP for apps.
public protocol SyncTransport: Sendable {
    /// Sends a push; throws when it, or its answer, was lost, or when the
    /// server refused it.
    func push(_ push: SyncPush) async throws -> SyncPushAnswer
    /// Sends a pull; throws when it, or its answer, was lost.
    func pull(_ pull: SyncPull) async throws -> SyncPage
}

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
    /// The sync protocol the device speaks (``SyncSchema/protocolVersion``);
    /// nil from a device of version 1.
    public var protocolVersion: Int?
    /// What the device syncs; nil from a device of version 1.
    public var schema: SyncSchema?

    /// A push from its parts.
    public init(client: UUID, number: Int64, changes: [SyncChange], seen: Int64? = nil,
                protocolVersion: Int? = nil, schema: SyncSchema? = nil) {
        self.client = client
        self.number = number
        self.changes = changes
        self.seen = seen
        self.protocolVersion = protocolVersion
        self.schema = schema
    }
}

/// The server's answer to a push.
public struct SyncPushAnswer: Codable, Hashable, Sendable {
    /// Whether the server had applied this push before (its answer was lost): nothing was applied again.
    public var wasDuplicate: Bool
    /// The server's version after the push.
    public var version: Int64
    /// How many changes the server dropped: changes to a root no longer
    /// shared with the device's account, made before the device heard, and
    /// changes to rows deleted and compacted away before the device heard
    /// (``SyncServer/compact(olderThan:now:)``).
    public var dropped: Int = 0
    /// The rows whose changes the server dropped (``dropped`` of them): the
    /// device forgets its own version of each, and takes the server's at its
    /// next pull (a row the server never had is gone).
    public var droppedRows: [SyncRowID] = []
    /// The values of this push that lost to a later edit the server held,
    /// made on another device without having seen them.
    public var overridden: [SyncOverride] = []
    /// The server's compaction horizon when it applied the push
    /// (``SyncServer/compact(olderThan:now:)``): it had forgotten the rows
    /// deleted before this version, so a pushed change to such a row was
    /// taken as a new row. A device that has pulled such a delete since it
    /// made the push sends the delete again. Zero: the server had never
    /// compacted (or predates this field).
    public var horizon: Int64 = 0

    /// An answer from its parts.
    public init(wasDuplicate: Bool, version: Int64, dropped: Int = 0, droppedRows: [SyncRowID] = [], overridden: [SyncOverride] = [],
                horizon: Int64 = 0) {
        self.wasDuplicate = wasDuplicate
        self.version = version
        self.dropped = dropped
        self.droppedRows = droppedRows
        self.overridden = overridden
        self.horizon = horizon
    }

    enum CodingKeys: String, CodingKey { case wasDuplicate, version, dropped, droppedRows, overridden, horizon }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        wasDuplicate = try container.decode(Bool.self, forKey: .wasDuplicate)
        version = try container.decode(Int64.self, forKey: .version)
        dropped = try container.decodeIfPresent(Int.self, forKey: .dropped) ?? 0
        droppedRows = try container.decodeIfPresent([SyncRowID].self, forKey: .droppedRows) ?? []
        overridden = try container.decodeIfPresent([SyncOverride].self, forKey: .overridden) ?? []
        horizon = try container.decodeIfPresent(Int64.self, forKey: .horizon) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(wasDuplicate, forKey: .wasDuplicate)
        try container.encode(version, forKey: .version)
        try container.encode(dropped, forKey: .dropped)
        try container.encode(droppedRows, forKey: .droppedRows)
        try container.encode(overridden, forKey: .overridden)
        if horizon > 0 { try container.encode(horizon, forKey: .horizon) }
    }
}

/// A synced row, by its table and its key's text. Two ids are equal when
/// their texts are equal byte for byte, as the engines compare keys.
public struct SyncRowID: Codable, Hashable, Sendable, CustomStringConvertible {
    /// The synced table.
    public var table: String
    /// The row's key, as text.
    public var key: String

    /// An id from its parts.
    public init(table: String, key: String) {
        self.table = table
        self.key = key
    }

    public static func == (lhs: SyncRowID, rhs: SyncRowID) -> Bool {
        lhs.table.utf8.elementsEqual(rhs.table.utf8) && lhs.key.utf8.elementsEqual(rhs.key.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactText(table))
        hasher.combine(ExactText(key))
    }

    /// `table row`: the table only, since a key may be a value a log must not show.
    public var description: String { "a \(table) row" }
}

/// A value a device wrote that lost to another device's later edit made
/// without having seen it (two offline edits of one column): the device
/// that wrote it learns of it at the sync that decided it.
public struct SyncOverride: Codable, Hashable, Sendable {
    /// The row.
    public var row: SyncRowID
    /// The column whose value was replaced.
    public var column: String

    /// An override from its parts.
    public init(row: SyncRowID, column: String) {
        self.row = row
        self.column = column
    }
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

    /// A cursor from its parts.
    public init(version: Int64, table: String, key: String) {
        self.version = version
        self.table = table
        self.key = key
    }

    /// The start: nothing read.
    public static let start = SyncCursor(version: 0, table: "", key: "")

    /// By version, then table and key byte for byte (Swift's `String` order
    /// would call two different keys equal when they are canonically equivalent).
    public static func < (lhs: SyncCursor, rhs: SyncCursor) -> Bool {
        if lhs.version != rhs.version { return lhs.version < rhs.version }
        if !lhs.table.utf8.elementsEqual(rhs.table.utf8) { return lhs.table.utf8.lexicographicallyPrecedes(rhs.table.utf8) }
        return lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
    }

    public static func == (lhs: SyncCursor, rhs: SyncCursor) -> Bool {
        lhs.version == rhs.version && lhs.table.utf8.elementsEqual(rhs.table.utf8) && lhs.key.utf8.elementsEqual(rhs.key.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(ExactText(table))
        hasher.combine(ExactText(key))
    }
}

/// A client's pull: the rows changed after its cursor.
public struct SyncPull: Codable, Hashable, Sendable {
    /// Where the client stands.
    public var after: SyncCursor
    /// The most rows one answer holds.
    public var limit: Int
    /// The pulling device's node id: the server tells it which of its
    /// values other devices' later edits replaced (``SyncPage/overridden``).
    public var client: UUID?
    /// The sync protocol the device speaks (``SyncSchema/protocolVersion``);
    /// nil from a device of version 1.
    public var protocolVersion: Int?
    /// What the device syncs: the page holds only those tables and columns.
    /// Nil from a device of version 1: every table and column.
    public var schema: SyncSchema?
    /// For the pages after the first of a pull from the start (a new
    /// device's, or one starting over): the server's head when the first
    /// page was read. Such a device held nothing before, so it missed no
    /// delete unless the server compacted past that head since; its cursor
    /// alone would say it is behind. Nil for any other pull.
    public var fromStartAt: Int64?

    /// A pull from its parts.
    public init(after: SyncCursor, limit: Int, client: UUID? = nil, protocolVersion: Int? = nil, schema: SyncSchema? = nil,
                fromStartAt: Int64? = nil) {
        self.after = after
        self.limit = limit
        self.client = client
        self.protocolVersion = protocolVersion
        self.schema = schema
        self.fromStartAt = fromStartAt
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
    /// The pulling device's values that another device's later edit,
    /// made without having seen them, replaced in the versions this page covers.
    public var overridden: [SyncOverride] = []
    /// Whether the device is to start over: its cursor is before the
    /// server's compaction horizon (``SyncServer/compact(olderThan:now:)``),
    /// so it may have missed deletes the server no longer remembers. The page
    /// is empty; the device pulls again from ``SyncCursor/start`` and then
    /// forgets every row it had from the server that the server did not send.
    public var startsOver: Bool = false
    /// The server's compaction horizon: it has forgotten the rows deleted
    /// in versions before it, and a replica forgets their tombstones too.
    /// Zero: the server never compacted.
    public var horizon: Int64 = 0

    /// A page from its parts.
    public init(changes: [SyncChange], next: SyncCursor, head: Int64, isCaughtUp: Bool, overridden: [SyncOverride] = [],
                startsOver: Bool = false, horizon: Int64 = 0) {
        self.changes = changes
        self.next = next
        self.head = head
        self.isCaughtUp = isCaughtUp
        self.overridden = overridden
        self.startsOver = startsOver
        self.horizon = horizon
    }

    enum CodingKeys: String, CodingKey { case changes, next, head, isCaughtUp, overridden, startsOver, horizon }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        changes = try container.decode([SyncChange].self, forKey: .changes)
        next = try container.decode(SyncCursor.self, forKey: .next)
        head = try container.decode(Int64.self, forKey: .head)
        isCaughtUp = try container.decode(Bool.self, forKey: .isCaughtUp)
        overridden = try container.decodeIfPresent([SyncOverride].self, forKey: .overridden) ?? []
        startsOver = try container.decodeIfPresent(Bool.self, forKey: .startsOver) ?? false
        horizon = try container.decodeIfPresent(Int64.self, forKey: .horizon) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(changes, forKey: .changes)
        try container.encode(next, forKey: .next)
        try container.encode(head, forKey: .head)
        try container.encode(isCaughtUp, forKey: .isCaughtUp)
        try container.encode(overridden, forKey: .overridden)
        if startsOver { try container.encode(true, forKey: .startsOver) }
        if horizon > 0 { try container.encode(horizon, forKey: .horizon) }
    }
}

/// How a client reaches its server: in process for tests, HTTP for apps.
public protocol SyncTransport: Sendable {
    /// Sends a push; throws when it, or its answer, was lost, or when the
    /// server refused it.
    func push(_ push: SyncPush) async throws -> SyncPushAnswer
    /// Sends a pull; throws when it, or its answer, was lost.
    func pull(_ pull: SyncPull) async throws -> SyncPage
    /// Waits for the server to change (a long poll, ``SyncWait``); nil when
    /// this transport, or its server, cannot wait: the client then polls.
    /// The default is nil.
    func wait(_ wait: SyncWait) async throws -> SyncWaitAnswer?
}

extension SyncTransport {
    /// Nil: this transport cannot wait for the server to change.
    public func wait(_ wait: SyncWait) async throws -> SyncWaitAnswer? { nil }
}

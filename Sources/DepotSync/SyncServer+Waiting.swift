import Depot
import Foundation

/// What a device sends to wait for the server to change: a long poll.
///
/// The server answers as soon as its version passes `after`, or after
/// `timeout` seconds with the version it has (no later than `after`). An
/// answer is a hint, never data: the device then pulls, and the pull stays
/// the source of truth, so a lost or repeated answer costs a request, nothing more.
public struct SyncWait: Codable, Hashable, Sendable {
    /// The server version the device knows of: it wants to hear of a later one.
    public var after: Int64
    /// The longest the server holds the request, in seconds (it holds it at most a minute).
    public var timeout: Int

    /// A wait for a version after `after`, held at most `timeout` seconds.
    public init(after: Int64, timeout: Int = 25) {
        self.after = after
        self.timeout = timeout
    }
}

/// The answer to a ``SyncWait``: the server's version now.
public struct SyncWaitAnswer: Codable, Hashable, Sendable {
    /// The version of the server's last commit of synced rows, shares or unshares.
    public var head: Int64

    /// An answer from its parts.
    public init(head: Int64) { self.head = head }
}

extension SyncServer {
    /// The longest a ``SyncWait`` is held.
    public static let longestWait: Duration = .seconds(60)

    /// The version of the server's last commit of synced rows (pushes,
    /// shares and unshares each take one).
    public func head() async throws -> Int64 {
        try await store.read { db in try Self.head(db) }
    }

    static func head(_ db: Database) throws -> Int64 {
        try db.fetchOne(Int64.self, "SELECT \"version\" FROM \(ident: Self.state) WHERE \"id\" = 1") ?? 0
    }

    /// Waits until the server's version passes `wait.after`, or until its
    /// timeout (at most ``longestWait``) has passed; returns the version then.
    ///
    /// The wait is an observation of the server's version counter, so it
    /// wakes on a commit by any server instance on the same database (on
    /// PostgreSQL through `LISTEN/NOTIFY`, which ``installSyncServer(in:node:)``
    /// and ``updateSyncServer(in:)`` set up; on SQLite from any process).
    /// Every account's commits wake it: the answer says only that something
    /// changed, and the device's pull finds whether any of it is its own.
    ///
    /// - Throws: `CancellationError` when the task is cancelled.
    public func handle(_ wait: SyncWait) async throws -> SyncWaitAnswer {
        let limit = min(Duration.seconds(max(0, wait.timeout)), Self.longestWait)
        let heads = store.observe { db in try Self.head(db) }
        return try await withThrowingTaskGroup(of: Int64?.self) { group in
            group.addTask {
                for try await head in heads where head > wait.after { return head }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            if let first = try await group.next(), let head = first {
                return SyncWaitAnswer(head: head)
            }
            try Task.checkCancellation()
            return SyncWaitAnswer(head: try await head())
        }
    }
}

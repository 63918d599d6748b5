@_spi(Driver) import Depot
import Foundation

/// A notification sent on a channel with `NOTIFY` or `Database.notify(_:payload:)`.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel it was sent on.
    public var channel: String
    /// Its payload; empty when none was given.
    public var payload: String
    /// The process id of the server backend of the session that sent it.
    public var backendPID: Int32

    /// A notification from its parts (to compare with, in tests).
    public init(channel: String, payload: String, backendPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.backendPID = backendPID
    }
}

/// What a channel listener delivers: a notification, or the news that some may
/// have been missed.
public enum PostgresChannelEvent: Sendable, Hashable {
    /// A notification, in the order the server delivered them.
    case notification(PostgresNotification)
    /// The listener's connection dropped and it listens again: notifications
    /// sent while it was away are lost. Re-read whatever state they announce.
    case mayHaveMissedNotifications
}

extension Store {
    /// Listens to PostgreSQL channels: every notification sent on them after
    /// this returns, delivered when the sender's transaction commits.
    ///
    /// ```swift
    /// let orders = try await store.listen(to: "orders")
    /// for await event in orders {
    ///     switch event {
    ///     case .notification(let notification): print("order", notification.payload)
    ///     case .mayHaveMissedNotifications: reloadOrders()   // the connection dropped and came back
    ///     }
    /// }
    /// ```
    ///
    /// The listener has a connection of its own, outside the pool, on the
    /// primary or at ``PostgresConfiguration/listenerHosts`` (PgBouncer in
    /// transaction mode cannot carry LISTEN). When it drops, the listener
    /// connects again by itself and delivers `.mayHaveMissedNotifications`.
    /// Ending the loop (or dropping the sequence) closes the connection.
    ///
    /// Caveat: notifications wait in memory until you read them; a consumer
    /// that never catches up grows the buffer.
    ///
    /// - Throws: a `connection` or `authentication` error when the first
    ///   connection fails; `misuse` on a store that is not PostgreSQL's, or without a channel.
    public func listen(to channels: String...) async throws -> PostgresChannelListener {
        try await listen(to: channels)
    }

    /// Listens to PostgreSQL channels; see ``listen(to:)-(String...)``.
    public func listen(to channels: [String]) async throws -> PostgresChannelListener {
        guard let driver = driver as? PostgresDriver else {
            throw DatabaseError(.misuse, "listen(to:) needs a PostgreSQL store; this one is \(dialect.engineName)'s")
        }
        guard !channels.isEmpty, channels.allSatisfy({ !$0.isEmpty }) else {
            throw DatabaseError(.misuse, "listen(to:) needs at least one channel, each named")
        }
        let (stream, continuation) = AsyncStream<PostgresChannelEvent>.makeStream()
        let started = StartSignal()
        let listener = PostgresListener(configuration: driver.configuration, channels: channels) { event in
            switch event {
            case .listening:
                if !started.signal(nil) { continuation.yield(.mayHaveMissedNotifications) }
            case .notifications(let batch):
                for notification in batch { continuation.yield(.notification(notification)) }
            case .failedToConnect(let error):
                _ = started.signal(error)
            }
        }
        continuation.onTermination = { _ in listener.stop() }
        if let error = await started.wait() {
            listener.stop()
            continuation.finish()
            throw error
        }
        return PostgresChannelListener(stream: stream, listener: listener, continuation: continuation)
    }
}

/// The events of the channels a store listens to; see `Store.listen(to:)`.
public struct PostgresChannelListener: AsyncSequence, Sendable {
    public typealias Element = PostgresChannelEvent
    let stream: AsyncStream<PostgresChannelEvent>
    let listener: PostgresListener
    let continuation: AsyncStream<PostgresChannelEvent>.Continuation

    /// The iterator: one per listener, as an `AsyncStream`'s.
    public func makeAsyncIterator() -> AsyncStream<PostgresChannelEvent>.Iterator { stream.makeAsyncIterator() }

    /// Stops listening and closes the listener's connection; the sequence ends.
    public func stop() {
        listener.stop()
        continuation.finish()
    }
}

/// The outcome of a listener's first connection, waited for once.
final class StartSignal: @unchecked Sendable {
    // Unchecked: `outcome` and `waiter` are read and written under `lock`.
    private let lock = NSLock()
    private var outcome: DatabaseError??
    private var waiter: CheckedContinuation<DatabaseError?, Never>?

    /// Records the first outcome; false when one was recorded before.
    func signal(_ error: DatabaseError?) -> Bool {
        let (first, waiter): (Bool, CheckedContinuation<DatabaseError?, Never>?) = lock.withLock {
            guard outcome == nil else { return (false, nil) }
            outcome = .some(error)
            defer { self.waiter = nil }
            return (true, self.waiter)
        }
        waiter?.resume(returning: error)
        return first
    }

    func wait() async -> DatabaseError? {
        await withCheckedContinuation { continuation in
            let known: DatabaseError?? = lock.withLock {
                if let outcome { return outcome }
                waiter = continuation
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}

extension Database {
    /// Sends a notification on a PostgreSQL channel when this access's
    /// transaction commits (nothing when it rolls back): `pg_notify`.
    ///
    /// ```swift
    /// try await store.write { db in
    ///     try db.insert(order)
    ///     try db.notify("orders", payload: order.id.uuidString)   // heard only once the order is stored
    /// }
    /// ```
    ///
    /// Identical notifications of one transaction arrive once. A payload holds
    /// at most 7,999 bytes. Caveat: send identifiers, not data: a listener
    /// that reconnects misses what was sent meanwhile.
    public func notify(_ channel: String, payload: String = "") throws {
        guard dialect is PostgresDialect else {
            throw DatabaseError(.misuse, "notify(_:payload:) needs a PostgreSQL store; this one is \(dialect.engineName)'s")
        }
        _ = try execute("SELECT pg_notify(\(channel), \(payload))")
    }
}

import Dispatch
import Foundation

extension Store {
    /// The rows of a query as an `AsyncSequence`, read in a read access that
    /// holds its connection (and snapshot) while you iterate, with backpressure:
    /// at most `bufferSize` rows are decoded ahead of the consumer, so memory
    /// stays flat however many rows there are.
    ///
    /// ```swift
    /// for try await reminder in store.rows(Reminder.self, "SELECT * FROM reminders ORDER BY id") {
    ///     try await response.write(reminder)    // streamed into an HTTP response
    /// }
    /// ```
    ///
    /// The access starts when iteration starts. Breaking out of the loop,
    /// cancelling the task or dropping the iterator ends the access (rolled
    /// back, as every read). Each iteration starts its own access.
    ///
    /// Caveat: the access holds a connection until the loop ends; a slow
    /// consumer keeps it from other accesses meanwhile.
    public func rows<T: Decodable & Sendable>(_ type: T.Type, _ sql: SQL, bufferSize: Int = 64) -> RowStream<T> {
        RowStream(bufferSize: bufferSize) { store, channel in
            try await store.streamingRead { db in try db.forEach(T.self, sql) { try channel.sendBlocking($0) } }
        } store: { self }
    }

    /// The records a query selects as an `AsyncSequence`, through the
    /// engine's bulk export path where it has one: PostgreSQL's binary COPY,
    /// which costs the server and the client less per row than a query's
    /// results. The same records, in the same order, as ``rows(_:bufferSize:)``,
    /// with the same backpressure and flat memory.
    ///
    /// ```swift
    /// for try await reminder in store.copyRows(Reminder.all.order { $0.id }) {
    ///     try await exporter.write(reminder)
    /// }
    /// ```
    ///
    /// COPY takes no parameters: a query that binds values (a filter on a
    /// value, a limit) streams as ``rows(_:bufferSize:)`` does, and so does
    /// every query on an engine without a bulk export path (SQLite).
    public func copyRows<T: Sendable>(_ query: Query<T>, bufferSize: Int = 64) -> RowStream<T> {
        RowStream(bufferSize: bufferSize) { store, channel in
            try await store.streamingRead { db in
                let (text, values) = try db.renderSelect(query)
                guard values.isEmpty, db.connection.driver is any CopyingOutConnection else {
                    return try db.forEach(query) { try channel.sendBlocking($0) }
                }
                try db.mappedRows(T.self, text: text, values: [], limit: .streaming, copyingOut: true) { reader in
                    try channel.sendBlocking(try reader.record(T.self))
                }
            }
        } store: { self }
    }

    /// The records a query selects as an `AsyncSequence`; see ``rows(_:_:bufferSize:)``.
    public func rows<T: Sendable>(_ query: Query<T>, bufferSize: Int = 64) -> RowStream<T> {
        RowStream(bufferSize: bufferSize) { store, channel in
            try await store.streamingRead { db in try db.forEach(query) { try channel.sendBlocking($0) } }
        } store: { self }
    }
}

extension Store {
    /// A stream's read: on the connection's queue always, never on the
    /// calling thread (``Configuration/readsRunOnCallingThread``), since its
    /// closure blocks while the consumer is behind: on a cooperative thread
    /// that could hold the very thread the consumer needs.
    fileprivate func streamingRead(_ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try await access(.read, isolation: nil, route: .automatic, mayRunOnCallingThread: false, body)
    }
}

/// Rows streamed out of a read access; see ``Store/rows(_:_:bufferSize:)``.
public struct RowStream<Element: Sendable>: AsyncSequence, Sendable {
    let bufferSize: Int
    let produce: @Sendable (Store, BoundedChannel<Element>) async throws -> Void
    let store: @Sendable () -> Store

    init(bufferSize: Int, produce: @escaping @Sendable (Store, BoundedChannel<Element>) async throws -> Void, store: @escaping @Sendable () -> Store) {
        self.bufferSize = Swift.max(1, bufferSize)
        self.produce = produce
        self.store = store
    }

    /// Starts the access and returns the iterator that reads its rows.
    public func makeAsyncIterator() -> Iterator {
        let channel = BoundedChannel<Element>(capacity: bufferSize)
        let produce = self.produce, store = self.store()
        let producer = Task {
            do {
                try await produce(store, channel)
                channel.finish(nil)
            } catch {
                channel.finish(error)
            }
        }
        return Iterator(channel: channel, producer: producer)
    }

    /// Reads the rows one at a time; dropping it ends the access.
    public final class Iterator: AsyncIteratorProtocol {
        let channel: BoundedChannel<Element>
        let producer: Task<Void, Never>

        init(channel: BoundedChannel<Element>, producer: Task<Void, Never>) {
            self.channel = channel
            self.producer = producer
        }

        deinit {
            channel.cancel()
            producer.cancel()
        }

        /// The next row, nil after the last; rethrows the access's error.
        public func next() async throws -> Element? {
            let channel = self.channel, producer = self.producer
            return try await withTaskCancellationHandler {
                try await channel.receive()
            } onCancel: {
                channel.cancel()
                producer.cancel()
            }
        }
    }
}

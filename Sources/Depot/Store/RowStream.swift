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
            try await store.read { db in try db.forEach(T.self, sql) { try channel.send($0) } }
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
            try await store.read { db in
                let (text, values) = try db.renderSelect(query)
                guard values.isEmpty, db.connection.driver is any CopyingOutConnection else {
                    return try db.forEach(query) { try channel.send($0) }
                }
                try db.mappedRows(T.self, text: text, values: [], limit: .streaming, copyingOut: true) { reader in
                    try channel.send(try reader.record(T.self))
                }
            }
        } store: { self }
    }

    /// The records a query selects as an `AsyncSequence`; see ``rows(_:_:bufferSize:)``.
    public func rows<T: Sendable>(_ query: Query<T>, bufferSize: Int = 64) -> RowStream<T> {
        RowStream(bufferSize: bufferSize) { store, channel in
            try await store.read { db in try db.forEach(query) { try channel.send($0) } }
        } store: { self }
    }
}

/// Rows streamed out of a read access; see ``Store/rows(_:_:bufferSize:)``.
public struct RowStream<Element: Sendable>: AsyncSequence, Sendable {
    let bufferSize: Int
    let produce: @Sendable (Store, RowChannel<Element>) async throws -> Void
    let store: @Sendable () -> Store

    init(bufferSize: Int, produce: @escaping @Sendable (Store, RowChannel<Element>) async throws -> Void, store: @escaping @Sendable () -> Store) {
        self.bufferSize = Swift.max(1, bufferSize)
        self.produce = produce
        self.store = store
    }

    /// Starts the access and returns the iterator that reads its rows.
    public func makeAsyncIterator() -> Iterator {
        let channel = RowChannel<Element>(capacity: bufferSize)
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
        let channel: RowChannel<Element>
        let producer: Task<Void, Never>

        init(channel: RowChannel<Element>, producer: Task<Void, Never>) {
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

/// Hands rows from the access's connection thread to the consumer's task: the
/// producer blocks (off the cooperative pool) when `capacity` rows wait.
final class RowChannel<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private let capacity: Int
    private var buffer: [Element] = []
    private var consumer: CheckedContinuation<Element?, any Error>?
    private var ended: (any Error)??
    private var cancelled = false
    private var producerWaits = false
    private let space = DispatchSemaphore(value: 0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Producer: hands over one row, waiting while the buffer is full.
    func send(_ element: Element) throws {
        lock.lock()
        if cancelled {
            lock.unlock()
            throw CancellationError()
        }
        if let consumer {
            self.consumer = nil
            lock.unlock()
            consumer.resume(returning: element)
            return
        }
        buffer.append(element)
        let full = buffer.count >= capacity
        if full { producerWaits = true }
        lock.unlock()
        guard full else { return }
        space.wait()
        if lock.withLock({ cancelled }) { throw CancellationError() }
    }

    /// Producer: no more rows, or the access's error.
    func finish(_ error: (any Error)?) {
        lock.lock()
        ended = .some(error)
        let consumer = self.consumer
        self.consumer = nil
        lock.unlock()
        if let consumer {
            if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
        }
    }

    /// Consumer: the iteration stopped; the producer stops at its next row.
    func cancel() {
        lock.lock()
        cancelled = true
        let wake = producerWaits
        producerWaits = false
        let consumer = self.consumer
        self.consumer = nil
        lock.unlock()
        if wake { space.signal() }
        consumer?.resume(throwing: CancellationError())
    }

    /// Consumer: the next row, waiting for the producer when none is buffered.
    func receive() async throws -> Element? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
            lock.lock()
            if !buffer.isEmpty {
                // At most `capacity` rows: moving them down is cheap.
                let element = buffer.removeFirst()
                let wake = producerWaits
                producerWaits = false
                lock.unlock()
                if wake { space.signal() }
                continuation.resume(returning: element)
                return
            }
            if let ended {
                lock.unlock()
                if let error = ended { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
                return
            }
            if cancelled {
                lock.unlock()
                continuation.resume(throwing: CancellationError())
                return
            }
            consumer = continuation
            lock.unlock()
        }
    }
}

import Foundation
import Logging

extension Store {
    /// Inserts every record of an asynchronous sequence in one write
    /// transaction, streamed: on PostgreSQL through one COPY, elsewhere
    /// through the batch insert's reused statements. All or nothing: an error
    /// of the sequence, of a record (the same errors as `insert`) or a
    /// cancellation rolls everything back. Returns how many were inserted.
    ///
    /// ```swift
    /// let lines = FileHandle(forReadingAtPath: "reminders.jsonl")!.bytes.lines
    /// let count = try await store.insert(contentsOf: lines.map { try JSONDecoder().decode(Reminder.self, from: Data($0.utf8)) })
    /// ```
    ///
    /// Memory stays flat: at most `bufferSize` records wait between the
    /// sequence and the connection, and the sequence is not asked for more
    /// while they do (backpressure). The write holds its connection until the
    /// sequence ends, so a slow sequence keeps it from other writes meanwhile.
    @discardableResult
    public func insert<Records: AsyncSequence & Sendable>(
        contentsOf records: Records, bufferSize: Int = 1024, logger: Logger? = nil
    ) async throws -> Int where Records.Element: Record & Sendable {
        let feed = RecordFeed<Records.Element>(capacity: Swift.max(1, bufferSize))
        let producer = Task {
            do {
                for try await record in records { try await feed.send(record) }
                feed.finish(nil)
            } catch {
                feed.finish(error)
            }
        }
        defer {
            feed.cancel()
            producer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await write(logger: logger) { db in
                try db.insert(contentsOf: IteratorSequence(feed.makeIterator()))
                // The sequence's own error, or a cancellation, ended the rows early: roll back.
                try feed.checkEnded()
                return feed.delivered
            }
        } onCancel: {
            feed.cancel()
        }
    }
}

/// Hands records from an asynchronous sequence's task to the connection that
/// inserts them: the sequence waits while `capacity` records do, the connection's
/// thread (never Swift's cooperative pool) blocks while none does.
final class RecordFeed<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private let capacity: Int
    private var buffer: [Element] = []
    private var head = 0
    private var ended: (any Error)??
    private var cancelled = false
    private var producer: CheckedContinuation<Void, any Error>?
    private var count = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// How many records the connection took.
    var delivered: Int { condition.withLock { count } }

    /// Sequence side: hands over one record, waiting while the buffer is full.
    func send(_ element: Element) async throws {
        while true {
            let accepted: Bool = try condition.withLock {
                if cancelled { throw CancellationError() }
                guard buffer.count - head < capacity else { return false }
                buffer.append(element)
                condition.signal()
                return true
            }
            if accepted { return }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let state: Result<Bool, CancellationError> = condition.withLock {
                    if cancelled { return .failure(CancellationError()) }
                    if buffer.count - head < capacity { return .success(true) }
                    producer = continuation
                    return .success(false)
                }
                switch state {
                case .failure(let error): continuation.resume(throwing: error)
                case .success(true): continuation.resume()
                case .success(false): break
                }
            }
        }
    }

    /// Sequence side: no more records, or the sequence's error.
    func finish(_ error: (any Error)?) {
        condition.withLock {
            if ended == nil { ended = .some(error) }
            condition.broadcast()
        }
    }

    /// Either side: stop; a waiting sequence gets a `CancellationError`, the connection no more records.
    func cancel() {
        let waiting: CheckedContinuation<Void, any Error>? = condition.withLock {
            cancelled = true
            condition.broadcast()
            defer { producer = nil }
            return producer
        }
        waiting?.resume(throwing: CancellationError())
    }

    /// Connection side: throws when the records ended for another reason than
    /// the sequence's end: its error, or a cancellation.
    func checkEnded() throws {
        try condition.withLock {
            if case .some(.some(let error)) = ended { throw error }
            if cancelled { throw CancellationError() }
        }
    }

    /// Connection side: the next record, blocking until one comes; nil at the end.
    func next() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while head == buffer.count, ended == nil, !cancelled { condition.wait() }
        guard head < buffer.count, !cancelled else { return nil }
        let element = buffer[head]
        head += 1
        count += 1
        if head >= 4096, head * 2 >= buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
        if let waiting = producer {
            producer = nil
            waiting.resume()
        }
        return element
    }

    func makeIterator() -> Iterator { Iterator(feed: self) }

    struct Iterator: IteratorProtocol {
        let feed: RecordFeed
        func next() -> Element? { feed.next() }
    }
}

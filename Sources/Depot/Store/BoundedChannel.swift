import Foundation

/// Hands elements from a producer to a consumer, at most `capacity` waiting
/// between them: the core's one bounded channel. Either side may be a blocking
/// thread (a connection's, off Swift's cooperative pool) or an async task:
/// rows stream out of a read access from the connection's thread to the
/// iterating task (``Store/rows(_:_:bufferSize:)``), records into a write from
/// a sequence's task to the connection's thread (``Store/insert(contentsOf:bufferSize:logger:)``).
///
/// Ends: the producer's ``finish(_:)`` (the first one counts) after its last
/// element, which the consumer receives before the end; either side's
/// ``cancel()``, after which both sides stop at once (elements still waiting
/// are dropped: the consumer gets `CancellationError`, or nil on the blocking side).
///
/// Not swift-async-algorithms' `AsyncChannel`: that one holds no buffer (each
/// send waits for its receive, a thread hop per row) and its sides are both
/// async, where one side here is a connection's thread that cannot await.
final class BoundedChannel<Element: Sendable>: @unchecked Sendable {
    // Unchecked: the buffer and the waiting continuations are read and written
    // under `condition`; BoundedChannelTests pin it and the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
    private let condition = NSCondition()
    private let capacity: Int
    // Guarded by `condition`.
    private var buffer: [Element] = []
    private var head = 0
    private var ended: (any Error)??
    private var cancelled = false
    /// An async consumer waiting for an element (only while none waits in the buffer).
    private var consumer: CheckedContinuation<Element?, any Error>?
    /// An async producer waiting for room.
    private var producer: CheckedContinuation<Void, any Error>?
    private var taken = 0

    init(capacity: Int) {
        self.capacity = Swift.max(1, capacity)
    }

    /// How many elements the consumer took.
    var delivered: Int { condition.withLock { taken } }

    private var buffered: Int { buffer.count - head }

    private enum SendOutcome {
        case handed(CheckedContinuation<Element?, any Error>)
        case buffered
        case full
    }

    // MARK: Producer

    /// Hands over one element from a blocking thread, waiting while the buffer is full.
    func sendBlocking(_ element: Element) throws {
        condition.lock()
        while buffered >= capacity, !cancelled { condition.wait() }
        if cancelled {
            condition.unlock()
            throw CancellationError()
        }
        if let consumer {
            self.consumer = nil
            taken += 1
            condition.unlock()
            consumer.resume(returning: element)
            return
        }
        buffer.append(element)
        condition.broadcast()
        condition.unlock()
    }

    /// Hands over one element from a task, waiting while the buffer is full.
    func send(_ element: Element) async throws {
        while true {
            let outcome: SendOutcome = try condition.withLock {
                if cancelled { throw CancellationError() }
                if let consumer {
                    self.consumer = nil
                    taken += 1
                    return .handed(consumer)
                }
                guard buffered < capacity else { return .full }
                buffer.append(element)
                condition.broadcast()
                return .buffered
            }
            switch outcome {
            case .handed(let consumer):
                consumer.resume(returning: element)
                return
            case .buffered:
                return
            case .full:
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let now: Result<Void, any Error>? = condition.withLock {
                        if cancelled { return .failure(CancellationError()) }
                        if buffered < capacity || consumer != nil { return .success(()) }
                        producer = continuation
                        return nil
                    }
                    if let now { continuation.resume(with: now) }
                }
            }
        }
    }

    /// No more elements (nil), or the producer's error. The first call counts.
    func finish(_ error: (any Error)?) {
        let (waiting, outcome) = condition.withLock { () -> (CheckedContinuation<Element?, any Error>?, (any Error)?) in
            if ended == nil { ended = .some(error) }
            condition.broadcast()
            // A consumer waits only while the buffer is empty.
            defer { consumer = nil }
            return (consumer, ended ?? nil)
        }
        guard let waiting else { return }
        if let outcome { waiting.resume(throwing: outcome) } else { waiting.resume(returning: nil) }
    }

    /// Either side: stop. Waiting sides are woken; no element moves any more.
    func cancel() {
        let (waitingConsumer, waitingProducer) = condition.withLock {
            cancelled = true
            condition.broadcast()
            defer { (consumer, producer) = (nil, nil) }
            return (consumer, producer)
        }
        waitingConsumer?.resume(throwing: CancellationError())
        waitingProducer?.resume(throwing: CancellationError())
    }

    /// Throws when the elements ended for another reason than the producer's
    /// end: its error, or a cancellation.
    func checkEnded() throws {
        try condition.withLock {
            if case .some(.some(let error)) = ended { throw error }
            if cancelled { throw CancellationError() }
        }
    }

    // MARK: Consumer

    /// The next element in a task, waiting for the producer when none is
    /// buffered; nil after the last; the producer's error at the end.
    func receive() async throws -> Element? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
            let (now, room) = condition.withLock { () -> (Result<Element?, any Error>?, CheckedContinuation<Void, any Error>?) in
                if cancelled { return (.failure(CancellationError()), nil) }
                if let element = takeBuffered() { return (.success(element), takeProducer()) }
                if let ended { return (ended.map { .failure($0) } ?? .success(nil), nil) }
                consumer = continuation
                return (nil, nil)
            }
            room?.resume()
            if let now { continuation.resume(with: now) }
        }
    }

    /// The next element on a blocking thread, waiting until one comes; nil at
    /// the end or after a cancellation (``checkEnded()`` tells which).
    func receiveBlocking() -> Element? {
        condition.lock()
        while buffered == 0, ended == nil, !cancelled { condition.wait() }
        guard !cancelled, let element = takeBuffered() else {
            condition.unlock()
            return nil
        }
        let room = takeProducer()
        condition.unlock()
        room?.resume()
        return element
    }

    /// Under the lock: the oldest buffered element, its room told to a blocked producer.
    private func takeBuffered() -> Element? {
        guard head < buffer.count else { return nil }
        let element = buffer[head]
        head += 1
        taken += 1
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return element
    }

    /// Under the lock: an async producer waiting for room, to resume after it.
    private func takeProducer() -> CheckedContinuation<Void, any Error>? {
        defer { producer = nil }
        return producer
    }
}

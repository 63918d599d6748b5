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
        let feed = BoundedChannel<Records.Element>(capacity: bufferSize)
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
                try db.insert(contentsOf: IteratorSequence(ChannelIterator(channel: feed)))
                // The sequence's own error, or a cancellation, ended the rows early: roll back.
                try feed.checkEnded()
                return feed.delivered
            }
        } onCancel: {
            feed.cancel()
        }
    }
}

/// The connection's side of the records' channel, as the batch insert reads it.
struct ChannelIterator<Element: Sendable>: IteratorProtocol {
    let channel: BoundedChannel<Element>
    func next() -> Element? { channel.receiveBlocking() }
}

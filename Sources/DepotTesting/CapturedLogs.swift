import Foundation
import Logging

/// Log records kept in memory, to check what a store or a server logs.
///
/// ```swift
/// let logs = CapturedLogs()
/// var configuration = SQLiteConfiguration()
/// configuration.store.logger = logs.logger()
/// // ...
/// #expect(logs.records.contains { $0.message == "connection opened" })
/// #expect(!logs.text.contains(password))
/// ```
public final class CapturedLogs: @unchecked Sendable {
    /// One log record, with the logger's and the call's metadata merged.
    public struct Record: Sendable {
        /// Its level.
        public var level: Logger.Level
        /// Its message.
        public var message: String
        /// The logger's metadata and the record's own.
        public var metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var kept: [Record] = []

    /// An empty capture.
    public init() {}

    /// The records so far, in order.
    public var records: [Record] { lock.withLock { kept } }

    /// Every record as one line (`level message metadata`), for searching.
    public var text: String { records.map { "\($0.level) \($0.message) \($0.metadata)" }.joined(separator: "\n") }

    /// A logger whose records are kept here, from `level` up.
    public func logger(label: String = "test", level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: label) { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    private func add(_ record: Record) { lock.withLock { kept.append(record) } }

    struct Handler: LogHandler {
        let capture: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.add(Record(level: event.level, message: "\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}

import Depot
import Foundation

/// Runs a program to its end in another process: what another process's write looks like.
public enum ChildProcess {
    /// Runs `program` with `arguments`; returns its exit status and what it printed (stdout and stderr).
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// Observations in tests: a value within a bound, so a missed change fails instead of hanging.
public enum ObservationWait {
    /// A wait that ran past its bound.
    public struct TimedOut: Error, CustomStringConvertible {
        /// What was awaited, and for how long.
        public let description: String
        /// A timeout with its description.
        public init(description: String) { self.description = description }
    }

    /// The iterator's next value, or a failure after `limit` (a bound on liveness, not a speed claim).
    public static func next<T: Sendable>(_ iterator: Observation<T>.Iterator, within limit: Duration = .seconds(120),
                                         _ what: String = "the next value") async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                var copy = iterator
                return try await copy.next()
            }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TimedOut(description: "\(what): none within \(limit)")
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// The observation's first value that satisfies `done`, or a failure
    /// after `limit` (a bound on liveness, not a speed claim) or when the
    /// observation ends first.
    ///
    /// ```swift
    /// let titles = phone.observe { db in try db.fetchAll(String.self, "SELECT title FROM notes") }
    /// _ = try await ObservationWait.first(titles, "the laptop's note on the phone") { $0 == ["Groceries"] }
    /// ```
    @discardableResult
    public static func first<T: Sendable>(_ observation: Observation<T>, within limit: Duration = .seconds(120),
                                          _ what: String = "the value awaited", where done: @escaping @Sendable (T) -> Bool) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                for try await value in observation where done(value) { return value }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TimedOut(description: "\(what): none within \(limit)")
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else { throw TimedOut(description: "\(what): the observation ended first") }
            return value
        }
    }
}

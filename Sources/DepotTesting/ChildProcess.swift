import Depot
import Foundation

/// Runs a program to its end in another process: what another process's write looks like.
///
/// Each run waits for its child on a thread of its own, never on one of
/// Swift's task pool. The pool has a thread per core: a test that held one for
/// as long as a child ran (a run of `depot-conformance`, a command at scale)
/// left the tests running beside it one thread, or none, and their accesses
/// waited out their timeouts behind it.
public enum ChildProcess {
    /// Runs `program` with `arguments`; returns its exit status and what it printed (stdout and stderr).
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, output: String) {
        try await onThreadOfItsOwn { try runOnThisThread(program, arguments, environment: environment) }
    }

    /// Runs `work`, which blocks its thread (a child process's run and
    /// wait, a read of a pipe to its end), on a new thread, and returns what
    /// it returns; the calling task waits without holding a thread.
    ///
    /// ```swift
    /// let status = try await ChildProcess.onThreadOfItsOwn {
    ///     let process = Process()
    ///     // ...
    ///     try process.run()
    ///     process.waitUntilExit()
    ///     return process.terminationStatus
    /// }
    /// ```
    ///
    /// Caveat: a `Process` started on the thread must be waited for on it
    /// too. Foundation hears of its end on the run loop of the thread that
    /// started it, which only `waitUntilExit` on that thread runs.
    public static func onThreadOfItsOwn<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "depot-child-process"
            thread.start()
        }
    }

    /// A pipe read to its end on a thread of its own while the caller reads
    /// another: a child that fills one pipe while its parent reads only the
    /// other waits forever.
    ///
    /// ```swift
    /// let errors = ChildProcess.PipeReader(err.fileHandleForReading)
    /// let output = out.fileHandleForReading.readDataToEndOfFile()
    /// let errorOutput = errors.wait()
    /// ```
    public final class PipeReader: @unchecked Sendable {
        // Written by the reading thread before it signals; read after the wait.
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        /// Starts reading `handle` to its end.
        public init(_ handle: FileHandle) {
            let thread = Thread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
            thread.name = "depot-pipe-reader"
            thread.start()
        }

        /// Everything read, once every writer closed the pipe. Blocks its thread until then.
        public func wait() -> Data {
            done.wait()
            return data
        }
    }

    /// ``run(_:_:environment:)`` on the calling thread, which it blocks until
    /// the program ends: for code that already runs on a thread of its own
    /// (an access's body, synchronous set-up), never directly on a task.
    @discardableResult
    public static func runOnThisThread(_ program: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
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

    /// Runs a script that starts a server in the background (a database
    /// node's start script, say) to its end, through `posix_spawn` and
    /// `waitpid`; returns its exit status and what it printed, read from a
    /// file once it has ended. It waits on a thread of its own.
    ///
    /// Caveat: use it, not ``run(_:_:environment:)``, for such a script.
    /// Foundation's `Process` here never saw one end when its wait ran on a
    /// Dispatch thread: the script had exited, and its zombie stayed unreaped.
    @discardableResult
    public static func runScript(_ path: String, _ arguments: [String] = []) async throws -> (status: Int32, output: String) {
        try await onThreadOfItsOwn { try runScriptBlocking(path, arguments) }
    }

    private static func runScriptBlocking(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("depot-script-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let quoted = ([path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let shell = ["/bin/sh", "-c", "\(quoted) > '\(log)' 2>&1 < /dev/null"]
        var argv: [UnsafeMutablePointer<CChar>?] = shell.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
        guard spawned == 0 else {
            throw DatabaseError(.other, "could not start \(path): posix_spawn failed with \(spawned)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // The exit status when it exited; 128 + the signal when one ended it.
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output)
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

import Foundation

/// The loop a backend's change listener runs on a thread of its own: connect,
/// serve the connection until it fails, connect again, until stopped. A failed
/// connect is retried after 0.05 s, doubling up to 2 s; a connection that
/// served resets the wait.
///
/// A backend's ``ChangeListener`` is one of these and two closures:
///
/// ```swift
/// let loop = ListenerLoop(name: "depot.myengine.listener",
///     connect: { try MyConnection.open(configuration) },
///     serve: { connection, loop in
///         onChange(.unknown) // after each connect: commits may have been missed
///         while !loop.isStopped, let tables = connection.waitForChanges(timeout: 0.1) {
///             if !tables.isEmpty { onChange(.tables(tables)) }
///         }
///     },
///     close: { $0.close() })
/// ```
///
/// Caveat: `serve` must return soon after ``isStopped`` turns true (poll with
/// a short timeout and check it): ``stop()`` does not interrupt a blocked call.
public final class ListenerLoop<Connection>: ChangeListener, @unchecked Sendable {
    // Unchecked: `listening` and `stopped` are read and written under `lock`;
    // ListenerLoopTests run under the thread sanitizer.
    private let lock = NSLock()
    private var listening = false
    private var stopped = false

    /// Starts the loop's thread.
    ///
    /// - Parameters:
    ///   - name: the thread's name, for debuggers and profiles.
    ///   - connect: opens the listener's connection; a thrown error is passed
    ///     to `failedToConnect` and the connect is retried.
    ///   - serve: serves a connection until it fails or the loop stops; the
    ///     loop is ``isListening`` meanwhile.
    ///   - close: closes a connection `serve` returned from.
    ///   - failedToConnect: told each failed connect (the default ignores it).
    public init(name: String, connect: @escaping @Sendable () throws -> Connection,
                serve: @escaping @Sendable (Connection, ListenerLoop<Connection>) -> Void,
                close: @escaping @Sendable (Connection) -> Void,
                failedToConnect: @escaping @Sendable (any Error) -> Void = { _ in }) {
        let thread = Thread { [self] in
            var delay = 0.05
            while !isStopped {
                let connection: Connection
                do {
                    connection = try connect()
                } catch {
                    failedToConnect(error)
                    Thread.sleep(forTimeInterval: delay)
                    delay = min(delay * 2, 2)
                    continue
                }
                delay = 0.05
                lock.withLock { listening = true }
                serve(connection, self)
                lock.withLock { listening = false }
                close(connection)
            }
        }
        thread.name = name
        thread.start()
    }

    /// Whether a connection is being served now (false while it reconnects).
    public var isListening: Bool { lock.withLock { listening } }

    /// Whether ``stop()`` was called: `serve` returns soon after.
    public var isStopped: Bool { lock.withLock { stopped } }

    /// Stops the loop: the connection being served closes when `serve` returns.
    public func stop() {
        lock.withLock { stopped = true }
    }
}

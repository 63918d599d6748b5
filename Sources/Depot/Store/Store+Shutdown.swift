import Foundation

extension Store {
    /// Shuts the store down gracefully: new accesses fail at once with a
    /// `connection` error, accesses in flight may finish within `gracePeriod`,
    /// then those still running are interrupted (they fail with an
    /// `interrupted` error and roll back), and every connection is closed.
    ///
    /// ```swift
    /// await store.shutdown(gracePeriod: .seconds(10))   // on SIGTERM
    /// ```
    ///
    /// Caveat: an access whose closure is busy in Swift code, not in a statement,
    /// is not interrupted; it fails at its next statement.
    public func shutdown(gracePeriod: Duration) async {
        gate.close()
        let deadline = ContinuousClock.now + gracePeriod
        while gate.inFlight > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if gate.inFlight > 0 {
            gate.interruptAll()
            // Interrupted statements end within a round trip; Swift code in a closure may take longer.
            let patience = ContinuousClock.now + .seconds(30)
            while gate.inFlight > 0, ContinuousClock.now < patience {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        await close()
    }
}

/// Counts the accesses in flight, refuses new ones once the store shuts down,
/// and interrupts the ones still running when the grace period ends.
final class AccessGate: @unchecked Sendable {
    private let lock = NSLock()
    private var closing = false
    private var count = 0
    private var nextID: UInt64 = 0
    private var running: [UInt64: (flag: CancellationFlag, connection: PooledConnection)] = [:]

    var inFlight: Int { lock.withLock { count } }

    /// Admits an access, or throws when the store shuts down.
    func enter() throws -> UInt64 {
        try lock.withLock {
            guard !closing else { throw DatabaseError(.connection, "the store is shutting down and takes no new access") }
            count += 1
            nextID += 1
            return nextID
        }
    }

    func leave(_ id: UInt64) {
        lock.withLock {
            count -= 1
            running[id] = nil
        }
    }

    /// The access now runs on `connection`: interruptible until ``detach(_:)``.
    func attach(_ id: UInt64, _ flag: CancellationFlag, _ connection: PooledConnection) {
        let stopNow = lock.withLock { () -> Bool in
            running[id] = (flag, connection)
            return closing && stopping
        }
        if stopNow { flag.stop { connection.interrupt() } }
    }

    func detach(_ id: UInt64) {
        lock.withLock { running[id] = nil }
    }

    private var stopping = false

    func close() {
        lock.withLock { closing = true }
    }

    func interruptAll() {
        let accesses = lock.withLock { () -> [(flag: CancellationFlag, connection: PooledConnection)] in
            stopping = true
            return Array(running.values)
        }
        for access in accesses { access.flag.stop { access.connection.interrupt() } }
    }
}

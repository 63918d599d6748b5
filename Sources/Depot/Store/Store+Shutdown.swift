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
        if await !gate.waitUntilEmpty(for: gracePeriod) {
            gate.interruptAll()
            // Interrupted statements end within a round trip; Swift code in a closure may take longer.
            _ = await gate.waitUntilEmpty(for: .seconds(30))
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
        let woken = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            count -= 1
            running[id] = nil
            guard count == 0 else { return [] }
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in woken { waiter.resume(returning: true) }
    }

    /// Shutdowns waiting for the last access to leave, by id.
    private var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    /// Waits until no access is in flight (true), or until `limit` has passed
    /// (false). Woken by the last access to leave; nothing polls.
    func waitUntilEmpty(for limit: Duration) async -> Bool {
        let id = lock.withLock { () -> UInt64 in
            nextWaiter += 1
            return nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: limit)
            self?.resumeWaiter(id, with: false)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let emptyNow = lock.withLock { () -> Bool in
                if count == 0 { return true }
                waiters[id] = continuation
                return false
            }
            if emptyNow { continuation.resume(returning: true) }
        }
    }

    private func resumeWaiter(_ id: UInt64, with value: Bool) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.resume(returning: value)
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

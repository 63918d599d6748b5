import Foundation

/// Counts the accesses in flight, refuses new ones once the store shuts down,
/// and interrupts the ones still running when the grace period ends.
///
/// Every access passes here three times (in, on its connection, out), so each
/// is one short critical section: the running accesses are a list linked
/// through their cancellation flags, not a dictionary to hash into.
final class AccessGate: WaiterOwner, @unchecked Sendable {
    // Unchecked: its mutable state is read and written under `lock`; the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
    private let lock = NSLock()
    var waiterLock: NSLock { lock }
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, a read
    // access holding one lookup, @Columns: 53.29M instructions with the checks of CancellationFlag,
    // AccessGate and ConnectionPool, 52.20M without.
    // Guarded by `lock`.
    @exclusivity(unchecked) private var closing = false
    @exclusivity(unchecked) private var stopping = false
    @exclusivity(unchecked) private var count = 0
    /// The most recently attached running access; each links to the one before.
    @exclusivity(unchecked) private var newest: CancellationFlag?
    /// Shutdowns waiting for the last access to leave.
    @exclusivity(unchecked) var waiters = Waiters<Bool>()

    var inFlight: Int { lock.withLock { count } }

    /// Admits an access, or throws when the store shuts down.
    func enter() throws {
        try lock.withLock {
            guard !closing else { throw DatabaseError(.connection, "the store is shutting down and takes no new access") }
            count += 1
        }
    }

    /// The access now runs on its flag's connection: interruptible by
    /// ``interruptAll()`` until ``detach(_:)`` or ``leave(detaching:)``, which
    /// must come before the connection serves another access (its flag is
    /// the connection's).
    func attach(_ flag: CancellationFlag) {
        let stopNow = lock.withLock { () -> Bool in
            flag.older = newest
            newest?.newer = flag
            newest = flag
            flag.isAttached = true
            return closing && stopping
        }
        if stopNow { flag.stop() }
    }

    /// The access is done with the flag's connection.
    func detach(_ flag: CancellationFlag) {
        lock.withLock { unlink(flag) }
    }

    /// The access is over; `flag`, if given, leaves the running list with it.
    func leave(detaching flag: CancellationFlag?) {
        let woken = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            if let flag { unlink(flag) }
            count -= 1
            guard count == 0, waiters.count > 0 else { return [] }
            return waiters.removeAll()
        }
        for waiter in woken { waiter.resume(returning: true) }
    }

    /// Under `lock`.
    private func unlink(_ flag: CancellationFlag) {
        guard flag.isAttached else { return }
        flag.isAttached = false
        if let newer = flag.newer { newer.older = flag.older } else { newest = flag.older }
        flag.older?.newer = flag.newer
        flag.older = nil
        flag.newer = nil
    }

    /// Waits until no access is in flight (true), or until `limit` has passed
    /// or, with `endsOnCancel`, the task is cancelled (false). Woken by the
    /// last access to leave; nothing polls.
    func waitUntilEmpty(for limit: Duration, endsOnCancel: Bool) async -> Bool {
        await wait(timeout: limit, timedOut: { false }, cancelled: endsOnCancel ? false : nil) { count == 0 ? true : nil }
    }

    func close() {
        lock.withLock { closing = true }
    }

    func interruptAll() {
        let accesses = lock.withLock { () -> [CancellationFlag] in
            stopping = true
            var running: [CancellationFlag] = []
            var flag = newest
            while let current = flag {
                running.append(current)
                flag = current.older
            }
            return running
        }
        for access in accesses { access.stop() }
    }
}

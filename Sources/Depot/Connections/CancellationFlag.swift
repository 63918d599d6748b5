import Foundation
#if !canImport(Darwin)
import Synchronization
#endif

/// Why the access running on a connection must stop: its task was
/// cancelled, its deadline passed, or the store shut down. Set from any
/// thread; read on the connection's queue before every statement.
///
/// Each connection has one, reset by ``begin()`` for every access it serves
/// (an object and a lock made per access cost more than the access's own
/// bookkeeping). A cancellation or deadline carries the generation of the
/// access it belongs to, so one that arrives late never stops the next access.
final class CancellationFlag: @unchecked Sendable {
    // Unchecked: its mutable state is read and written under `lock`; the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
    /// The driver connection whose accesses this flag stops: what an
    /// interruption interrupts. Held strongly: it holds nothing back.
    let connection: any DriverConnection
    private let lock = NSLock()
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, a read
    // access holding one lookup, @Columns: 53.29M instructions with the checks of CancellationFlag,
    // AccessGate and ConnectionPool, 52.20M without.
    // Guarded by `lock`.
    /// The access now (or last) running on the connection.
    @exclusivity(unchecked) private var generation: UInt64 = 0
    @exclusivity(unchecked) private var cancelled = false
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var stoppedByShutdown = false
    /// The access timeout that passed, if one did.
    @exclusivity(unchecked) private var timedOutAfter: Duration?
    /// The access whose statements are being interrupted again and again
    /// (``keepInterrupting(_:)``): one loop per access.
    @exclusivity(unchecked) private var repeatingFor: UInt64?
    /// How many interrupts reached the driver for the current access.
    @exclusivity(unchecked) private var interruptsSent = 0
    /// Test hook: runs when a statement's last check passed, before the engine starts it.
    @exclusivity(unchecked) private var beforeStatement: (@Sendable (InterruptionProbe) -> Void)?
    #if !canImport(Darwin)
    /// Whether a cancellation, deadline or shutdown was raised for the
    /// current access: written under `lock` with the fields it sums up, read
    /// without it, so a statement of an access nothing stopped skips the lock.
    /// (On Apple platforms `Atomic` needs macOS 15 and iOS 18; there every
    /// read takes the lock.)
    private let raised = Atomic<Bool>(false)
    /// Whether the access's closure has ended (its COMMIT or ROLLBACK is
    /// next): repeated interrupts stop there. Written without the lock, so
    /// the end of every access costs a store, not a lock.
    private let settled = Atomic<Bool>(false)
    #else
    @exclusivity(unchecked) private var settledUnderLock = false
    #endif

    /// The store's list of running accesses (``AccessGate``), guarded by the gate's lock.
    @exclusivity(unchecked) var older: CancellationFlag?
    @exclusivity(unchecked) var newer: CancellationFlag?
    @exclusivity(unchecked) var isAttached = false

    init(_ connection: any DriverConnection) {
        self.connection = connection
    }

    /// Starts the flag afresh for an access on the connection; returns the
    /// access's generation, for its cancellation handler and deadline.
    ///
    /// - Parameter beforeStatement: a test hook (``Store/Configuration/beforeStatementStarts``).
    @inline(__always)
    func begin(beforeStatement: (@Sendable (InterruptionProbe) -> Void)? = nil) -> UInt64 {
        lock.withLock {
            generation &+= 1
            cancelled = false
            finished = false
            stoppedByShutdown = false
            timedOutAfter = nil
            interruptsSent = 0
            self.beforeStatement = beforeStatement
            markRaised(false)
            #if !canImport(Darwin)
            settled.store(false, ordering: .relaxed)
            #else
            settledUnderLock = false
            #endif
            return generation
        }
    }

    /// The access's task was cancelled: marks it, and interrupts the statement
    /// running unless the access already finished with its connection.
    func cancel(_ access: UInt64) {
        let running = lock.withLock { () -> Bool in
            guard access == generation else { return false }
            cancelled = true
            markRaised(true)
            return !finished
        }
        if running { interruptElsewhere(access) }
    }

    /// Interrupts the access `access` from a thread of its own, unless it
    /// finished meanwhile. The engine's interrupt may take a network round
    /// trip (PostgreSQL's cancel request opens a connection and waits for the
    /// server to close it) and `Task.cancel()` runs the access's cancellation
    /// handler on the caller's thread, which may be a server's event loop:
    /// the caller must not wait for it. The check and the interrupt happen
    /// under the lock, so an interrupt never reaches the next access.
    private func interruptElsewhere(_ access: UInt64) {
        OffPool.run("depot.interrupt") { [self] in
            let interrupted = lock.withLock { () -> Bool in
                guard access == generation, !finished else { return false }
                interruptNow()
                return true
            }
            if interrupted { keepInterrupting(access) }
        }
    }

    /// Interrupts the access `access` again after `delay`, and so on with a
    /// longer delay each time (up to a second), until its closure has ended.
    ///
    /// One interrupt is not enough: the access checks the flag before each
    /// statement, and an interrupt that comes after that check but before the
    /// engine starts the statement reaches no statement (`sqlite3_interrupt`
    /// with none running, a PostgreSQL cancel request or a MariaDB `KILL
    /// QUERY` that finds the server idle all do nothing), so the statement
    /// would run to its end, which may be never. An interrupt with nothing
    /// running is harmless, and one that reaches a later statement of the same
    /// access stops what the access was told to stop. The repeats end when the
    /// closure ends: the access's own ROLLBACK is not interrupted.
    private func keepInterrupting(_ access: UInt64) {
        let starts = lock.withLock { () -> Bool in
            guard access == generation, repeatingFor != access else { return false }
            repeatingFor = access
            return true
        }
        if starts { interruptAgain(access, after: .milliseconds(10)) }
    }

    /// One step of ``keepInterrupting(_:)``.
    private func interruptAgain(_ access: UInt64, after delay: Duration) {
        OffPool.run("depot.interrupt", after: delay, DispatchWorkItem { [self] in
            let again = lock.withLock { () -> Bool in
                guard access == generation, !finished, !isSettled else {
                    if repeatingFor == access { repeatingFor = nil }
                    return false
                }
                interruptNow()
                return true
            }
            if again { interruptAgain(access, after: min(delay * 2, .seconds(1))) }
        })
    }

    /// Under `lock`: the driver's interrupt, counted for the test hook.
    private func interruptNow() {
        connection.interrupt()
        interruptsSent += 1
    }

    var isCancelled: Bool { lock.withLock { cancelled } }
    var timeout: Duration? { lock.withLock { timedOutAfter } }
    var isStopped: Bool { lock.withLock { stoppedByShutdown } }

    /// Marks the deadline passed and interrupts, unless the access already
    /// finished: its connection may serve another access by now.
    func timeOut(_ timeout: Duration, _ access: UInt64) {
        lock.withLock {
            guard access == generation, !finished else { return }
            timedOutAfter = timeout
            markRaised(true)
            interruptNow()
        }
        keepInterrupting(access)
    }

    /// Marks the access stopped by the store's shutdown and interrupts,
    /// unless the access already finished.
    func stop() {
        let running = lock.withLock { () -> UInt64? in
            guard !finished else { return nil }
            stoppedByShutdown = true
            markRaised(true)
            return generation
        }
        if let running { interruptElsewhere(running) }
    }

    /// The access is done with the connection's statements.
    func finish() { lock.withLock { finished = true } }

    /// The access's closure has ended: what follows is its COMMIT or
    /// ROLLBACK, which repeated interrupts leave alone (the first one may
    /// still come, as any interrupt may reach a statement just starting).
    @inline(__always)
    func settle() {
        #if !canImport(Darwin)
        settled.store(true, ordering: .releasing)
        #else
        lock.withLock { settledUnderLock = true }
        #endif
    }

    /// Under `lock` (on Apple platforms), or anywhere.
    private var isSettled: Bool {
        #if !canImport(Darwin)
        settled.load(ordering: .acquiring)
        #else
        settledUnderLock
        #endif
    }

    /// Why the access must stop, read under one lock (a statement checks
    /// before it runs, so this is on every statement's path); nil to go on.
    var interruption: Interruption? {
        #if !canImport(Darwin)
        // Set before the writer lets the lock go: a raise seen here is read in
        // full below; one not seen yet is seen by the next statement's check,
        // and its interrupt stops the statement running now.
        guard raised.load(ordering: .acquiring) else { return nil }
        #endif
        return lock.withLock {
            if cancelled { return .cancelled }
            if let timedOutAfter { return .timedOut(timedOutAfter) }
            if stoppedByShutdown { return .stopped }
            return nil
        }
    }

    /// Runs the test hook, if there is one: a statement is prepared and bound,
    /// its last check passed, and the engine starts it next.
    @inline(__always)
    func statementStarts() {
        if let beforeStatement { beforeStatement(InterruptionProbe(flag: self)) }
    }

    /// Whether interrupts are still being repeated for the current access (for tests).
    var isInterruptingAgain: Bool { lock.withLock { repeatingFor != nil && repeatingFor == generation } }

    /// What the test hook may read of the flag whose check just passed.
    var interruptsSentNow: Int { lock.withLock { interruptsSent } }

    /// Records whether anything is raised, under `lock`.
    @inline(__always)
    private func markRaised(_ value: Bool) {
        #if !canImport(Darwin)
        raised.store(value, ordering: .releasing)
        #endif
    }

    /// What stopped an access, in the order ``interruption`` reports them.
    enum Interruption {
        case cancelled
        case timedOut(Duration)
        case stopped
    }
}

/// For a test hook between an access's last check before a statement and the
/// statement's start (``Store/Configuration/beforeStatementStarts``).
package struct InterruptionProbe: Sendable {
    let flag: CancellationFlag
    /// How many interrupts reached the driver for this access so far.
    package var interruptsSent: Int { flag.interruptsSentNow }
}

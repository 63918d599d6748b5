import Depot
import Foundation
import Testing

/// A write whose COMMIT was sent and whose connection was lost before the
/// answer may have committed: it says so (`commitOutcomeUnknown`) whatever
/// else happened to its access meanwhile. Read as cancelled, timed out or
/// stopped, the caller would believe a write that may be in the database did
/// not happen.
@Suite struct CommitOutcomeTests {
    enum Interruption: String, CaseIterable { case cancelled, timedOut, stopped }

    @Test(arguments: Interruption.allCases)
    func aCommitLostAfterItWasSentIsOutcomeUnknownWhateverInterruptedItsAccess(_ interruption: Interruption) async throws {
        // A timeout may come before the COMMIT on a busy machine (the access then rolls back
        // and says so, rightly): each such attempt is checked, and the next waits longer.
        let timeouts: [Duration?] = interruption == .timedOut ? [.milliseconds(50), .milliseconds(500), .seconds(5), .seconds(30)] : [nil]
        for timeout in timeouts {
            let log = FakeLog()
            var configuration = Store.Configuration()
            configuration.accessTimeout = timeout
            let store = Store(driver: FakeDriver(log: log), configuration: configuration)
            // The COMMIT goes out and waits for its answer until the test has interrupted the
            // access; then the connection is lost.
            let interrupted = DispatchSemaphore(value: 0)
            log.onCommit = {
                _ = interrupted.wait(timeout: .now() + 120)
                throw DatabaseError(.connection, "server closed the connection unexpectedly")
            }
            let write = Task { try await store.write { db in try db.execute("WRITE THING") } }
            let ended = Task { _ = await write.result }
            let deadline = ContinuousClock.now + .seconds(120)
            while !log.all.contains("COMMIT"), ContinuousClock.now < deadline {
                if interruption == .timedOut, log.all.contains("INTERRUPT") { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            if !log.all.contains("COMMIT") {
                // The timeout came first: the access rolled back, and its error says so (unless
                // the COMMIT went out just as it came: then it may have committed, and says that).
                interrupted.signal()
                let error = await #expect(throws: DatabaseError.self) { try await write.value }
                if log.all.contains("COMMIT") {
                    #expect(error?.commitOutcomeUnknown == true, "\(String(describing: error))")
                } else {
                    #expect(error?.kind == .timeout && error?.commitOutcomeUnknown == false, "\(String(describing: error))")
                }
                await ended.value
                await store.close()
                continue
            }
            switch interruption {
            case .cancelled: write.cancel()
            case .timedOut: break
            case .stopped: Task { await store.shutdown(gracePeriod: .zero) }
            }
            // The access was told to stop: the engine was asked to interrupt it.
            while !log.all.contains("INTERRUPT"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
            #expect(log.all.contains("INTERRUPT"), "\(interruption): the access was interrupted")
            interrupted.signal()
            let error = await #expect(throws: DatabaseError.self, "\(interruption)") { try await write.value }
            #expect(error?.commitOutcomeUnknown == true, "\(interruption): \(String(describing: error))")
            #expect(error?.kind == .connection, "\(interruption)")
            await ended.value
            log.onCommit = nil
            await store.close()
            return
        }
        Issue.record("\(interruption): every timeout came before the COMMIT")
    }

    /// Cancelling a task returns at once, whatever the engine's interrupt costs:
    /// PostgreSQL's cancel request opens a connection and waits for the server
    /// to close it, and `Task.cancel()` runs the access's cancellation handler
    /// on the caller's thread, which may be a server's event loop.
    @Test func cancellingATaskDoesNotWaitForTheEnginesInterrupt() async throws {
        let log = FakeLog()
        let store = Store(driver: FakeDriver(log: log))
        let commitHeld = DispatchSemaphore(value: 0), releaseCommit = DispatchSemaphore(value: 0)
        log.onCommit = {
            commitHeld.signal()
            _ = releaseCommit.wait(timeout: .now() + 120)
        }
        let interruptEntered = DispatchSemaphore(value: 0), releaseInterrupt = DispatchSemaphore(value: 0)
        let interruptReturned = Flag()
        log.onInterrupt = {
            interruptEntered.signal()
            _ = releaseInterrupt.wait(timeout: .now() + 120)
            interruptReturned.set()
        }
        let write = Task { try await store.write { db in try db.execute("WRITE THING") } }
        // The access is inside its COMMIT (the guard only ends a hung run).
        #expect(await Self.wait(for: commitHeld), "the COMMIT never went out")
        write.cancel()
        #expect(!interruptReturned.isSet, "cancel() returned only after the engine's interrupt did")
        #expect(await Self.wait(for: interruptEntered), "the access was never interrupted")
        releaseInterrupt.signal()
        releaseCommit.signal()
        _ = await write.result
        log.onCommit = nil
        log.onInterrupt = nil
        await store.close()
    }

    /// Waits for a semaphore off the cooperative pool; false after 120 s (a hung run).
    static func wait(for semaphore: DispatchSemaphore) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: semaphore.wait(timeout: .now() + 120) == .success) }
        }
    }

    final class Flag: @unchecked Sendable {
        // Unchecked: `value` is read and written under `lock`.
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }
}

@_spi(Driver) import Depot
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
        let log = FakeLog()
        var configuration = Store.Configuration()
        if interruption == .timedOut { configuration.accessTimeout = .milliseconds(50) }
        let store = Store(driver: FakeDriver(log: log), configuration: configuration)
        // The COMMIT goes out and waits for its answer until the test has interrupted the access;
        // then the connection is lost.
        let commitSent = DispatchSemaphore(value: 0), interrupted = DispatchSemaphore(value: 0)
        log.onCommit = {
            commitSent.signal()
            _ = interrupted.wait(timeout: .now() + 120)
            throw DatabaseError(.connection, "server closed the connection unexpectedly")
        }
        let write = Task { try await store.write { db in try db.execute("WRITE THING") } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { _ = commitSent.wait(timeout: .now() + 120); done.resume() }
        }
        switch interruption {
        case .cancelled: write.cancel()
        case .timedOut: break
        case .stopped: Task { await store.shutdown(gracePeriod: .zero) }
        }
        // The access was told to stop: the engine was asked to interrupt it.
        let deadline = ContinuousClock.now + .seconds(120)
        while !log.all.contains("INTERRUPT"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(log.all.contains("INTERRUPT"), "\(interruption): the access was interrupted")
        interrupted.signal()
        let error = await #expect(throws: DatabaseError.self, "\(interruption)") { try await write.value }
        #expect(error?.commitOutcomeUnknown == true, "\(interruption): \(String(describing: error))")
        #expect(error?.kind == .connection, "\(interruption)")
        log.onCommit = nil
        await store.close()
    }
}

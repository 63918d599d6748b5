@testable import Depot
import Foundation
import Testing

/// The pool hands every free slot to a caller in line: a caller never waits
/// out its checkout timeout while no one holds a connection.
@Suite struct ConnectionPoolTests {
    /// Opens that the test lets through one at a time, and the first of which fails.
    final class Gate: @unchecked Sendable {
        let lock = NSLock()
        var opens = 0
        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
    }

    struct OpenFailed: Error {}

    @Test func aCallerInLineGetsTheSlotOfAnOpenThatFailed() async throws {
        let gate = Gate(), log = FakeLog()
        let pool = ConnectionPool(role: .writer, maxConnections: 1, label: "test") { _ in
            let number = gate.lock.withLock { gate.opens += 1; return gate.opens }
            guard number == 1 else { return FakeConnection(log: log) }
            gate.started.signal()
            gate.proceed.wait()
            throw OpenFailed()
        }
        let first = Task { try await pool.acquire(timeout: .seconds(120)) }
        await withCheckedContinuation { continuation in DispatchQueue.global().async { gate.started.wait(); continuation.resume() } }
        // The second caller finds the only slot taken by the opening one, and waits in line.
        let second = Task { try await pool.acquire(timeout: .seconds(120)) }
        while pool.waiterCount == 0 { await Task.yield() }
        gate.proceed.signal()
        await #expect(throws: OpenFailed.self) { try await first.value }
        // Before the fix it waited out its whole timeout: the freed slot went to no one.
        let connection = try await second.value
        #expect(gate.lock.withLock { gate.opens } == 2)
        await pool.release(connection)
        await pool.close()
    }
}

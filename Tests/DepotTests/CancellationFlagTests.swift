@testable import Depot
import Foundation
import Testing

/// A connection keeps one cancellation flag, started afresh for each access it
/// serves: a cancellation or deadline that belongs to one access never stops
/// the next, and a shutdown stops only the accesses running when it comes.
@Suite struct CancellationFlagTests {
    private func connection(_ log: FakeLog) -> PooledConnection {
        PooledConnection(role: .writer, connection: FakeConnection(log: log), label: "test")
    }

    /// What the connection logged once its interrupt came: the interrupt runs
    /// on a thread of its own, so the caller never waits for the engine (the
    /// guard only ends a hung run). The interrupt is repeated while the access
    /// runs, so the log holds one or more of them: `["INTERRUPT"]` for any count.
    private func afterInterrupt(_ log: FakeLog, atLeast count: Int = 1) async -> [String] {
        let deadline = ContinuousClock.now + .seconds(120)
        while log.all.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        return Array(Set(log.all)).sorted()
    }

    /// Until the flag's repeated interrupts have ended (the guard only ends a hung run).
    private func untilTheRepeatsEnd(_ flag: CancellationFlag) async {
        let deadline = ContinuousClock.now + .seconds(120)
        while flag.isInterruptingAgain, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }

    private func isCancelled(_ flag: CancellationFlag) -> Bool {
        if case .cancelled? = flag.interruption { return true }
        return false
    }

    @Test func aCancellationOrDeadlineArrivingAfterItsAccessNeverStopsTheNextOne() async {
        let log = FakeLog()
        let pooled = connection(log)
        let flag = pooled.cancellation
        let first = flag.begin()
        flag.finish()
        let second = flag.begin()
        // The first access's cancellation handler and deadline, late: nothing
        // is even sent to interrupt (no thread is started for it).
        flag.cancel(first)
        flag.timeOut(.seconds(1), first)
        #expect(flag.interruption == nil)
        #expect(log.all.isEmpty)
        flag.cancel(second)
        #expect(isCancelled(flag))
        #expect(await afterInterrupt(log) == ["INTERRUPT"])
        flag.finish()
    }

    @Test func aDeadlinePassingAfterItsAccessFinishedInterruptsNothing() {
        let log = FakeLog()
        let flag = connection(log).cancellation
        let access = flag.begin()
        flag.finish()
        flag.timeOut(.seconds(1), access)
        #expect(flag.timeout == nil)
        #expect(log.all.isEmpty)
    }

    @Test func aNewAccessStartsWithNothingOfTheLastOnesStops() {
        let log = FakeLog()
        let flag = connection(log).cancellation
        let access = flag.begin()
        flag.timeOut(.milliseconds(5), access)
        #expect(flag.timeout == .milliseconds(5))
        flag.finish()
        _ = flag.begin()
        #expect(flag.interruption == nil)
    }

    @Test func shutdownStopsTheAccessesRunningAndNoneThatLeft() async throws {
        let gate = AccessGate()
        let logs = [FakeLog(), FakeLog(), FakeLog()]
        let connections = logs.map(connection)
        for connection in connections {
            try gate.enter()
            _ = connection.cancellation.begin()
            gate.attach(connection.cancellation)
        }
        // The middle one finished; the last one left the gate at once.
        gate.detach(connections[1].cancellation)
        gate.leave(detaching: nil)
        gate.leave(detaching: connections[2].cancellation)
        #expect(gate.inFlight == 1)
        gate.close()
        gate.interruptAll()
        #expect(await afterInterrupt(logs[0]) == ["INTERRUPT"])
        #expect(logs[1].all.isEmpty && logs[2].all.isEmpty, "the accesses that finished or left are not interrupted")
        #expect(connections[0].cancellation.isStopped)
        #expect(!connections[1].cancellation.isStopped)
        #expect(throws: DatabaseError.self) { try gate.enter() }
        connections[0].cancellation.finish()
    }

    @Test func anAccessAttachedAfterTheShutdownStartedInterruptingIsStoppedAtOnce() async throws {
        let gate = AccessGate()
        let log = FakeLog()
        let pooled = connection(log)
        try gate.enter()
        gate.close()
        gate.interruptAll()
        _ = pooled.cancellation.begin()
        gate.attach(pooled.cancellation)
        #expect(pooled.cancellation.isStopped)
        #expect(await afterInterrupt(log) == ["INTERRUPT"])
        pooled.cancellation.finish()
    }

    /// An interrupt that came while no statement ran (after the access's check,
    /// before the engine started the statement) reached nothing: the flag
    /// interrupts again until the access's closure ends, and no more after.
    @Test func theInterruptIsRepeatedUntilTheAccessesClosureEnds() async {
        let log = FakeLog()
        let flag = connection(log).cancellation
        let access = flag.begin()
        flag.cancel(access)
        #expect(await afterInterrupt(log, atLeast: 3) == ["INTERRUPT"], "three interrupts, the first and two repeats")
        flag.settle()
        await untilTheRepeatsEnd(flag)
        let sent = log.all.count
        #expect(!flag.isInterruptingAgain)
        // The next access of the connection starts with none, and a deadline's own repeats end with the access.
        flag.finish()
        let next = flag.begin()
        #expect(log.all.count == sent, "no interrupt after the closure ended")
        flag.timeOut(.seconds(1), next)
        #expect(await afterInterrupt(log, atLeast: sent + 2) == ["INTERRUPT"])
        flag.finish()
        await untilTheRepeatsEnd(flag)
        #expect(!flag.isInterruptingAgain)
    }

    /// A shutdown whose task is cancelled stops waiting for the accesses in
    /// flight at once (then interrupts them); the wait after the interrupt does not.
    @Test func aCancelledShutdownStopsWaitingForAccessesInFlight() async throws {
        let gate = AccessGate()
        try gate.enter()
        let cancelled = Task { await gate.waitUntilEmpty(for: .seconds(600), endsOnCancel: true) }
        cancelled.cancel()
        #expect(await cancelled.value == false, "cancelled: the wait ends, the access still in flight")
        // Cancelled before or after it starts waiting, alike: only the last access leaving ends it.
        let patient = Task { await gate.waitUntilEmpty(for: .seconds(600), endsOnCancel: false) }
        patient.cancel()
        gate.leave(detaching: nil)
        #expect(await patient.value == true, "not ended by the cancel: it ends when the last access leaves")
    }
}

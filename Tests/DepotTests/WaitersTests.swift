@testable import Depot
import Foundation
import Testing

/// The one waiter registry of the core: hand-overs in line, timeouts that
/// fire before a task is queued, cancellation.
/// (The time limit is a guard against a hang only: under the thread sanitizer
/// beside the whole suite, the first minute passed before these tasks ran.)
@Suite(.timeLimit(.minutes(10)))
struct WaitersTests {
    final class Owner: WaiterOwner, @unchecked Sendable {
        let waiterLock = NSLock()
        var waiters = Waiters<String>()
        var available: String?
        var queued: Int { waiterLock.withLock { waiters.count } }

        func take(timeout: Duration? = nil, afterRegistering: () async -> Void = {}) async -> String {
            await wait(timeout: timeout, timedOut: { "timed out" }, cancelled: "cancelled", afterRegistering: afterRegistering) { () -> String? in
                defer { available = nil }
                return available
            }
        }

        func handOverFirst(_ value: String) {
            let waiter = waiterLock.withLock { waiters.removeFirst() }
            waiter?.resume(returning: value)
        }
    }

    @Test func aValueReadyAtOnceIsTakenWithoutWaiting() async {
        let owner = Owner()
        owner.available = "now"
        #expect(await owner.take() == "now")
        #expect(owner.queued == 0)
    }

    @Test func waitersAreHandedValuesInTheOrderTheyQueued() async {
        let owner = Owner()
        let first = Task { await owner.take() }
        while owner.queued < 1 { await Task.yield() }
        let second = Task { await owner.take() }
        while owner.queued < 2 { await Task.yield() }
        owner.handOverFirst("a")
        owner.handOverFirst("b")
        #expect(await first.value == "a")
        #expect(await second.value == "b")
    }

    @Test func aTimeoutEndsTheWaitEvenWhenItFiresBeforeTheTaskIsQueued() async {
        // A task held up between starting its timer and queuing (a busy machine):
        // its timer fires first, and the wait must still end with the timeout.
        // (The pause only makes that order likely; the outcome is the same either way.)
        let held = Owner()
        #expect(await held.take(timeout: .milliseconds(1), afterRegistering: { try? await Task.sleep(for: .milliseconds(200)) }) == "timed out")
        // Many at once, with a timer of zero.
        let owner = Owner()
        await withTaskGroup(of: String.self) { group in
            for _ in 0..<500 { group.addTask { await owner.take(timeout: .zero) } }
            for await value in group { #expect(value == "timed out") }
        }
        #expect(owner.queued == 0)
    }

    @Test func aTimerMarksARegisteredWaitThatIsNotQueuedYetAsExpired() {
        var waiters = Waiters<Int>()
        let id = waiters.register()
        #expect(waiters.expire(id) == nil, "nothing to resume yet")
        #expect(waiters.isExpired(id), "the wait, when it comes to queue, returns its timeout")
        waiters.forget(id)
        #expect(!waiters.isExpired(id))
    }

    @Test func aCancelledWaitEndsAndLeavesTheLine() async {
        let owner = Owner()
        let waiting = Task { await owner.take() }
        while owner.queued < 1 { await Task.yield() }
        waiting.cancel()
        #expect(await waiting.value == "cancelled")
        #expect(owner.queued == 0)
        // A task cancelled before it waits never queues.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await owner.take()
        }
        #expect(await early.value == "cancelled")
    }

    @Test func removeAllHandsOverEveryQueuedWaitOldestFirstAndKeepsRegistrations() {
        var waiters = Waiters<Int>()
        let pending = waiters.register()
        #expect(waiters.removeAll().isEmpty)
        #expect(waiters.expire(pending) == nil)
        #expect(waiters.isExpired(pending), "a registration survives removeAll")
    }
}

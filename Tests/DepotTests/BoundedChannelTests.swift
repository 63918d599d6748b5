@testable import Depot
import Foundation
import Testing

/// The core's one bounded channel, in both pairings it serves: a blocking
/// producer with an async consumer (rows out of a read), an async producer with
/// a blocking consumer (records into a write).
// The limit only ends a hang: under the thread sanitizer beside the whole suite on two cores,
// a thousand hand-overs took 337 s (every one a thread's wake-up and a task's resumption).
@Suite(.timeLimit(.minutes(15)))
struct BoundedChannelTests {
    /// Runs `body` on a thread of its own, as a connection's.
    func onThread(_ body: @escaping @Sendable () -> Void) {
        Thread { body() }.start()
    }

    @Test func aBlockingProducerFeedsAnAsyncConsumerEveryElementInOrderThenTheEnd() async throws {
        let channel = BoundedChannel<Int>(capacity: 4)
        onThread {
            for n in 0..<1_000 { try? channel.sendBlocking(n) }
            channel.finish(nil)
        }
        var received: [Int] = []
        while let n = try await channel.receive() { received.append(n) }
        #expect(received == Array(0..<1_000))
        #expect(channel.delivered == 1_000)
    }

    @Test func anAsyncProducerFeedsABlockingConsumerEveryElementInOrderThenTheEnd() async throws {
        let channel = BoundedChannel<Int>(capacity: 3)
        let producer = Task {
            for n in 0..<1_000 { try await channel.send(n) }
            channel.finish(nil)
        }
        let received = await withCheckedContinuation { (continuation: CheckedContinuation<[Int], Never>) in
            onThread {
                var received: [Int] = []
                while let n = channel.receiveBlocking() { received.append(n) }
                continuation.resume(returning: received)
            }
        }
        try await producer.value
        #expect(received == Array(0..<1_000))
        #expect(throws: Never.self) { try channel.checkEnded() }
    }

    @Test func theProducerWaitsWhileTheBufferIsFull() async throws {
        let channel = BoundedChannel<Int>(capacity: 2)
        let sent = Task {
            for n in 0..<3 { try await channel.send(n) }
            return true
        }
        // Two fit; the third waits until one is taken.
        #expect(try await channel.receive() == 0)
        #expect(try await sent.value)
        #expect(try await channel.receive() == 1)
        #expect(try await channel.receive() == 2)
    }

    @Test func theProducersErrorComesAfterTheElementsBeforeIt() async throws {
        struct Broken: Error {}
        let channel = BoundedChannel<Int>(capacity: 8)
        try channel.sendBlocking(1)
        channel.finish(Broken())
        channel.finish(nil) // the first end counts
        #expect(try await channel.receive() == 1)
        await #expect(throws: Broken.self) { try await channel.receive() }
        #expect(throws: Broken.self) { try channel.checkEnded() }
    }

    @Test func aCancelWakesAProducerBlockedOnAFullBufferAndAWaitingConsumer() async throws {
        let full = BoundedChannel<Int>(capacity: 1)
        try full.sendBlocking(0)
        let blocked = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            onThread {
                do { try full.sendBlocking(1); continuation.resume(returning: false) } catch { continuation.resume(returning: error is CancellationError) }
            }
            full.cancel()
        }
        #expect(blocked, "the blocked producer is told the channel was cancelled")
        await #expect(throws: CancellationError.self) { try await full.receive() }
        #expect(full.receiveBlocking() == nil, "a cancelled channel hands out nothing more")

        let empty = BoundedChannel<Int>(capacity: 1)
        let waiting = Task { try await empty.receive() }
        await Task.yield()
        empty.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await #expect(throws: CancellationError.self) { try await empty.send(1) }
    }
}

import Depot
import Foundation
import Testing

/// The loop every backend's change listener runs: a failed connect is retried,
/// a connection that stops serving is closed and another opened, and a stop ends it.
@Suite struct ListenerLoopTests {
    final class Attempts: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func next() -> Int { lock.withLock { defer { count += 1 }; return count } }
    }

    @Test func aFailedConnectIsRetriedAndAConnectionThatStopsServingIsReplaced() async throws {
        let (events, report) = AsyncStream<String>.makeStream()
        let attempts = Attempts()
        let loop = ListenerLoop<Int>(name: "depot.test.listener",
            connect: {
                let attempt = attempts.next()
                if attempt < 2 { throw DatabaseError(.connection, "the server is down") }
                return attempt
            },
            serve: { connection, loop in
                report.yield("serving \(connection)")
                // The second connection serves until the loop stops, as a listener polls.
                while connection == 3, !loop.isStopped { Thread.sleep(forTimeInterval: 0.001) }
            },
            close: { report.yield("closed \($0)") },
            failedToConnect: { error in report.yield("failed: \((error as? DatabaseError)?.message ?? "\(error)")") })
        var seen: [String] = []
        for await event in events {
            seen.append(event)
            if event == "serving 3" { break }
        }
        #expect(seen == ["failed: the server is down", "failed: the server is down", "serving 2", "closed 2", "serving 3"])
        #expect(loop.isListening, "serving a connection is listening")
        loop.stop()
        for await event in events where event == "closed 3" { break }
        #expect(loop.isStopped)
        #expect(!loop.isListening, "a stopped loop listens no more")
    }
}

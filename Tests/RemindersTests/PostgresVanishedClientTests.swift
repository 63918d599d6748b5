import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// A process killed while its write waits on a lock leaves no backend behind:
/// PostgreSQL's `client_connection_check_interval`, which Depot sets on every
/// connection (``PostgresConfiguration/clientConnectionCheckInterval``).
/// Without it the backend keeps its place in the lock queue until the lock frees.
@Suite(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresVanishedClientTests {
    let commands = RemindersCommandTests()

    @Test func aKilledProcessWhoseWriteWaitsOnALockLeavesNoBackendWithinTwiceTheInterval() async throws {
        let store = try await PostgresTestServer.freshStore()
        let schema = try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
        let setting = try await store.read { db in try db.fetchOne(String.self, "SHOW client_connection_check_interval") }
        #expect(setting == "5s", "every connection checks every 5 s by default")
        let server = try #require(PostgresTestServer.url)
        let interval = Duration.seconds(2)
        let url = server + (server.contains("?") ? "&" : "?") + "search_path=\(schema)&client_connection_check_interval=2s"
        let setUp = try await commands.run(["add", "first", "--database", url])
        #expect(setUp.status == 0, "\(setUp.stderr)")

        // This store holds the reminders table locked until the child is gone.
        let (locked, lockedSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await store.write { db in
                try db.execute("LOCK TABLE \(ident: "reminders") IN EXCLUSIVE MODE")
                lockedSignal.yield()
                // Blocks this access's thread until the test is done with the lock.
                let done = DispatchSemaphore(value: 0)
                Task { for await _ in release { break }; done.signal() }
                done.wait()
            }
        }
        for await _ in locked { break }

        let child = Process()
        child.executableURL = try commands.binary()
        child.arguments = ["add", "second", "--database", url]
        child.environment = commands.environment
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer {
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            releaseSignal.finish()
        }

        // The child's backend, once it waits on the lock (the guard only ends a hung run).
        var backend: Int32?
        let start = ContinuousClock.now
        while backend == nil, ContinuousClock.now - start < .seconds(120) {
            backend = try await store.read { db in
                try db.fetchOne(Int32.self, """
                    SELECT pid FROM pg_stat_activity
                    WHERE wait_event_type = 'Lock' AND datname = current_database() AND query LIKE '%reminders%'
                    """)
            }
            if backend == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let pid = try #require(backend, "the child's write never waited on the lock")

        kill(child.processIdentifier, SIGKILL)
        try await ChildProcess.onThreadOfItsOwn { child.waitUntilExit() }
        // Measured from the child's end (its socket closed with it; on a busy
        // machine a killed process can take a while to be gone): the server
        // checks every interval while the statement waits. `lastSeen` is when
        // a look at pg_stat_activity, begun then, still found the backend: it
        // lived at least that long. A busy machine delays the looks, never what
        // they saw.
        let killed = ContinuousClock.now
        var lastSeen = Duration.zero
        var gone = false
        while !gone, ContinuousClock.now - killed < .seconds(120) {
            let looked = ContinuousClock.now - killed
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid)") }
            if count == 0 { gone = true } else { lastSeen = looked; try await Task.sleep(for: .milliseconds(20)) }
        }
        releaseSignal.yield()
        try await holder.value
        print("PostgresVanishedClientTests: the killed child's backend was last seen \(lastSeen) after the child ended, gone \(gone ? "after" : "never (120 s)")")
        #expect(gone, "the killed child's backend was still there 120 s after the child ended, while the lock was held")
        #expect(lastSeen < interval * 2, "the killed child's backend was still there \(lastSeen) after the child ended; the interval is \(interval)")
        await store.close()
    }
}

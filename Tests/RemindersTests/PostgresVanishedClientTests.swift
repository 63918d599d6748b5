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
        let setUp = try commands.run(["add", "first", "--database", url])
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
        let killed = ContinuousClock.now
        child.waitUntilExit()
        // Measured from the kill: the server checks every interval while the statement waits.
        var gone: ContinuousClock.Instant?
        while gone == nil, ContinuousClock.now - killed < .seconds(120) {
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid)") }
            if count == 0 { gone = .now } else { try await Task.sleep(for: .milliseconds(20)) }
        }
        releaseSignal.yield()
        try await holder.value
        let after = gone.map { $0 - killed }
        #expect(after.map { $0 < interval * 2 } == true, "the killed child's backend ended \(after.map { "\($0)" } ?? "never") after the kill; the interval is \(interval)")
        await store.close()
    }
}

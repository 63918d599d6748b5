import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Testing
import TestSupport

/// DepotTesting and DepotPostgresTesting as a user's tests meet them.
@Suite struct DepotTestingTests {
    static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("create lists", script: "CREATE TABLE \(ident: "lists") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: "title") \(type: .text) NOT NULL)")
        migrator.register("seed", script: "INSERT INTO \(ident: "lists") VALUES (1, 'Inbox')")
        return migrator
    }

    /// More children at once than Swift's task pool has threads, each running
    /// until a task on the pool marks a file: were a child's wait to hold a
    /// thread of the pool, that task could never run. (Such waits starved the
    /// tests beside them: an access waited 30 s for a connection whose holder
    /// could not get a thread to give it back.) A watchdog on a thread of its
    /// own ends a hang with a failure.
    @Test func childProcessesWaitWithoutHoldingAThreadOfTheTaskPool() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-children-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let go = folder.appendingPathComponent("go").path
        let children = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        let runs = (0..<children).map { index in
            Task {
                try await ChildProcess.run("/bin/sh", ["-c", "touch '\(folder.path)/started-\(index)'; while [ ! -e '\(go)' ]; do sleep 0.01; done; echo ran \(index)"])
            }
        }
        let watchdog = Alarm()
        let alarm = DispatchWorkItem { watchdog.ring(); FileManager.default.createFile(atPath: go, contents: nil) }
        OffPool.run("depot.test.watchdog", after: .seconds(120), alarm)
        defer { alarm.cancel() }
        // Every child has started: an event, looked for from a task on the pool.
        while try FileManager.default.contentsOfDirectory(atPath: folder.path).filter({ $0.hasPrefix("started-") }).count < children, !watchdog.rang {
            try await Task.sleep(for: .milliseconds(10))
        }
        FileManager.default.createFile(atPath: go, contents: nil)
        for (index, run) in runs.enumerated() {
            let (status, output) = try await run.value
            #expect(status == 0 && output == "ran \(index)\n", "child \(index): \(status) \(output)")
        }
        #expect(!watchdog.rang, "\(children) children were still waiting after 120 s: their waits held the threads of the task pool")
    }

    /// Whether a watchdog went off.
    final class Alarm: @unchecked Sendable {
        // Unchecked: `rung` is read and written under `lock`.
        private let lock = NSLock()
        private var rung = false
        func ring() { lock.withLock { rung = true } }
        var rang: Bool { lock.withLock { rung } }
    }

    @Test func fixturesAreWrittenAfterTheMigrations() async throws {
        let store = try await TestStore.sqlite(migrator: Self.migrator) { db in
            try db.execute("INSERT INTO \(ident: "lists") VALUES (2, 'Work')")
        }
        #expect(try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "title") FROM \(ident: "lists") ORDER BY 1") } == ["Inbox", "Work"])
        await store.close()
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func aProxysReplyDelayHoldsEachAnswerBack() async throws {
        var configuration = try PostgresTestServer.requireConfiguration()
        let proxy = try TCPProxy(to: configuration.host, port: configuration.port)
        try proxy.start()
        defer { proxy.stop() }
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        let store = try await Store.postgres(configuration)
        proxy.replyDelay = .milliseconds(300)
        let started = ContinuousClock.now
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
        // A lower bound: a delay cannot make an answer come sooner.
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        proxy.replyDelay = .zero
        await store.close()
    }

    @Test func aFreshSQLiteStoreHasTheMigrationsApplied() async throws {
        let store = try await TestStore.sqlite(migrator: Self.migrator)
        #expect(try await store.read { db in try db.snapshot("SELECT * FROM \(ident: "lists")") } == "id | title\n---+------\n1  | Inbox")
        await store.close()
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func aFreshPostgreSQLStoreIsAnEmptySchemaWithTheMigrationsApplied() async throws {
        let first = try await TestStore.postgres(migrator: Self.migrator)
        let second = try await TestStore.postgres(migrator: Self.migrator)
        try await first.write { db in try db.execute("INSERT INTO \(ident: "lists") VALUES (2, 'Work')") }
        #expect(try await first.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "lists")") } == 2)
        #expect(try await second.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "lists")") } == 1, "schemas of their own")
        await first.close()
        await second.close()
    }

    /// Where Debian's server binaries are (always in CI, which installs them).
    static let hasServerBinaries = ThrowawayPostgres.isInstalled || PostgresTestServer.isCI

    @Test(.enabled(if: hasServerBinaries, "PostgreSQL's server binaries are not installed"))
    func aThrowawayServerStartsServesAndLeavesNothingWhenStopped() async throws {
        let server = try ThrowawayPostgres.start()
        let store = try await Store.postgres(url: server.url)
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
        await store.close()
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: server.folder.path), "its folder is deleted")
        let error = await #expect(throws: DatabaseError.self) { try await Store.postgres(url: server.url) }
        #expect(error?.kind == .connection, "nothing listens any more")
    }
}

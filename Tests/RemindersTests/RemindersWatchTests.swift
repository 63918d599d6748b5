import Foundation
import Testing
import TestSupport

/// Reads a pipe until its end, handing each piece to `body`: `read(2)` again
/// when a signal interrupts it (the test process gets one for every child that
/// ends). `FileHandle.availableData` gave an empty piece then, which reads as
/// the end: the reading stopped, the child blocked writing to a full pipe, and
/// could not exit on SIGINT (a stress round here).
func readUntilEnd(_ handle: FileHandle, _ body: (Data) -> Void) {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            body(Data(buffer[0..<count]))
        } else if count < 0, errno == EINTR {
            continue
        } else {
            return
        }
    }
}

/// A running `reminders watch`, its output collected as it comes.
final class WatchingProcess: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var output = ""

    init(binary: URL, arguments: [String], environment: [String: String]) throws {
        process.executableURL = binary
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // A thread that reads until the end, not a readabilityHandler: the dispatch source behind one
        // outlived its pipe's descriptor, which other tests' pipes then reused, and libdispatch crashed
        // the test process in _dispatch_event_loop_drain (a CI run here).
        let reading = pipe.fileHandleForReading
        Thread { [weak self] in
            readUntilEnd(reading) { data in
                guard let self else { return }
                self.lock.withLock { self.output += String(decoding: data, as: UTF8.self) }
            }
        }.start()
    }

    var text: String { lock.withLock { output } }

    /// Waits until the output holds `marker` `times` times; fails after `limit` (a bound on liveness).
    func waitFor(_ marker: String, times: Int = 1, limit: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + limit
        while text.components(separatedBy: marker).count - 1 < times {
            guard ContinuousClock.now < deadline else {
                throw ObservationWait.TimedOut(description: "no \"\(marker)\" ×\(times) within \(limit); output:\n\(text)")
            }
            guard process.isRunning else {
                throw ObservationWait.TimedOut(description: "reminders watch ended (status \(process.terminationStatus)):\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends SIGTERM and waits (on a thread of its own): `watch` stops cleanly, status 0.
    func stop() async throws -> Int32 {
        process.terminate()
        let process = self.process
        try await ChildProcess.onThreadOfItsOwn { process.waitUntilExit() }
        return process.terminationStatus
    }
}

extension RemindersCommandTests {
    /// Starts `reminders watch Groceries`, changes the list from another
    /// `reminders` process, and returns how long after that process started the new drawing showed.
    func watchFollowsAnotherProcess(_ database: [String]) async throws -> Duration {
        let created = try await run(["lists", "add", "Groceries"] + database)
        #expect(created.status == 0, "\(created.stderr)")
        let watcher = try WatchingProcess(binary: try binary(), arguments: ["watch", "Groceries"] + database, environment: environment)
        try await watcher.waitFor("---")
        #expect(watcher.text.contains("(none)"))
        let added = try await run(["add", "Milk 🥛", "--list", "Groceries"] + database)
        #expect(added.status == 0, "\(added.stderr)")
        // Timed from the other process's end, when its commit is done (however slowly a busy machine
        // started it): an upper bound on commit-to-drawing.
        let committedAt = ContinuousClock.now
        try await watcher.waitFor("Milk 🥛")
        let latency = ContinuousClock.now - committedAt
        // Another change, another drawing: completing it (shown lists hide completed reminders).
        let completed = try await run(["complete", "1"] + database)
        #expect(completed.status == 0, "\(completed.stderr)")
        try await watcher.waitFor("---", times: 3)
        let drawings = watcher.text.components(separatedBy: "---\n").filter { !$0.isEmpty }
        #expect(drawings.last?.contains("(none)") == true, "the last drawing has no open reminder: \(watcher.text)")
        #expect(try await watcher.stop() == 0, "watch stops cleanly on SIGTERM: \(watcher.text)")
        return latency
    }

    @Test func watchRedrawsWhenAnotherProcessChangesTheListOnSQLite() async throws {
        let latency = try await watchFollowsAnotherProcess([])
        // A figure, not a bound: a busy machine once took 11 s to start and run the other process's
        // write and this redraw (the redraw itself is awaited, up to waitFor's bound against a hang).
        print("reminders watch on SQLite: redrawn within \(latency) of the other process's commit")
        let files = try FileManager.default.contentsOfDirectory(atPath: home.appendingPathComponent("depot-reminders").path)
        #expect(!files.contains { $0.hasSuffix("-wal") }, "the store closed: \(files)")
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func watchRedrawsWhenAnotherProcessChangesTheListOnPostgreSQL() async throws {
        let store = try await PostgresTestServer.freshStore()
        let schema = try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
        await store.close()
        let server = try #require(PostgresTestServer.url)
        let url = server + (server.contains("?") ? "&" : "?") + "search_path=\(schema)"
        let latency = try await watchFollowsAnotherProcess(["--database", url])
        // A figure, not a bound (see the SQLite test).
        print("reminders watch on PostgreSQL: redrawn within \(latency) of the other process's commit")
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func watchSaysWhenPostgreSQLIsUnreachableAndWhenItIsBackThenFollowsAgain() async throws {
        let store = try await PostgresTestServer.freshStore()
        let schema = try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
        await store.close()
        let direct = try PostgresTestServer.requireConfiguration()
        let server = try #require(PostgresTestServer.url)
        let url = server + (server.contains("?") ? "&" : "?") + "search_path=\(schema)"
        // The watcher reaches the server through a proxy the test takes down.
        let proxy = try TCPProxy(to: direct.host, port: direct.port)
        try proxy.start()
        defer { proxy.stop() }
        let user = direct.user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? direct.user
        let password = (direct.password ?? "").addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? ""
        let proxied = "postgres://\(user):\(password)@127.0.0.1:\(proxy.port)/\(direct.database)?search_path=\(schema)"
        #expect(try await run(["lists", "add", "Groceries", "--database", url]).status == 0)
        let watcher = try WatchingProcess(binary: try binary(), arguments: ["watch", "Groceries", "--database", proxied], environment: environment)
        try await watcher.waitFor("---")
        proxy.stop()
        try await watcher.waitFor("the database is unreachable", limit: .seconds(10))
        try proxy.start()
        try await watcher.waitFor("the database is back", limit: .seconds(10))
        #expect(try await run(["add", "Milk", "--list", "Groceries", "--database", url]).status == 0)
        try await watcher.waitFor("Milk", limit: .seconds(10))
        #expect(!watcher.text.contains(direct.password ?? "no password"), "no password in what watch prints")
        #expect(try await watcher.stop() == 0, "watch stops cleanly on SIGTERM: \(watcher.text)")
    }
}

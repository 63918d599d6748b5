import DepotPostgres
import DepotTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The executable as an operator meets it: arguments, and each failure to
/// start as one line on stderr and a non-zero exit, quickly.
@Suite struct ServerStartupTests {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
        var elapsed: Duration
    }

    /// The `RemindersServer` program built beside the tests.
    func binary() throws -> URL {
        let folder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        return try #require([folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("RemindersServer") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }, "RemindersServer is built beside the tests")
    }

    /// Runs the server in an empty folder; one that starts serving is stopped after `serving`.
    /// It waits on a thread of its own, not one of the task pool's (see `ChildProcess`).
    func run(_ arguments: [String], stopAfter serving: Duration = .seconds(20)) async throws -> (Outcome, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("reminders-server-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let binary = try binary()
        let outcome = try await ChildProcess.onThreadOfItsOwn {
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            process.currentDirectoryURL = folder
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            let started = ContinuousClock.now
            try process.run()
            let watchdog = Thread { Thread.sleep(forTimeInterval: Double(serving.components.seconds)); if process.isRunning { process.terminate() } }
            watchdog.start()
            let errors = ChildProcess.PipeReader(err.fileHandleForReading)
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = errors.wait()
            process.waitUntilExit()
            return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                           stderr: String(decoding: stderr, as: UTF8.self), elapsed: ContinuousClock.now - started)
        }
        return (outcome, folder)
    }

    /// A failure to start: one line, exit 1, within 10 seconds, and `expected` in it.
    func expectOneLineFailure(_ arguments: [String], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Outcome {
        let (outcome, folder) = try await run(arguments)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(outcome.status == 1, "\(arguments): exit \(outcome.status), \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.hasPrefix("RemindersServer: "), "\(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.filter { $0 == "\n" }.count == 1, "one line: \(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(outcome.stderr.contains(expected), "\(outcome.stderr)", sourceLocation: sourceLocation)
        #expect(!outcome.stderr.contains("Fatal error") && !outcome.stderr.contains("backtrace"), sourceLocation: sourceLocation)
        #expect(outcome.elapsed < .seconds(10), "\(arguments) took \(outcome.elapsed)", sourceLocation: sourceLocation)
        return outcome
    }

    @Test func helpPrintsTheOptionsAndCreatesNothing() async throws {
        let (outcome, folder) = try await run(["--help"])
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(outcome.status == 0)
        for option in ["--host", "--port", "--database", "--log-level"] { #expect(outcome.stdout.contains(option), "\(option)") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [], "no database file named --help")
    }

    @Test func anUnknownOptionOrABadPortIsAUsageError() async throws {
        for arguments in [["--verbose"], ["--port", "70000"], ["--port", "eighty"], ["extra"]] {
            let (outcome, folder) = try await run(arguments)
            defer { try? FileManager.default.removeItem(at: folder) }
            #expect(outcome.status == 64, "\(arguments): \(outcome.status) \(outcome.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [], "nothing created")
        }
    }

    @Test func aDatabaseInAFolderThatDoesNotExistIsOneLine() async throws {
        _ = try await expectOneLineFailure(["--database", "/nonexistent-\(UUID().uuidString)/reminders.sqlite", "--port", "0"], "there is no folder")
        _ = try await expectOneLineFailure(["--database", "", "--port", "0"], "the database location is empty")
    }

    @Test func aFileThatIsNotADatabaseIsOneLine() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-database-\(UUID().uuidString)").path
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try await expectOneLineFailure(["--database", path, "--port", "0"], "cannot use the database at \(path)")
    }

    @Test func aPortInUseIsOneLine() async throws {
        // Hold a port: listen on it.
        let (holder, port) = try boundLoopbackSocket()
        defer { close(holder) }
        #expect(listen(holder, 1) == 0)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("port-in-use-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        _ = try await expectOneLineFailure(["--database", path, "--port", String(port)], "cannot listen on 127.0.0.1:\(port)")
    }

    @Test func aPostgreSQLServerThatIsDownIsOneLine() async throws {
        _ = try await expectOneLineFailure(["--database", "postgres://depot:secret-word@127.0.0.1:1/reminders", "--port", "0"],
                                     "cannot use the database at postgres://depot:***@127.0.0.1:1/reminders")
    }

    @Test func aWrongPasswordIsOneLineAtOnceAndNeverShown() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty else {
            #expect(environment["CI"] != "true", "CI must name a PostgreSQL server (DEPOT_POSTGRES_URL)")
            return
        }
        let password = "wrong-\(UUID().uuidString)"
        let good = try PostgresConfiguration(url: url)
        let wrong = "postgres://\(good.user):\(password)@\(good.host):\(good.port)/\(good.database)"
        let outcome = try await expectOneLineFailure(["--database", wrong, "--port", "0"], "password authentication failed")
        #expect(outcome.elapsed < .seconds(5), "not retried: \(outcome.elapsed)")
        #expect(!(outcome.stdout + outcome.stderr).contains(password))
        #expect(!(outcome.stdout + outcome.stderr).contains(good.password ?? "no password"))
    }
}

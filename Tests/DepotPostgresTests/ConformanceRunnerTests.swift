import DepotConformance
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// `depot-conformance`, run as a user runs it, against both engines.
@Suite struct ConformanceRunnerTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let folder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        var candidates = [folder.appendingPathComponent("depot-conformance")]
        candidates.append(folder.deletingLastPathComponent().appendingPathComponent("depot-conformance"))
        let binary = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                                  "depot-conformance is built beside the tests (swift build --build-tests)")
        return try await ChildProcess.run(binary.path, arguments)
    }

    @Test func itPassesOnSQLiteFilesAndReportsEachCheck() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-runner-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (status, output) = try await run([folder.appendingPathComponent("db.sqlite").path, "--filter", "sql:"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("PASS  sql: injection attempts are stored and matched verbatim"))
        let checks = ConformanceSuite.checks.filter { $0.name.hasPrefix("sql:") }.count
        #expect(output.hasSuffix("\(checks) passed, 0 failed\n"))
        // It leaves nothing behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named"))
    func itPassesOnPostgreSQL() async throws {
        let url = try #require(PostgresTestServer.url, "no PostgreSQL server named")
        let (status, output) = try await run([url, "--filter", "constraints:"])
        #expect(status == 0, "\(output)")
        #expect(output.hasPrefix("Depot conformance: 5 checks against PostgreSQL postgres://"))
        #expect(!output.contains(try #require(URLComponents(string: url)?.password)), "the password is never printed")
        #expect(output.hasSuffix("5 passed, 0 failed\n"))
    }

    @Test func anUnusableDatabaseIsOneLineAndExitStatus2() async throws {
        let (status, output) = try await run(["postgres://nobody:secret@127.0.0.1:1/none"])
        #expect(status == 2)
        #expect(output.split(separator: "\n").count == 1)
        #expect(!output.contains("secret"))
    }

    @Test(.enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named"))
    func aStandbyAloneIsRefusedWithWhatToNameInstead() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        let standby = try #require(try PostgresConfiguration(url: url).hosts.last)
        let alone = url.replacingOccurrences(of: #"@[^/]*/"#, with: "@\(standby.host):\(standby.port)/", options: .regularExpression)
        let (status, output) = try await run([alone])
        #expect(status == 2)
        #expect(output.contains("127.0.0.1:\(standby.port) is a read-only hot standby: every check writes its own tables first, so none can run against a standby alone."), "\(output)")
        #expect(output.contains("Name its primary first"))
    }

    @Test(.enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named"))
    func itRunsEveryChecksReadsOnAStandby() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        let standby = try #require(try PostgresConfiguration(url: url).hosts.last)
        let (status, output) = try await run([url, "--filter", "replicas:"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("  reads run on the hot standby at 127.0.0.1:\(standby.port)"), "\(output)")
        #expect(output.hasSuffix("3 passed, 0 failed\n"))
    }

    @Test(.enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named"))
    func itRunsThroughPgBouncer() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.pgbouncerURL, "DEPOT_PGBOUNCER_URL")
        let (status, output) = try await run([url, "--filter", "observation:"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("  through a pooler in transaction mode"), "\(output)")
        let observationChecks = ConformanceSuite.checks.filter { $0.name.hasPrefix("observation:") }.count
        #expect(output.hasSuffix("\(observationChecks) passed, 0 failed\n"), "\(output)")
    }
}

import DepotConformance
import DepotTesting
import Foundation
import Testing

/// `depot-conformance-mariadb`, run as a user runs it.
@Suite(.enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"))
struct MariaDBRunnerTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let folder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        let candidates = [folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("depot-conformance-mariadb") }
        let binary = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                                  "depot-conformance-mariadb is built beside the tests (swift build --build-tests)")
        return try await ChildProcess.run(binary.path, arguments)
    }

    @Test func itRunsTheChecksAndListsWhatItSkippedForACapability() async throws {
        let url = try #require(MariaDBTestServer.url, "no MariaDB server named")
        let (status, output) = try await run([url, "--filter", "migrations:"])
        #expect(status == 0, "\(output)")
        // Counted from the suite, so a check added to the area does not break this test.
        let checks = ConformanceSuite.checks.filter { $0.name.hasPrefix("migrations:") }.count
        #expect(output.hasPrefix("Depot conformance: \(checks) checks against MariaDB mariadb://"), "\(output)")
        #expect(output.contains("SKIP  migrations: a failing migration rolls back whole and names itself  (the store declares no transactionalSchemaChanges)"))
        #expect(output.contains("Skipped for a capability the store declares missing:\n  transactionalSchemaChanges: migrations: a failing migration rolls back whole and names itself"))
        #expect(output.hasSuffix("\(checks - 1) passed, 0 failed, 1 skipped\n"), "\(output)")
        #expect(!output.contains(try #require(URLComponents(string: url)?.password)), "the password is never printed")
    }

    @Test func anUnusableServerIsOneLineAndExitStatus2() async throws {
        let (status, output) = try await run(["mariadb://nobody:secret@127.0.0.1:1/none"])
        #expect(status == 2)
        #expect(output.split(separator: "\n").count == 1, "\(output)")
        #expect(!output.contains("secret"))
    }
}

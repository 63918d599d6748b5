import Depot
import DepotConformance
import DepotMariaDB
import DepotMariaDBTesting
import Foundation
import Testing

/// The MariaDB server the tests run against: `DEPOT_MARIADB_URL`, whose user
/// may create and drop the databases `depot_*` (scripts/lib/mariadb.sh starts one).
enum MariaDBTestServer {
    static let url = ProcessInfo.processInfo.environment["DEPOT_MARIADB_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Run when a server is named, and on CI always: there a missing URL fails.
    static let shouldRun = url != nil || isCI
    /// `DEPOT_CONFORMANCE_FILTER=text`: only the checks whose names hold it (for development).
    static func checkNames(alone: Bool) -> [String] {
        ConformanceSuite.names(alone: alone).filter { name in
            ProcessInfo.processInfo.environment["DEPOT_CONFORMANCE_FILTER"].map { $0.isEmpty || name.contains($0) } ?? true
        }
    }

    static func configuration() throws -> MariaDBConfiguration {
        guard let url else {
            throw DatabaseError(.connection, "CI=true but DEPOT_MARIADB_URL is not set: the MariaDB conformance suite must run on CI")
        }
        return try MariaDBConfiguration(url: url)
    }
}

/// The whole conformance suite, unmodified, one test per check. A check the
/// store's capabilities rule out is cancelled (reported as skipped, never passed).
@Suite(.serialized, .enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"))
struct MariaDBConformance {
    /// The checks that measure the process's memory, run by `scripts/test` after the rest, alone.
    @Test("MariaDB, with the process alone", arguments: MariaDBTestServer.checkNames(alone: true))
    func mariadbProcessAlone(_ name: String) async throws { try await mariadb(name) }

    @Test("MariaDB", arguments: MariaDBTestServer.checkNames(alone: false))
    func mariadb(_ name: String) async throws {
        try await MariaDBTestServer.runCheck(name, on: try MariaDBTestServer.configuration())
    }
}

extension MariaDBTestServer {
    /// Runs the conformance check `name` on stores in scratch databases of the
    /// server (or cluster) `base` names, dropped afterwards, each store's
    /// configuration first given to `adjust`. A check the store's
    /// capabilities rule out is cancelled: reported as skipped, never as passed.
    static func runCheck(_ name: String, on base: MariaDBConfiguration,
                         adjusting adjust: @escaping @Sendable (inout Store.Configuration) -> Void = { _ in }) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        let databases = MariaDBScratchDatabases(base: base)
        do {
            try await check.run { configuration in
                var configuration = configuration
                adjust(&configuration)
                return try await databases.makeStore(configuration)
            }
        } catch let skipped as ConformanceSkipped {
            await databases.dropAll()
            print("⊘ skipped by capability: \(name): the store declares no \(skipped.capability)")
            try Test.cancel("skipped: the store declares no \(skipped.capability)")
        } catch {
            await databases.dropAll()
            throw error
        }
        await databases.dropAll()
    }
}

import Depot
import DepotConformance
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// The whole conformance suite, unmodified, one test per check, against a real server.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresConformance {
    @Test("PostgreSQL", arguments: ConformanceSuite.checks.map(\.name))
    func postgres(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            try await PostgresTestServer.freshStore(configuration)
        }
    }
}

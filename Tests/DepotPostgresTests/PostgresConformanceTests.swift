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

    /// The same checks with `@Columns` types read and written through Codable:
    /// the generated mapping must mean exactly what Codable means.
    @Test("PostgreSQL through Codable", arguments: ConformanceSuite.checks.map(\.name))
    func postgresThroughCodable(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            var configuration = configuration
            configuration.usesGeneratedMapping = false
            return try await PostgresTestServer.freshStore(configuration)
        }
    }
}

import Depot
import DepotConformance
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// The whole conformance suite, unmodified, one test per check, against a real server.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresConformance {
    @Test("PostgreSQL", arguments: ConformanceSuite.names(alone: false))
    func postgres(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            try await PostgresTestServer.freshStore(configuration)
        }
    }

    /// The checks that measure the process's memory, run by `scripts/test` after the rest, alone.
    @Test("PostgreSQL, with the process alone", arguments: ConformanceSuite.names(alone: true))
    func postgresProcessAlone(_ name: String) async throws { try await postgres(name) }

    @Test("PostgreSQL through Codable, with the process alone", arguments: ConformanceSuite.names(alone: true))
    func postgresThroughCodableProcessAlone(_ name: String) async throws { try await postgresThroughCodable(name) }

    /// The same checks with `@Columns` types read and written through Codable:
    /// the generated mapping must mean exactly what Codable means.
    @Test("PostgreSQL through Codable", arguments: ConformanceSuite.names(alone: false))
    func postgresThroughCodable(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            var configuration = configuration
            configuration.usesGeneratedMapping = false
            return try await PostgresTestServer.freshStore(configuration)
        }
    }
}

/// The checks of queries again with every statement planned once for any
/// parameter values (PostgreSQL's generic plan, which it may choose for a
/// statement run often): a planner that folds a NULL parameter and one that
/// computes beside it must give the same answers.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresGenericPlanConformance {
    static let names = ConformanceSuite.names(alone: false).filter { $0.hasPrefix("query:") || $0.hasPrefix("search:") }

    @Test("PostgreSQL, every statement on a generic plan", arguments: names)
    func genericPlans(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            try await PostgresTestServer.freshStore(configuration) { server in
                server.parameters["options"] = "-c plan_cache_mode=force_generic_plan"
            }
        }
    }

    @Test func theStoresPlanGenerically() async throws {
        let store = try await PostgresTestServer.freshStore { $0.parameters["options"] = "-c plan_cache_mode=force_generic_plan" }
        let mode = try await store.read { db in try db.fetchOne(String.self, "SELECT current_setting('plan_cache_mode')") }
        await store.close()
        #expect(mode == "force_generic_plan")
        #expect(Self.names.count > 50)
    }
}

/// The whole suite again through PgBouncer in transaction mode, and with every
/// read on a hot standby (each store reading its own writes there): the answers
/// must be the primary's.
@Suite(.serialized, .enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named (run scripts/test)"))
struct ScaleOutConformance {
    @Test("PostgreSQL through PgBouncer, with the process alone", arguments: ConformanceSuite.names(alone: true))
    func throughPgBouncerProcessAlone(_ name: String) async throws { try await throughPgBouncer(name) }

    @Test("PostgreSQL, reads on a hot standby, with the process alone", arguments: ConformanceSuite.names(alone: true))
    func readsOnAStandbyProcessAlone(_ name: String) async throws { try await readsOnAStandby(name) }

    @Test("PostgreSQL through PgBouncer in transaction mode", arguments: ConformanceSuite.names(alone: false))
    func throughPgBouncer(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        let url = try ScaleOutServers.require(ScaleOutServers.pgbouncerURL, "DEPOT_PGBOUNCER_URL")
        try await check.run { configuration in
            try await ScaleOutServers.freshStore(url: url, configuration)
        }
    }

    @Test("PostgreSQL, reads on a hot standby", arguments: ConformanceSuite.names(alone: false))
    func readsOnAStandby(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        let url = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        // The reads really run on the standby: shown by a store of its own, since the
        // check's stores may carry settings (a 0.3 s access timeout) that are the check's business.
        let probe = try await ScaleOutServers.freshStore(url: url)
        let onStandby = try await probe.read { db in try db.fetchOne(Bool.self, "SELECT pg_is_in_recovery()") }
        await probe.close()
        #expect(onStandby == true, "a read of a store with a standby ran on the primary")
        try await check.run { configuration in
            var configuration = configuration
            configuration.readYourWritesTimeout = .seconds(10)
            let store = try await ScaleOutServers.freshStore(url: url, configuration)
            guard store.hasReplicas else { throw DatabaseError(.other, "a store over a primary and a standby has no replicas") }
            return store
        }
    }
}

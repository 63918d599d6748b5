import Depot
import DepotPostgres
import DepotTesting
import Foundation

/// The servers `scripts/test` starts beside the test server for the scale-out
/// tests (scripts/lib/replication.sh): standbys, PgBouncer and a failover pair.
/// In CI a missing one fails its tests, never skips them.
public enum ScaleOutServers {
    static let environment = ProcessInfo.processInfo.environment

    /// The primary and a streaming hot standby.
    public static let standbyURL = environment["DEPOT_POSTGRES_STANDBY_URL"]
    /// The primary and a standby that applies each commit 1.5 s after it.
    public static let laggingStandbyURL = environment["DEPOT_POSTGRES_LAGGING_STANDBY_URL"]
    /// PgBouncer in transaction mode before the primary (`pgbouncer=true&listener=...`).
    public static let pgbouncerURL = environment["DEPOT_PGBOUNCER_URL"]
    /// A primary of its own and its synchronous standby, for the failover test alone.
    public static let failoverURL = environment["DEPOT_FAILOVER_URL"]
    /// That standby on its own, to promote it.
    public static let failoverStandbyURL = environment["DEPOT_FAILOVER_STANDBY_URL"]
    /// The failover pair's primary postmaster, to kill it.
    public static let failoverPrimaryPID = environment["DEPOT_FAILOVER_PRIMARY_PID"].flatMap { Int32($0) }

    /// A pg_auto_failover formation (scripts/lib/autofailover.sh): its
    /// primary's and secondary's ports in one URL, the monitor deciding which
    /// is which.
    public static let autoFailoverURL = environment["DEPOT_AUTOFAILOVER_URL"]
    /// The formation's folder: each node's `kill` (the whole node, as a
    /// machine dies) and `start` scripts.
    public static let autoFailoverFolder = environment["DEPOT_AUTOFAILOVER_DIR"]

    /// Whether the scale-out tests run: always in CI, elsewhere when the servers are named.
    public static let shouldRun = standbyURL != nil || PostgresTestServer.isCI

    /// The URL in the variable, or an error that says what starts it.
    public static func require(_ url: String?, _ name: String) throws -> String {
        guard let url, !url.isEmpty else {
            throw DatabaseError(.connection, "\(name) is not set: scripts/test starts the scale-out servers (scripts/lib/replication.sh)")
        }
        return url
    }

    /// A store on a new, empty schema made through the store itself, so that
    /// its replica reads can wait for it like any of its writes.
    public static func freshStore(url: String, _ storeConfiguration: Store.Configuration = Store.Configuration(),
                                  tweak: (inout PostgresConfiguration) -> Void = { _ in }) async throws -> Store {
        var configuration = try PostgresConfiguration(url: url)
        let schema = "depot_test_" + UUID().uuidString.prefix(8).lowercased()
        configuration.searchPath = schema
        configuration.store = storeConfiguration
        tweak(&configuration)
        let store = try await Store.postgres(configuration)
        try await store.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        return store
    }
}

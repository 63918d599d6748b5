import Depot
import DepotPostgres
import DepotTesting
import Foundation


/// The PostgreSQL server the tests use: `DEPOT_POSTGRES_URL`, or the
/// `POSTGRES_HOST`, `POSTGRES_PORT`, `POSTGRES_USER`, `POSTGRES_PASSWORD` and
/// `POSTGRES_DB` fields (as docker-compose.yml sets them). `scripts/test` starts
/// a throwaway server and sets `DEPOT_POSTGRES_URL` when neither is given.
public enum PostgresTestServer {
    /// The process's environment, read once.
    public static let environment = ProcessInfo.processInfo.environment

    /// In CI a missing server must fail the tests, never skip them.
    public static let isCI = environment["CI"] == "true"

    /// The server named by the environment; a malformed `DEPOT_POSTGRES_URL` is
    /// the error that says what is wrong, never "no server" (which would skip the tests).
    public static let named: Result<PostgresConfiguration, DatabaseError>? = {
        if let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty {
            return Result { try PostgresConfiguration(url: url) }.mapError { $0 as? DatabaseError ?? DatabaseError(.misuse, "\($0)") }
        }
        guard let host = environment["POSTGRES_HOST"], !host.isEmpty else { return nil }
        return .success(PostgresConfiguration(
            host: host, port: Int(environment["POSTGRES_PORT"] ?? "") ?? 5432,
            user: environment["POSTGRES_USER"] ?? "depot", password: environment["POSTGRES_PASSWORD"],
            database: environment["POSTGRES_DB"] ?? "depot"))
    }()

    /// The server named by the environment, when its name is well formed.
    public static var configuration: PostgresConfiguration? { try? named?.get() }

    /// The server as a URL, password included, for tools that take one.
    public static var url: String? {
        if let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty { return url }
        guard let configuration else { return nil }
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = configuration.user
        components.password = configuration.password
        components.host = configuration.host
        components.port = configuration.port
        components.path = "/" + configuration.database
        return components.string
    }

    /// Whether the PostgreSQL tests run: always in CI (where a missing server fails them),
    /// elsewhere when a server is named.
    public static let shouldRun = named != nil || isCI

    /// The named server, or a `connection` error saying how to name one.
    public static func requireConfiguration() throws -> PostgresConfiguration {
        if let named { return try named.get() }
        guard let configuration else {
            throw DatabaseError(.connection, "no PostgreSQL server for the tests: set DEPOT_POSTGRES_URL or POSTGRES_HOST (scripts/test starts one)")
        }
        return configuration
    }

    /// A store on a new, empty schema of the test server.
    public static func freshStore(_ storeConfiguration: Store.Configuration = Store.Configuration(), tweak: (inout PostgresConfiguration) -> Void = { _ in }) async throws -> Store {
        try await freshSchemaStore(on: try requireConfiguration(), storeConfiguration, tweak: tweak)
    }

    /// A store on a new schema of `server`, made through a store of its own.
    static func freshSchemaStore(on server: PostgresConfiguration, _ storeConfiguration: Store.Configuration,
                                 tweak: (inout PostgresConfiguration) -> Void) async throws -> Store {
        var configuration = server
        let schema = "depot_test_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await Store.postgres(configuration)
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        await admin.close()
        configuration.searchPath = schema
        configuration.store = storeConfiguration
        tweak(&configuration)
        return try await Store.postgres(configuration)
    }
}

extension TestStore {
    /// A store on a new, empty schema, migrated: of the server the environment
    /// names (`DEPOT_POSTGRES_URL`, or the `POSTGRES_*` fields), else of a
    /// ``ThrowawayPostgres`` started once for the process (unless `CI=true`,
    /// where a missing server is an error, never a server of the test's own).
    public static func postgres(migrator: Migrator? = nil, configuration: Store.Configuration = Store.Configuration(),
                                fixtures: (@Sendable (Database) throws -> Void)? = nil,
                                tweak: (inout PostgresConfiguration) -> Void = { _ in }) async throws -> Store {
        let server = try PostgresTestServer.configuration ?? {
            if PostgresTestServer.isCI { return try PostgresTestServer.requireConfiguration() }
            return try PostgresConfiguration(url: try SharedThrowaway.server().url)
        }()
        let store = try await PostgresTestServer.freshSchemaStore(on: server, configuration, tweak: tweak)
        try await prepare(store, migrator, fixtures)
        return store
    }
}

/// The throwaway server ``TestStore/postgres(migrator:configuration:fixtures:tweak:)`` starts once per process.
enum SharedThrowaway {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: ThrowawayPostgres?

    static func server() throws -> ThrowawayPostgres {
        try lock.withLock {
            if let started { return started }
            let server = try ThrowawayPostgres.start()
            started = server
            return server
        }
    }
}

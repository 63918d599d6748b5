import Depot
import DepotLifecycle
import DepotMariaDB
import DepotPostgres
import DepotSQLite
import Foundation
import Hummingbird
import Logging
import Reminders
import ServiceLifecycle

extension RemindersRoutes {
    /// The store a location names: a `postgres://` or `mariadb://` URL, or else an SQLite file
    /// path (its folder must exist; the file is created). An SQLite file that
    /// exists must be a reminders database: one that holds another program's
    /// tables, or nothing, is refused before it is opened for writing (looked
    /// into read-only, and left byte for byte as it was).
    ///
    /// A request waits at most 2 seconds for a connection, and a server that
    /// is down is not waited for: while the database is unreachable requests
    /// answer 503 at once instead of hanging.
    public static func store(_ location: String, logger: Logger) async throws -> Store {
        if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
            return try await store(postgres: try PostgresConfiguration(url: location), logger: logger)
        }
        if location.hasPrefix("mariadb://") {
            return try await store(mariadb: try MariaDBConfiguration(url: location), logger: logger)
        }
        guard !location.isEmpty else { throw StartupError("the database location is empty; give a file path, a postgres:// or a mariadb:// URL") }
        let folder = URL(fileURLWithPath: location).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw StartupError("there is no folder \(folder) for the database \(location)")
        }
        if FileManager.default.fileExists(atPath: location) {
            var looking = SQLiteConfiguration()
            looking.isReadOnly = true
            let glance = try Store.sqlite(at: location, looking)
            let contents: RemindersSchema.Contents
            do {
                contents = try await RemindersSchema.contents(of: glance)
            } catch {
                await glance.close()
                throw error
            }
            await glance.close()
            try refuseOther(contents, location)
            if contents == .empty {
                // An empty file someone made (touch, another program) is not the server's to fill.
                throw StartupError("\(location) holds no tables: the server starts a database only where there is no file; name a new path, or remove the empty file")
            }
        }
        var configuration = SQLiteConfiguration()
        configuration.store.logger = logger
        configuration.store.checkoutTimeout = .seconds(2)
        return try Store.sqlite(at: location, configuration)
    }

    /// Refuses a database that holds tables of something else: not the server's to change.
    static func refuseOther(_ contents: RemindersSchema.Contents, _ location: String) throws {
        if case .other(let tables) = contents {
            throw StartupError("\(redacted(location)) is not a reminders database (it holds \(tables.joined(separator: ", "))\(tables.count == 3 ? ", …" : "")); name another with --database")
        }
    }

    /// A PostgreSQL store with the server's settings: a request waits at most
    /// 2 seconds for a connection, a connection attempt at most 2 seconds (unless
    /// `connect_timeout` is given), and a server that is down is not waited for.
    public static func store(postgres configuration: PostgresConfiguration, logger: Logger) async throws -> Store {
        var configuration = configuration
        configuration.store.logger = logger
        configuration.store.waitsForServer = false
        configuration.store.checkoutTimeout = .seconds(2)
        if configuration.parameters["connect_timeout"] == nil { configuration.parameters["connect_timeout"] = "2" }
        return try await Store.postgres(configuration)
    }

    /// A MariaDB store with the server's settings: a request waits at most 2
    /// seconds for a connection.
    public static func store(mariadb configuration: MariaDBConfiguration, logger: Logger) async throws -> Store {
        var configuration = configuration
        configuration.store.logger = logger
        configuration.store.checkoutTimeout = .seconds(2)
        return try await Store.mariadb(configuration)
    }

    /// The application: the routes, and the store as a service shut down after
    /// the HTTP server (so requests in flight finish first). Runs the model's
    /// migrations first: a database that cannot be migrated never serves.
    ///
    /// - Parameters:
    ///   - sync: serve DepotSync (`/sync/...`) with accounts instead of the
    ///     model's routes, which answer 404 then (they would show every
    ///     account's rows). The store becomes a sync server, on SQLite,
    ///     PostgreSQL or MariaDB, and the server's own tables are created
    ///     (`syncAccounts`, `syncDevices`; history in `remindersServerMigrations`).
    ///   - keepDeletes: with `sync`, how long the sync log remembers a
    ///     deleted row (the longest a device may stay offline and still sync
    ///     without starting over); the log is compacted at start and daily.
    ///     Nil: never compacted.
    ///   - onServerRunning: called once the server listens, with its port
    ///     (the one picked when `port` is 0).
    public static func application(store: Store, host: String = "127.0.0.1", port: Int = 8080, logger: Logger, sync: Bool = false,
                                   keepDeletes: Duration? = .seconds(30 * 86_400),
                                   onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) async throws -> some ApplicationProtocol {
        let model = RemindersModel(store: store)
        // A PostgreSQL schema (or an SQLite file opened elsewhere) of another program's tables is refused too.
        try refuseOther(try await RemindersSchema.contents(of: store), "the database")
        try await model.migrate()
        var services: [any Service] = [StoreService(store)]
        let router: Router<BasicRequestContext>
        if sync {
            let endpoints = try await SyncEndpoints.prepare(model)
            router = syncRouter(model, endpoints)
            if let keepDeletes {
                // After the store: a group stops its services in reverse, so compaction stops first.
                services.append(SyncCompactionService(server: endpoints.server, keep: keepDeletes, period: .seconds(86_400), logger: logger))
            }
        } else {
            router = self.router(model)
        }
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "RemindersServer"),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// A location to print: a URL's password replaced (the library's redacted form).
    public static func redacted(_ location: String) -> String {
        PostgresConfiguration.redact(location)
    }

    /// One line for a failure at startup, without SQL or a password.
    public static func startupMessage(_ error: any Error, location: String) -> String {
        let message: String
        switch error {
        case let error as StartupError: message = error.message
        case let error as DatabaseError: message = "cannot use the database at \(redacted(location)): \(error.message)"
        case let error as RemindersError: message = error.description
        default: message = "\(error)"
        }
        return message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}

/// A reason the server cannot start, in one line.
public struct StartupError: Error, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// A reason.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

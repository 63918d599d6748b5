import CLibPQ
import Depot
import Foundation

extension Store {
    /// Connects to a PostgreSQL server.
    ///
    /// ```swift
    /// let store = try await Store.postgres(PostgresConfiguration(url: "postgres://app:secret@localhost/reminders"))
    /// ```
    ///
    /// One connection is opened now, so an unreachable server or a wrong
    /// password fails here; the pool then opens up to
    /// ``PostgresConfiguration/maxConnections`` as accesses need them. Each
    /// connection runs its libpq calls on its own thread.
    ///
    /// With ``Store/Configuration/waitsForServer`` set, nothing is opened now:
    /// a server that boots after the app is fine, and accesses wait for it up
    /// to the checkout timeout.
    ///
    /// - Throws: a `connection` ``DatabaseError`` naming the server (never the password).
    public static func postgres(_ configuration: PostgresConfiguration) async throws -> Store {
        let driver = PostgresDriver(configuration: configuration)
        if configuration.store.waitsForServer {
            return Store(driver: driver, configuration: configuration.store)
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async {
                do {
                    try driver.openConnection(.writer).close()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        return Store(driver: driver, configuration: configuration.store)
    }

    /// Connects to the PostgreSQL server a `postgres://` URL names.
    public static func postgres(url: String) async throws -> Store {
        try await postgres(PostgresConfiguration(url: url))
    }

    /// The version of the libpq Depot runs on, such as 150018 for 15.18.
    public static var libpqVersion: Int { Int(PQlibVersion()) }
}

/// Opens libpq connections for a store.
struct PostgresDriver: DatabaseDriver {
    let configuration: PostgresConfiguration

    var dialect: any SQLDialect { PostgresDialect(batchInsertRows: configuration.batchInsertRows) }

    var poolLayout: PoolLayout { .shared(max: configuration.maxConnections) }

    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection {
        try PostgresConnection(configuration: configuration)
    }
}

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
        try await Store.connecting(PostgresDriver(configuration: configuration), configuration: configuration.store)
    }

    /// Connects to the PostgreSQL server a `postgres://` URL names.
    public static func postgres(url: String) async throws -> Store {
        try await postgres(PostgresConfiguration(url: url))
    }

    /// The version of the libpq Depot runs on, such as 150018 for 15.18.
    public static var libpqVersion: Int { Int(PQlibVersion()) }
}

/// Opens libpq connections for a store.
///
/// With several hosts, writers look for the primary (`read-write`) and readers
/// for a standby (`prefer-standby`, the primary when none answers); each new
/// reader starts from the next host, so reads spread over the standbys.
struct PostgresDriver: DatabaseDriver {
    let configuration: PostgresConfiguration
    private let readerRotation = RotationCounter()

    init(configuration: PostgresConfiguration) {
        self.configuration = configuration
    }

    var dialect: any SQLDialect { PostgresDialect(batchInsertRows: configuration.batchInsertRows) }

    var poolLayout: PoolLayout {
        configuration.isReplicated
            ? .primaryAndReplicas(primary: configuration.maxConnections, replicas: configuration.maxReplicaConnections)
            : .shared(max: configuration.maxConnections)
    }

    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection {
        guard configuration.isReplicated else { return try PostgresConnection(configuration: configuration) }
        switch role {
        case .writer:
            return try PostgresConnection(configuration: configuration, target: "read-write")
        case .reader:
            let hosts = configuration.hosts
            let start = readerRotation.next() % hosts.count
            let rotated = Array(hosts[start...] + hosts[..<start])
            let connection = try PostgresConnection(configuration: configuration, hosts: rotated, target: "prefer-standby")
            connection.standbyRetryInterval = configuration.standbyRetryInterval
            return connection
        }
    }
}

/// A counter shared by copies of the driver.
final class RotationCounter: @unchecked Sendable {
    // Unchecked: `value` is read and written under `lock`.
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.withLock {
            defer { value &+= 1 }
            return value & Int.max
        }
    }
}

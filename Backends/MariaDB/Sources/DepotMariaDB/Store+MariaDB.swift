import CMariaDB
import Depot
import Foundation

extension Store {
    /// Connects to a MariaDB server (10.11 or later).
    ///
    /// ```swift
    /// let store = try await Store.mariadb(MariaDBConfiguration(url: "mariadb://app:secret@localhost/reminders"))
    /// ```
    ///
    /// One connection is opened now, so an unreachable server or a wrong
    /// password fails here; the pool then opens up to
    /// ``MariaDBConfiguration/maxConnections`` as accesses need them.
    /// Create the database with `CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`:
    /// text columns take its collation.
    ///
    /// - Throws: a `connection` ``DatabaseError`` naming the server (never the password).
    public static func mariadb(_ configuration: MariaDBConfiguration) async throws -> Store {
        var driver = MariaDBDriver(configuration: configuration)
        guard !configuration.store.waitsForServer else {
            // Nothing opens now: a configuration of several nodes is taken for a Galera cluster's.
            driver.consecutiveGeneratedKeys = configuration.nodes.count < 2
            return Store(driver: driver, configuration: configuration.store)
        }
        // The server checked now, on a thread of its own (connecting blocks),
        // and asked how it hands out generated keys.
        let probe = driver
        driver.consecutiveGeneratedKeys = try await OffPool.value("depot.mariadb.probe") {
            let connection = try MariaDBConnection(configuration: probe.configuration, cursor: probe.cursor)
            defer { connection.close() }
            return try MariaDBConnection.showValue(connection.mysql, "SHOW SESSION VARIABLES LIKE 'auto_increment_increment'") == "1"
        }
        return Store(driver: driver, configuration: configuration.store)
    }

    /// Connects to the MariaDB server a `mariadb://` URL names.
    public static func mariadb(url: String) async throws -> Store {
        try await mariadb(MariaDBConfiguration(url: url))
    }

    /// The version of Connector/C Depot runs on, such as `3.3.8`.
    public static var mariadbClientVersion: String { String(cString: mysql_get_client_info()) }
}

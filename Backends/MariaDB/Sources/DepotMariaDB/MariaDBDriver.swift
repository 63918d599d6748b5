import Depot

/// Opens Connector/C connections for a store: a shared pool, each connection
/// serving reads and writes.
struct MariaDBDriver: DatabaseDriver {
    let configuration: MariaDBConfiguration
    /// Where the next connection starts among the configuration's nodes.
    let cursor = MariaDBNodeCursor()

    /// Whether the server hands out generated keys one apart (not on Galera), as found when the store was made.
    var consecutiveGeneratedKeys = true

    var dialect: any SQLDialect {
        MariaDBDialect(batchInsertRows: configuration.batchInsertRows, consecutiveGeneratedKeys: consecutiveGeneratedKeys)
    }

    var poolLayout: PoolLayout { .shared(max: configuration.maxConnections) }

    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection {
        try MariaDBConnection(configuration: configuration, cursor: cursor)
    }
}

import Depot

/// Opens Connector/C connections for a store: a shared pool, each connection
/// serving reads and writes.
struct MariaDBDriver: DatabaseDriver {
    let configuration: MariaDBConfiguration

    var dialect: any SQLDialect { MariaDBDialect(batchInsertRows: configuration.batchInsertRows) }

    var poolLayout: PoolLayout { .shared(max: configuration.maxConnections) }

    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection {
        try MariaDBConnection(configuration: configuration)
    }
}

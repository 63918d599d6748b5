import CMariaDB
import Depot
import Foundation

/// Which node of a configuration the next connection tries first: the one
/// the last connection reached (``MariaDBConfiguration/NodeOrder/failover``)
/// or the one after the last connection's
/// (``MariaDBConfiguration/NodeOrder/roundRobin``). One per store, shared by
/// its connections and its listener.
final class MariaDBNodeCursor: @unchecked Sendable {
    // Unchecked: `next` is read and written under `lock`.
    private let lock = NSLock()
    private var next = 0

    /// The index to start at, for a list of `count` nodes.
    func start(_ order: MariaDBConfiguration.NodeOrder, count: Int) -> Int {
        lock.withLock {
            let start = count == 0 ? 0 : next % count
            if order == .roundRobin { next = start + 1 }
            return start
        }
    }

    /// The node a connection reached; a failover store starts there next time.
    func reached(_ index: Int, _ order: MariaDBConfiguration.NodeOrder) {
        guard order == .failover else { return }
        lock.withLock { next = index }
    }
}

/// A session opened on one node, and what the node is.
struct MariaDBSession {
    let mysql: UnsafeMutablePointer<MYSQL>
    let node: MariaDBConfiguration.Node
    /// Whether the node is a Galera cluster's (`wsrep_on`): its writes
    /// replicate to every node, and `GET_LOCK` is not supported there.
    let isGalera: Bool
}

extension MariaDBConnection {
    /// Opens a session on the first node, in the configuration's order, that
    /// answers and is ready: a Galera node outside the cluster's primary
    /// component (`wsrep_ready` `OFF`: it lost its peers, or is still joining)
    /// refuses every query, and is passed over.
    ///
    /// - Throws: the one node's error; for several, a `connection` error naming
    ///   each node and why it was passed over (`authentication` when every
    ///   node refused the credentials).
    static func connect(_ configuration: MariaDBConfiguration, cursor: MariaDBNodeCursor) throws -> MariaDBSession {
        let nodes = configuration.nodes
        guard !nodes.isEmpty else {
            throw DatabaseError(.connection, "the MariaDB configuration names no node to connect to")
        }
        let start = cursor.start(configuration.nodeOrder, count: nodes.count)
        var failures: [(MariaDBConfiguration.Node, DatabaseError)] = []
        for offset in 0..<nodes.count {
            let index = (start + offset) % nodes.count
            let node = nodes[index]
            do {
                let mysql = try connect(configuration, node: node)
                do {
                    let isGalera = try showValue(mysql, "SHOW GLOBAL VARIABLES LIKE 'wsrep_on'") == "ON"
                    if isGalera, try showValue(mysql, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'") != "ON" {
                        throw DatabaseError(.connection, "the Galera node \(node) is not ready (wsrep_ready is OFF: it is not in the cluster's primary component)",
                                            engineCode: "wsrep_ready")
                    }
                    cursor.reached(index, configuration.nodeOrder)
                    return MariaDBSession(mysql: mysql, node: node, isGalera: isGalera)
                } catch {
                    mysql_close(mysql)
                    throw error
                }
            } catch let error as DatabaseError {
                failures.append((node, error))
            }
        }
        if failures.count == 1, let (_, error) = failures.first { throw error }
        let kind: DatabaseError.Kind = failures.allSatisfy { $0.1.kind == .authentication } ? .authentication : .connection
        let reasons = failures.map { node, error in "\(node): \(error.message)" }.joined(separator: "; ")
        throw DatabaseError(kind, "no MariaDB node of \(nodes.count) could be used (\(reasons))")
    }

    /// Opens one connection to one node: UTF-8 (utf8mb4) text, no LOCAL
    /// INFILE, no reconnect, UPDATE counting matched rows
    /// (`CLIENT_FOUND_ROWS`), scripts of several statements (`CLIENT_MULTI_STATEMENTS`).
    static func connect(_ configuration: MariaDBConfiguration, node: MariaDBConfiguration.Node) throws -> UnsafeMutablePointer<MYSQL> {
        guard let mysql = mysql_init(nil) else { throw MariaDBError.cannotConnect(nil, configuration, node: node) }
        var off: my_bool = 0
        var noInfile: UInt32 = 0
        var connectTimeout: UInt32 = 10
        var maxPacket: UInt = 1 << 30
        mysql_options(mysql, MYSQL_OPT_RECONNECT, &off)
        mysql_options(mysql, MYSQL_OPT_LOCAL_INFILE, &noInfile)
        mysql_options(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &connectTimeout)
        mysql_options(mysql, MYSQL_OPT_MAX_ALLOWED_PACKET, &maxPacket)
        mysql_options(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        let flags = UInt(CLIENT_FOUND_ROWS) | (1 << 16) // CLIENT_MULTI_STATEMENTS
        guard (1...65535).contains(node.port) else {
            mysql_close(mysql)
            throw DatabaseError(.connection, "the port of MariaDB node \(node.host) is not a number from 1 to 65535: \(node.port)")
        }
        let connected = mysql_real_connect(mysql, node.host, configuration.user, configuration.password,
                                           configuration.database, UInt32(node.port), nil, flags)
        guard connected != nil else {
            let error = MariaDBError.cannotConnect(mysql, configuration, node: node)
            mysql_close(mysql)
            throw error
        }
        return mysql
    }

    /// The `Value` column of a `SHOW … LIKE` that matches one row; nil for none.
    /// `SHOW` runs on a Galera node that refuses every other query.
    static func showValue(_ mysql: UnsafeMutablePointer<MYSQL>, _ query: String) throws -> String? {
        if query.withCString({ mysql_real_query(mysql, $0, UInt(strlen($0))) }) != 0 {
            throw MariaDBError.make(mysql, sql: query, showsValues: false)
        }
        guard let result = mysql_store_result(mysql) else {
            throw MariaDBError.make(mysql, sql: query, showsValues: false)
        }
        defer { mysql_free_result(result) }
        guard mysql_num_fields(result) >= 2, let row = mysql_fetch_row(result), let value = row[1] else { return nil }
        return String(cString: value)
    }
}

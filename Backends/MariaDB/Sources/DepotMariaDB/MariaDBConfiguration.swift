import Depot
import Foundation

/// Where and how to connect to a MariaDB server.
///
/// ```swift
/// let configuration = try MariaDBConfiguration(url: "mariadb://app:secret@db.example.com:3306/reminders")
/// let store = try await Store.mariadb(configuration)
/// ```
///
/// The password goes to Connector/C as its own argument and never appears in
/// ``description``, in logs or in error messages.
public struct MariaDBConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// One server of a cluster: a host name or address and a port.
    public struct Node: Sendable, Hashable, CustomStringConvertible {
        /// The server's host name or address.
        public var host: String
        /// The server's port. Default: 3306.
        public var port: Int

        /// A node from its host and port.
        public init(host: String, port: Int = 3306) {
            self.host = host
            self.port = port
        }

        /// `host:port`, with an IPv6 address in brackets.
        public var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }
    }

    /// Which node a new connection tries first, when the configuration names several.
    public enum NodeOrder: String, Sendable, CaseIterable {
        /// The node the last connection reached, then the next ones in order:
        /// every connection goes to one node, and moves on when it goes away
        /// or leaves the cluster. The default.
        case failover
        /// Each new connection starts at the node after the last one's, so a
        /// store's connections spread over every node of a multi-primary
        /// cluster (Galera), and move on past a node that is away.
        case roundRobin = "round-robin"
    }

    /// The servers to connect to, tried in ``nodeOrder``: one, or the nodes of
    /// a Galera cluster. A node that does not answer, or that answers but is
    /// not part of the cluster's primary component (`wsrep_ready` is `OFF`),
    /// is passed over for the next.
    public var nodes: [Node]
    /// Which node each new connection tries first. Default: ``NodeOrder/failover``.
    public var nodeOrder: NodeOrder
    /// The first node's host name or address.
    public var host: String {
        get { nodes.first?.host ?? "localhost" }
        set { if nodes.isEmpty { nodes = [Node(host: newValue)] } else { nodes[0].host = newValue } }
    }
    /// The first node's port. Default: 3306.
    public var port: Int {
        get { nodes.first?.port ?? 3306 }
        set { if nodes.isEmpty { nodes = [Node(host: "localhost", port: newValue)] } else { nodes[0].port = newValue } }
    }
    /// The user to connect as.
    public var user: String
    /// The user's password; nil for none.
    public var password: String?
    /// The database.
    public var database: String
    /// The most connections the store opens. Default: 10.
    public var maxConnections: Int
    /// How many rows one INSERT of a batch insert holds. Default: 500.
    public var batchInsertRows: Int
    /// How long a statement waits for a row or metadata lock before failing
    /// with a `busy` error (`innodb_lock_wait_timeout`, `lock_wait_timeout`),
    /// in whole seconds. Default: 50, the server's own for rows.
    public var lockWaitTimeout: Int
    /// On a Galera cluster, how long a migration lock row holds once its
    /// holder stops renewing it. Default: 60 seconds.
    ///
    /// Galera has no lock a cluster shares, so a migrator's lock there is a
    /// row, renewed every quarter of this while its migration runs, however
    /// long that takes. A migrator whose process died renews nothing: the
    /// next one takes its row once the lease has run out. Ignored off Galera,
    /// where the lock is the session's own and ends with it.
    ///
    /// - Note: On Galera, migrating with a lease under 1 second fails with a `misuse` error.
    public var migrationLockLease: Duration
    /// The settings every store has: coders, error verbosity, checkout timeout.
    public var store: Store.Configuration

    /// A configuration from its parts, for one server.
    public init(host: String = "localhost", port: Int = 3306, user: String, password: String? = nil, database: String) {
        self.init(nodes: [Node(host: host, port: port)], user: user, password: password, database: database)
    }

    /// A configuration for the nodes of a cluster, such as a Galera cluster's.
    ///
    /// ```swift
    /// var configuration = MariaDBConfiguration(nodes: [Node(host: "db1"), Node(host: "db2"), Node(host: "db3")],
    ///                                          user: "app", password: secret, database: "reminders")
    /// configuration.store.writeRetry = WriteRetry()   // certification conflicts, retried
    /// ```
    public init(nodes: [Node], user: String, password: String? = nil, database: String) {
        self.nodes = nodes
        self.nodeOrder = .failover
        self.user = user
        self.password = password
        self.database = database
        self.maxConnections = 10
        self.batchInsertRows = 500
        self.lockWaitTimeout = 50
        self.migrationLockLease = .seconds(60)
        self.store = Store.Configuration()
    }

    /// A configuration from a `mariadb://user:password@host:port/database` URL
    /// (`mysql://` is accepted too). Percent-encoded characters in the user
    /// and password are decoded.
    ///
    /// A cluster's nodes go where the host goes, separated by commas, each
    /// with its own port or 3306; `nodes=round-robin` in the query spreads
    /// connections over them (``NodeOrder``):
    ///
    /// ```
    /// mariadb://app:secret@db1:3306,db2:3306,db3:3306/reminders?nodes=round-robin
    /// ```
    ///
    /// - Throws: a `connection` `DatabaseError` that says what is wrong with the
    ///   URL, and never repeats the password.
    public init(url: String) throws {
        // The nodes, cut out of the authority: URLComponents takes one host.
        let (single, nodeList) = Self.splittingNodes(url)
        guard let components = URLComponents(string: single),
              let scheme = components.scheme?.lowercased(), scheme == "mariadb" || scheme == "mysql" else {
            throw DatabaseError(.connection, "not a MariaDB URL: expected mariadb://user:password@host:port/database (got \(Self.redact(url)))")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw DatabaseError(.connection, "the MariaDB URL names no user: \(Self.redact(url))")
        }
        let path = String(components.path.drop { $0 == "/" })
        guard !path.isEmpty else {
            throw DatabaseError(.connection, "the MariaDB URL names no database: \(Self.redact(url))")
        }
        var nodes: [Node] = []
        for text in nodeList ?? [] {
            nodes.append(try Self.node(text, in: url))
        }
        if nodeList == nil {
            if let port = components.port, !(1...65535).contains(port) {
                throw DatabaseError(.connection, "the port is not a number from 1 to 65535 in the MariaDB URL: \(Self.redact(url))")
            }
            nodes = [Node(host: components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost", port: components.port ?? 3306)]
        }
        self.init(nodes: nodes, user: user,
                  password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
                  database: path.removingPercentEncoding ?? path)
        for item in components.queryItems ?? [] {
            switch item.name {
            case "nodes":
                guard let order = item.value.flatMap(NodeOrder.init(rawValue:)) else {
                    throw DatabaseError(.connection, "nodes= takes failover or round-robin in the MariaDB URL: \(Self.redact(url))")
                }
                nodeOrder = order
            default:
                throw DatabaseError(.connection, "unknown parameter \(item.name) in the MariaDB URL: \(Self.redact(url))")
            }
        }
    }

    /// The URL with only its first node, and every node's text when it names
    /// more than one (nil when it names one).
    static func splittingNodes(_ url: String) -> (String, [String]?) {
        guard let schemeEnd = url.range(of: "://") else { return (url, nil) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hosts = authority[hostStart...]
        guard hosts.contains(",") else { return (url, nil) }
        let list = hosts.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let single = String(url[..<hostStart]) + (list.first ?? "") + String(url[authorityEnd...])
        return (single, list)
    }

    /// One node of a URL's list: `host`, `host:port`, `[v6]` or `[v6]:port`.
    static func node(_ text: String, in url: String) throws -> Node {
        var host = Substring(text), port = 3306
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                guard let number = Int(after.dropFirst()), (1...65535).contains(number) else {
                    throw DatabaseError(.connection, "the port is not a number from 1 to 65535 in the MariaDB URL: \(redact(url))")
                }
                port = number
            } else if !after.isEmpty {
                throw DatabaseError(.connection, "a node of the MariaDB URL is not host:port: \(redact(url))")
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.firstIndex(of: ":") {
            guard let number = Int(host[host.index(after: colon)...]), (1...65535).contains(number) else {
                throw DatabaseError(.connection, "the port is not a number from 1 to 65535 in the MariaDB URL: \(redact(url))")
            }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty else {
            throw DatabaseError(.connection, "a node of the MariaDB URL names no host: \(redact(url))")
        }
        return Node(host: String(host), port: port)
    }

    /// Whether a string looks like a MariaDB URL.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("mariadb://") || text.hasPrefix("mysql://")
    }

    /// `mariadb://user:***@host:port/database`: the password is never shown.
    public var description: String {
        "mariadb://\(user)\(password == nil ? "" : ":***")@\(nodes.map(\.description).joined(separator: ","))/\(database)"
            + (nodeOrder == .failover ? "" : "?nodes=\(nodeOrder.rawValue)")
    }

    /// The same text as ``description``.
    public var debugDescription: String { description }

    /// The configuration's parts for `dump` and debuggers, with the password as `***`.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "nodes": nodes.map(\.description), "nodeOrder": nodeOrder.rawValue, "user": user, "password": password.map { _ in "***" } as Any,
            "database": database, "maxConnections": maxConnections, "batchInsertRows": batchInsertRows,
            "lockWaitTimeout": lockWaitTimeout, "store": store,
        ], displayStyle: .struct)
    }

    /// A URL with its password replaced by `***` (``DatabaseURL/redacted(_:)``:
    /// the user's password and a `password=` parameter), found by its place in
    /// the text, so that a URL too broken to parse is redacted as well.
    public static func redact(_ url: String) -> String {
        DatabaseURL.redacted(url)
    }

    /// The same configuration for another database on the server.
    public func with(database: String) -> MariaDBConfiguration {
        var copy = self
        copy.database = database
        return copy
    }
}

import Depot
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where and how to connect to a PostgreSQL server.
///
/// ```swift
/// let configuration = try PostgresConfiguration(url: "postgres://app:secret@db.example.com:5432/reminders?sslmode=require")
/// let store = try await Store.postgres(configuration)
/// ```
///
/// The password is handed to libpq as its own parameter and never appears in
/// ``description``, in logs or in error messages.
public struct PostgresConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// One server's address.
    public struct Host: Sendable, Hashable, CustomStringConvertible {
        /// A host name or address, or a folder holding the server's Unix socket.
        public var host: String
        /// The server's port.
        public var port: Int

        /// An address from its parts.
        public init(_ host: String, port: Int = 5432) {
            self.host = host
            self.port = port
        }

        /// `host:port`, with an IPv6 address in brackets.
        public var description: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    }

    /// The servers, in the order they are tried: one server, or a primary and
    /// its hot standbys in any order. With more than one, the store finds the
    /// primary for writes (libpq's `target_session_attrs=read-write`) and sends
    /// reads to a standby (`prefer-standby`; the primary when none is
    /// reachable), and after a failover it finds the new primary by itself.
    public var hosts: [Host]
    /// The first server's host name or address, or a folder holding its Unix socket.
    public var host: String {
        get { hosts.first?.host ?? "localhost" }
        set { if hosts.isEmpty { hosts = [Host(newValue)] } else { hosts[0].host = newValue } }
    }
    /// The first server's port.
    public var port: Int {
        get { hosts.first?.port ?? 5432 }
        set { if hosts.isEmpty { hosts = [Host("localhost", port: newValue)] } else { hosts[0].port = newValue } }
    }
    /// The role to connect as.
    public var user: String
    /// The role's password; nil for trust or peer authentication.
    public var password: String?
    /// Gives the password for each new connection, in place of ``password``:
    /// for credentials that rotate (a secret manager's, a cloud IAM token).
    ///
    /// ```swift
    /// configuration.passwordProvider = { try vault.currentPassword(for: "app") }
    /// configuration.connectionLifetime = .seconds(600)   // also renew open connections
    /// ```
    ///
    /// It is called on the thread that opens the connection (never Swift's
    /// cooperative pool), so it may block briefly; keep the secret cached and
    /// refreshed elsewhere. When the server refuses a password it gave, it is
    /// called once more at once, so a rotation that lands between the two
    /// calls costs nobody an error. An error it throws fails the connection
    /// as a `connection` error. Open connections keep the session they
    /// authenticated (PostgreSQL checks a password only at login); set
    /// ``connectionLifetime`` to renew them too.
    public var passwordProvider: (@Sendable () throws -> String)?
    /// How long a connection serves before the pool closes it (when it is next
    /// idle) and opens another: nil, the default, keeps connections open.
    /// For credentials that expire, and for load balancers that must see new sessions.
    public var connectionLifetime: Duration?
    /// The database.
    public var database: String
    /// The schema search path to set on every connection, such as `"app"`; nil keeps the server's.
    public var searchPath: String?
    /// Further libpq connection parameters, by their libpq names (`sslmode`,
    /// `connect_timeout`, `application_name`...). libpq refuses unknown names.
    public var parameters: [String: String]
    /// The most connections the store opens (to the primary, when there are
    /// several hosts). Default: 10.
    public var maxConnections: Int
    /// With several hosts, the most reader connections the store opens to the
    /// standbys. Default: 10.
    public var maxReplicaConnections: Int
    /// With several hosts: how long a reader connection that found no standby
    /// (and fell back to the primary) serves reads before the store looks for a
    /// standby again. Default: 30 seconds.
    public var standbyRetryInterval: Duration
    /// Whether the store reaches the server through a pooler in transaction
    /// mode, such as PgBouncer's `pool_mode = transaction`, where each
    /// transaction may run on another server connection. Depot then prepares
    /// no named statements (each statement is parsed with its execution, in the
    /// same message), and sets its session settings (the UTC time zone, the
    /// search path) at the start of every transaction instead of once per
    /// connection. The URL says it with `pgbouncer=true`.
    ///
    /// Caveat: LISTEN cannot work through such a pooler; observations need
    /// ``listenerHosts``.
    public var transactionPooling: Bool
    /// Where the store's LISTEN connection for observations goes, when it must
    /// not go through ``hosts`` (a pooler in transaction mode): the server
    /// itself, or its primary and standbys. Nil: the store's hosts. The URL says
    /// it with `listener=host:port[,host:port...]`.
    public var listenerHosts: [Host]?
    /// How often the server checks, while a statement of this store runs, that
    /// the store's process is still there (PostgreSQL 14's
    /// `client_connection_check_interval`). A process that is killed while its
    /// write waits on a lock would otherwise leave its backend waiting in the
    /// lock queue, holding its place, until the lock frees; with the check it
    /// ends within about this interval. Default: 5 seconds; nil leaves the
    /// server's setting (off, unless the server sets it). The URL says it with
    /// `client_connection_check_interval=2s` (`ms`, `s` or `min`; `0` or `off`
    /// for nil).
    ///
    /// Caveat: a server before PostgreSQL 14 has no such check; there the
    /// setting is not sent. The listener's connection does not get it: the
    /// check runs only while a statement runs, and the listener's backend
    /// waits idle between notifications.
    public var clientConnectionCheckInterval: Duration?
    /// How many rows one INSERT of a batch insert holds. Default: 500.
    public var batchInsertRows: Int
    /// The settings every store has: coders, error verbosity, checkout timeout.
    public var store: Store.Configuration

    /// A configuration from its parts.
    public init(host: String = "localhost", port: Int = 5432, user: String, password: String? = nil,
                database: String, searchPath: String? = nil, parameters: [String: String] = [:]) {
        self.init(hosts: [Host(host, port: port)], user: user, password: password, database: database,
                  searchPath: searchPath, parameters: parameters)
    }

    /// A configuration over several servers: a primary and its standbys, in any order.
    ///
    /// ```swift
    /// let configuration = PostgresConfiguration(hosts: [.init("db1"), .init("db2")], user: "app", database: "app")
    /// ```
    public init(hosts: [Host], user: String, password: String? = nil,
                database: String, searchPath: String? = nil, parameters: [String: String] = [:]) {
        self.hosts = hosts.isEmpty ? [Host("localhost")] : hosts
        self.user = user
        self.password = password
        self.database = database
        self.searchPath = searchPath
        self.parameters = parameters
        self.maxConnections = 10
        self.maxReplicaConnections = 10
        self.standbyRetryInterval = .seconds(30)
        self.transactionPooling = false
        self.listenerHosts = nil
        self.batchInsertRows = 500
        self.clientConnectionCheckInterval = .seconds(5)
        self.store = Store.Configuration()
        self.passwordProvider = nil
        self.connectionLifetime = nil
    }

    /// The user a URL without one connects as, as libpq chooses it: `PGUSER`,
    /// else the operating system's name for the process's user.
    static var defaultUser: String? {
        if let user = ProcessInfo.processInfo.environment["PGUSER"], !user.isEmpty { return user }
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
        let user = String(cString: name)
        return user.isEmpty ? nil : user
    }

    /// A configuration from a `postgres://user:password@host:port/database?parameter=value` URL.
    ///
    /// Without a user (`postgres://localhost/app`) it connects as libpq would:
    /// as `PGUSER`, else as the operating system's user running the process.
    ///
    /// Query parameters are libpq connection parameters (`sslmode=require`...). Percent-encoded
    /// characters in the user and password are decoded. Several servers are
    /// listed as libpq lists them, `postgres://app@db1:5432,db2:5432/app`; four
    /// parameters are Depot's own: `search_path`, `pgbouncer=true`
    /// (``transactionPooling``), `listener=host:port` (``listenerHosts``) and
    /// `client_connection_check_interval=5s` (``clientConnectionCheckInterval``).
    ///
    /// - Throws: a `connection` `DatabaseError` that says what is wrong with the URL
    ///   (and never repeats the password).
    public init(url: String) throws {
        let (singleHostURL, hostList) = try Self.splitHosts(url)
        guard let components = URLComponents(string: singleHostURL),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw DatabaseError(.connection, "not a PostgreSQL URL: expected postgres://user:password@host:port/database (got \(Self.redact(url)))")
        }
        // No user in the URL: as libpq, PGUSER, else the operating system's name for this process's user.
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }).flatMap({ $0.isEmpty ? nil : $0 })
                ?? Self.defaultUser else {
            throw DatabaseError(.connection, "the PostgreSQL URL names no user, and neither PGUSER nor the system names one: \(Self.redact(url))")
        }
        let database = String(components.path.drop { $0 == "/" })
        var parameters: [String: String] = [:]
        var searchPath: String?
        var transactionPooling = false
        var listenerHosts: [Host]?
        var checkInterval: Duration?? = nil
        for item in components.queryItems ?? [] {
            switch item.name {
            case "search_path":
                searchPath = item.value
            case "pgbouncer", "transaction_pooling":
                switch item.value?.lowercased() {
                case "true", "1", "yes", "on", "": transactionPooling = true
                case "false", "0", "no", "off": transactionPooling = false
                default:
                    throw DatabaseError(.connection, "\(item.name) must be true or false in the PostgreSQL URL: \(Self.redact(url))")
                }
            case "listener":
                listenerHosts = try Self.parseHosts(item.value ?? "", in: url)
            case "client_connection_check_interval":
                guard let interval = Self.parseInterval(item.value ?? "") else {
                    throw DatabaseError(.connection, "client_connection_check_interval must be a whole number of ms, s or min (or off) in the PostgreSQL URL: \(Self.redact(url))")
                }
                checkInterval = .some(interval)
            default:
                parameters[item.name] = item.value ?? ""
            }
        }
        self.init(hosts: hostList ?? [Host(components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost", port: components.port ?? 5432)],
                  user: user,
                  password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
                  database: database.isEmpty ? user : (database.removingPercentEncoding ?? database),
                  searchPath: searchPath,
                  parameters: parameters)
        self.transactionPooling = transactionPooling
        self.listenerHosts = listenerHosts
        if let checkInterval { self.clientConnectionCheckInterval = checkInterval }
    }

    /// `250ms`, `5s`, `1min`, or a number of milliseconds, as PostgreSQL writes
    /// the setting: `.some(nil)` for `0` or `off`; nil for anything else.
    static func parseInterval(_ text: String) -> Duration?? {
        let lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
        if lowered == "off" { return .some(nil) }
        let digits = lowered.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, let number = Int64(digits) else { return nil }
        let duration: Duration
        switch lowered.dropFirst(digits.count) {
        case "", "ms": duration = .milliseconds(number)
        case "s": duration = .seconds(number)
        case "min":
            guard number <= Int64.max / 60 else { return nil }
            duration = .seconds(number * 60)
        default: return nil
        }
        return .some(number == 0 ? nil : duration)
    }

    /// The setting's text for `SET`: whole milliseconds, at least 1; nil when
    /// the interval does not fit PostgreSQL's (a positive 32-bit number of ms).
    static func checkIntervalSetting(_ interval: Duration) -> String? {
        let (seconds, attoseconds) = interval.components
        guard seconds >= 0, seconds < Int64(Int32.max) / 1000 + 1 else { return nil }
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        guard milliseconds >= 1, milliseconds <= Int64(Int32.max) else { return nil }
        return "\(milliseconds)ms"
    }

    /// A URL that lists several hosts (`@db1:5432,db2:5433/`), rewritten with
    /// one placeholder host so that `URLComponents` reads the rest, and the
    /// hosts it listed; the URL unchanged and nil when it lists one.
    static func splitHosts(_ url: String) throws -> (String, [Host]?) {
        guard let schemeEnd = url.range(of: "://") else { return (url, nil) }
        let rest = url[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hostSpec = authority[hostStart...]
        guard hostSpec.contains(",") else { return (url, nil) }
        let hosts = try parseHosts(String(hostSpec), in: url)
        return (String(url[..<hostStart]) + "depot-hosts" + String(url[authorityEnd...]), hosts)
    }

    /// `host[:port],[v6]:port,...` as libpq lists hosts.
    static func parseHosts(_ list: String, in url: String) throws -> [Host] {
        try list.split(separator: ",", omittingEmptySubsequences: false).map { item in
            var name = Substring(item)
            var port = 5432
            if name.hasPrefix("[") {
                guard let close = name.firstIndex(of: "]") else {
                    throw DatabaseError(.connection, "an IPv6 address lacks its closing bracket in the PostgreSQL URL: \(redact(url))")
                }
                let after = name[name.index(after: close)...]
                name = name[name.index(after: name.startIndex)..<close]
                if !after.isEmpty {
                    guard after.hasPrefix(":"), let number = Int(after.dropFirst()), (1...65535).contains(number) else {
                        throw DatabaseError(.connection, "a host's port is not a number from 1 to 65535 in the PostgreSQL URL: \(redact(url))")
                    }
                    port = number
                }
            } else if let colon = name.lastIndex(of: ":") {
                guard let number = Int(name[name.index(after: colon)...]), (1...65535).contains(number) else {
                    throw DatabaseError(.connection, "a host's port is not a number from 1 to 65535 in the PostgreSQL URL: \(redact(url))")
                }
                port = number
                name = name[..<colon]
            }
            let host = String(name).removingPercentEncoding ?? String(name)
            return Host(host.isEmpty ? "localhost" : host, port: port)
        }
    }

    /// Whether a string looks like a PostgreSQL URL rather than a file path.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// `postgres://user:***@host:port/database`: the password is never shown.
    public var description: String {
        "postgres://\(user)\(password == nil ? "" : ":***")@\(hosts.map(\.description).joined(separator: ","))/\(database)"
            + (transactionPooling ? "?pgbouncer=true" : "")
    }

    /// The same text as ``description``.
    public var debugDescription: String { description }

    /// The configuration's parts for `dump` and debuggers, with the password as `***`.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "hosts": hosts.map(\.description), "user": user, "password": password.map { _ in "***" } as Any,
            "passwordProvider": passwordProvider.map { _ in "a provider" } as Any, "connectionLifetime": connectionLifetime as Any,
            "database": database, "searchPath": searchPath as Any,
            "parameters": parameters.mapValues { _ in "…" }, "maxConnections": maxConnections,
            "maxReplicaConnections": maxReplicaConnections, "transactionPooling": transactionPooling,
            "listenerHosts": listenerHosts.map { $0.map(\.description) } as Any,
            "batchInsertRows": batchInsertRows, "clientConnectionCheckInterval": clientConnectionCheckInterval as Any, "store": store,
        ], displayStyle: .struct)
    }

    /// A URL with its password replaced by `***`, found by its place in the text
    /// (after the user's `:` and before the last `@`), so that a URL too broken to
    /// parse is redacted as well. Show a database URL only through this.
    ///
    /// ```swift
    /// PostgresConfiguration.redact("postgres://app:s3cret@db/app")  // "postgres://app:***@db/app"
    /// ```
    public static func redact(_ url: String) -> String {
        DatabaseURL.redacted(url)
    }

    /// Whether the store has several servers to choose from: a primary and standbys.
    var isReplicated: Bool { hosts.count > 1 }

    /// The keyword/value pairs libpq's PQconnectdbParams takes, for a new
    /// connection to these hosts, in this order, and the kind of server libpq
    /// must find among them (`read-write`, `prefer-standby`). Calls the
    /// ``passwordProvider``, whose error is a `connection` error.
    func connectionParameters(hosts: [Host], target: String? = nil) throws -> [(String, String)] {
        var pairs: [(String, String)] = [("host", hosts.map(\.host).joined(separator: ",")),
                                         ("port", hosts.map { String($0.port) }.joined(separator: ",")),
                                         ("user", user), ("dbname", database),
                                         ("client_encoding", "UTF8"), ("application_name", "depot")]
        if let passwordProvider {
            do {
                pairs.append(("password", try passwordProvider()))
            } catch {
                throw DatabaseError(.connection, "the password provider failed for \(user)@\(hosts.map(\.description).joined(separator: ",")): \(error)",
                                    engineCode: "cannot connect")
            }
        } else if let password {
            pairs.append(("password", password))
        }
        if parameters["connect_timeout"] == nil { pairs.append(("connect_timeout", "10")) }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) {
            pairs.removeAll { $0.0 == name }
            pairs.append((name, value))
        }
        if let target {
            pairs.removeAll { $0.0 == "target_session_attrs" }
            pairs.append(("target_session_attrs", target))
        }
        return pairs
    }
}

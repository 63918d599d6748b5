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
    /// The server's host name or address.
    public var host: String
    /// The server's port. Default: 3306.
    public var port: Int
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
    /// The settings every store has: coders, error verbosity, checkout timeout.
    public var store: Store.Configuration

    /// A configuration from its parts.
    public init(host: String = "localhost", port: Int = 3306, user: String, password: String? = nil, database: String) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.maxConnections = 10
        self.batchInsertRows = 500
        self.lockWaitTimeout = 50
        self.store = Store.Configuration()
    }

    /// A configuration from a `mariadb://user:password@host:port/database` URL
    /// (`mysql://` is accepted too). Percent-encoded characters in the user
    /// and password are decoded.
    ///
    /// - Throws: a `connection` `DatabaseError` that says what is wrong with the
    ///   URL, and never repeats the password.
    public init(url: String) throws {
        guard let components = URLComponents(string: url),
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
        if let port = components.port, !(1...65535).contains(port) {
            throw DatabaseError(.connection, "the port is not a number from 1 to 65535 in the MariaDB URL: \(Self.redact(url))")
        }
        self.init(host: components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost",
                  port: components.port ?? 3306, user: user,
                  password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
                  database: path.removingPercentEncoding ?? path)
    }

    /// Whether a string looks like a MariaDB URL.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("mariadb://") || text.hasPrefix("mysql://")
    }

    /// `mariadb://user:***@host:port/database`: the password is never shown.
    public var description: String {
        "mariadb://\(user)\(password == nil ? "" : ":***")@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }

    /// The same text as ``description``.
    public var debugDescription: String { description }

    /// The configuration's parts for `dump` and debuggers, with the password as `***`.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "user": user, "password": password.map { _ in "***" } as Any,
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

import Depot
import Foundation

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
    /// The server's host name or address, or a folder holding its Unix socket.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var user: String
    /// The role's password; nil for trust or peer authentication.
    public var password: String?
    /// The database.
    public var database: String
    /// The schema search path to set on every connection, such as `"app"`; nil keeps the server's.
    public var searchPath: String?
    /// Further libpq connection parameters, by their libpq names (`sslmode`,
    /// `connect_timeout`, `application_name`...). libpq refuses unknown names.
    public var parameters: [String: String]
    /// The most connections the store opens. Default: 10.
    public var maxConnections: Int
    /// How many rows one INSERT of a batch insert holds. Default: 500.
    public var batchInsertRows: Int
    /// The settings every store has: coders, error verbosity, checkout timeout.
    public var store: Store.Configuration

    /// A configuration from its parts.
    public init(host: String = "localhost", port: Int = 5432, user: String, password: String? = nil,
                database: String, searchPath: String? = nil, parameters: [String: String] = [:]) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.searchPath = searchPath
        self.parameters = parameters
        self.maxConnections = 10
        self.batchInsertRows = 500
        self.store = Store.Configuration()
    }

    /// A configuration from a `postgres://user:password@host:port/database?parameter=value` URL.
    ///
    /// Query parameters are libpq connection parameters (`sslmode=require`...). Percent-encoded
    /// characters in the user and password are decoded.
    ///
    /// - Throws: a `connection` ``DatabaseError`` that says what is wrong with the URL
    ///   (and never repeats the password).
    public init(url: String) throws {
        guard let components = URLComponents(string: url),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw DatabaseError(.connection, "not a PostgreSQL URL: expected postgres://user:password@host:port/database (got \(Self.redact(url)))")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw DatabaseError(.connection, "the PostgreSQL URL names no user: \(Self.redact(url))")
        }
        let database = String(components.path.drop { $0 == "/" })
        var parameters: [String: String] = [:]
        var searchPath: String?
        for item in components.queryItems ?? [] {
            if item.name == "search_path" { searchPath = item.value } else { parameters[item.name] = item.value ?? "" }
        }
        self.init(host: components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "localhost",
                  port: components.port ?? 5432,
                  user: user,
                  password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
                  database: database.isEmpty ? user : (database.removingPercentEncoding ?? database),
                  searchPath: searchPath,
                  parameters: parameters)
    }

    /// Whether a string looks like a PostgreSQL URL rather than a file path.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// `postgres://user:***@host:port/database`: the password is never shown.
    public var description: String {
        "postgres://\(user)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)"
    }

    /// The same text as ``description``.
    public var debugDescription: String { description }

    /// The configuration's parts for `dump` and debuggers, with the password as `***`.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "host": host, "port": port, "user": user, "password": password.map { _ in "***" } as Any,
            "database": database, "searchPath": searchPath as Any,
            "parameters": parameters.mapValues { _ in "…" }, "maxConnections": maxConnections,
            "batchInsertRows": batchInsertRows, "store": store,
        ], displayStyle: .struct)
    }

    /// A URL with its password replaced by `***`, found by its place in the text
    /// (after the user's `:` and before the last `@`), so that a URL too broken to
    /// parse is redacted as well.
    static func redact(_ url: String) -> String {
        var text = url
        let authorityStart = text.range(of: "://")?.upperBound ?? text.startIndex
        if let at = text[authorityStart...].lastIndex(of: "@"),
           let colon = text[authorityStart..<at].firstIndex(of: ":") {
            text = text[..<colon] + ":***" + text[at...]
        }
        // A password given as a query parameter: `?password=...`.
        var searchStart = text.startIndex
        while let found = text.range(of: "password=", options: .caseInsensitive, range: searchStart..<text.endIndex) {
            let end = text[found.upperBound...].firstIndex(of: "&") ?? text.endIndex
            text.replaceSubrange(found.upperBound..<end, with: "***")
            searchStart = text.index(found.upperBound, offsetBy: 3)
        }
        return text
    }

    /// The keyword/value pairs libpq's PQconnectdbParams takes.
    var libpqParameters: [(String, String)] {
        var pairs: [(String, String)] = [("host", host), ("port", String(port)), ("user", user), ("dbname", database),
                                         ("client_encoding", "UTF8"), ("application_name", "depot")]
        if let password { pairs.append(("password", password)) }
        if parameters["connect_timeout"] == nil { pairs.append(("connect_timeout", "10")) }
        for (name, value) in parameters.sorted(by: { $0.key < $1.key }) {
            pairs.removeAll { $0.0 == name }
            pairs.append((name, value))
        }
        return pairs
    }
}

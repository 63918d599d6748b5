import Depot
import DepotPostgres
import Foundation

/// The database URLs `reminders` opens, by scheme: `postgres://` built in,
/// others registered by an executable that links their backend.
///
/// ```swift
/// import DepotMariaDB
/// import RemindersCLI
///
/// RemindersDatabases.register(scheme: "mariadb", open: { url in try await Store.mariadb(MariaDBConfiguration(url: url)) },
///                             redact: { url in (try? MariaDBConfiguration(url: url).description) ?? "mariadb://…" })
/// await RemindersCommand.start()
/// ```
///
/// Anything that is no registered URL is an SQLite file path.
public enum RemindersDatabases {
    /// Opens a store for a URL of the scheme.
    public typealias Open = @Sendable (String) async throws -> Store
    /// The URL as it may be shown: without its password.
    public typealias Redact = @Sendable (String) -> String

    private struct Backend {
        let open: Open
        let redact: Redact
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var backends: [String: Backend] = [
        "postgres": Backend(open: { try await Store.postgres(url: $0) }, redact: { PostgresConfiguration.redact($0) }),
        "postgresql": Backend(open: { try await Store.postgres(url: $0) }, redact: { PostgresConfiguration.redact($0) }),
    ]

    /// Makes `scheme://…` locations open with `open`, and show as `redact` writes them.
    /// Call it before ``RemindersCommand/start()``.
    public static func register(scheme: String, open: @escaping Open, redact: @escaping Redact) {
        lock.withLock { backends[scheme.lowercased()] = Backend(open: open, redact: redact) }
    }

    private static func backend(for location: String) -> Backend? {
        guard let colon = location.range(of: "://") else { return nil }
        let scheme = location[..<colon.lowerBound].lowercased()
        return lock.withLock { backends[scheme] }
    }

    /// Whether the location is the URL of a registered backend (else an SQLite path).
    static func isURL(_ location: String) -> Bool { backend(for: location) != nil }

    /// The location as it may be shown: a URL without its password.
    static func redacted(_ location: String) -> String { backend(for: location)?.redact(location) ?? location }

    /// A store for a registered URL; nil for an SQLite path.
    static func open(_ location: String) async throws -> Store? {
        guard let backend = backend(for: location) else { return nil }
        return try await backend.open(location)
    }
}

import Depot
import Foundation
import Hummingbird
import Logging

/// Slows password guessing: after `limit` wrong sign-ins for one account name
/// within `window`, that name's sign-ins answer 429 (with `Retry-After`)
/// until enough of those failures have left the window; a right password
/// then clears the count.
///
/// The failures are rows of the server's database (`syncSignInFailures`),
/// not of a process: every server instance on one database counts the same
/// failures (guesses sent to each of two instances behind a balancer are
/// throttled as through one), and a restart forgets none. Each wrong
/// password deletes the failures that left the window, so the table holds
/// one window's failures.
///
/// Caveat: the check and the count are two accesses, so guesses arriving at
/// the same moment may pass the limit by the number in flight (each still
/// costs its bcrypt check). This slows guessing; it does not replace a
/// strong password.
struct SignInThrottle: Sendable {
    let store: Store
    let limit: Int
    let window: TimeInterval
    private let now: @Sendable () -> Date

    init(store: Store, limit: Int = 5, window: TimeInterval = 15 * 60, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.limit = limit
        self.window = window
        self.now = now
    }

    /// The failures table, created by ``SyncAccounts/migrator``.
    static let migration = (name: "create syncSignInFailures", script: SQL("""
        CREATE TABLE "syncSignInFailures" (
            "id" \(keyType: .text) PRIMARY KEY NOT NULL,
            "name" \(keyType: .text) NOT NULL,
            "failedAt" \(type: .date) NOT NULL
        );
        CREATE INDEX "syncSignInFailures_name" ON "syncSignInFailures" ("name", "failedAt");
        CREATE INDEX "syncSignInFailures_failedAt" ON "syncSignInFailures" ("failedAt")
        """))

    /// Throws 429 while the name has `limit` failures within the window;
    /// otherwise returns how many it has (a right password then clears them).
    @discardableResult
    func check(_ name: String, logger: Logger) async throws -> Int {
        let moment = now()
        let since = moment.addingTimeInterval(-window)
        let failures = try await store.read(logger: logger) { db in
            try db.fetchAll(Date.self, """
                SELECT "failedAt" FROM "syncSignInFailures" WHERE "name" = \(name) AND "failedAt" > \(since) ORDER BY "failedAt"
                """)
        }
        guard failures.count >= limit else { return failures.count }
        // The count falls below the limit when this failure leaves the window.
        let freeing = failures[failures.count - limit]
        let wait = freeing.addingTimeInterval(window).timeIntervalSince(moment)
        let seconds = wait.isFinite ? max(1, Int(min(wait, window).rounded(.up))) : 1
        throw ServerError(status: .tooManyRequests, message: "too many wrong passwords for this name; try again in \(seconds) s",
                          cause: "sign-in throttled", headers: [.retryAfter: String(seconds)])
    }

    /// A wrong password (or an unknown name) for `name`; the failures that
    /// left the window, of every name, go.
    func fail(_ name: String, logger: Logger) async throws {
        let moment = now()
        let since = moment.addingTimeInterval(-window)
        let id = UUID().uuidString.lowercased()
        try await store.write(logger: logger) { db in
            try db.execute("DELETE FROM \"syncSignInFailures\" WHERE \"failedAt\" <= \(since)")
            try db.execute("INSERT INTO \"syncSignInFailures\" (\"id\", \"name\", \"failedAt\") VALUES (\(id), \(name), \(moment))")
        }
    }

    /// A right password: the name starts afresh.
    func succeed(_ name: String, logger: Logger) async throws {
        try await store.write(logger: logger) { db in
            try db.execute("DELETE FROM \"syncSignInFailures\" WHERE \"name\" = \(name)")
        }
    }

    /// How many failures the table holds, of every name (for tests).
    func storedFailures() async throws -> Int {
        try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"syncSignInFailures\"") ?? 0 }
    }
}

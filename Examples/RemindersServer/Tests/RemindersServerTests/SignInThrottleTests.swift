import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Hummingbird
import Logging
@testable import RemindersServerApp
import Testing

/// Password guessing is slowed: five wrong sign-ins for a name in 15 minutes,
/// and that name's sign-ins wait (429, Retry-After), the right password too;
/// other names are not held up; the window passing, or a right password, starts afresh.
@Suite struct SignInThrottleTests {
    @Test func fiveWrongPasswordsMakeTheNameWaitWithoutHoldingUpOthers() async throws {
        try await withSyncServer { client, _ in
            _ = try await client.signUp("alice")
            _ = try await client.signUp("bob")
            for _ in 0..<5 {
                let wrong = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "not her password"}"#)
                #expect(wrong.status == .unauthorized)
            }
            let held = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse battery"}"#)
            #expect(held.status == .tooManyRequests, "\(held.text)")
            #expect(held.error?.hasPrefix("too many wrong passwords for this name; try again in ") == true, "\(held.text)")
            #expect(held.headers[.retryAfter].flatMap(Int.init).map { $0 > 0 && $0 <= 900 } == true)
            _ = try await client.signIn("bob")
        }
    }

    /// Runs `body` with a store of the server's account tables on a fresh
    /// SQLite file, then closes the store and removes the file.
    private func withAccountsStore(_ body: (Store) async throws -> Void) async throws {
        let path = temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store.sqlite(at: path)
        do {
            try await SyncAccounts.migrator.migrate(store)
            try await body(store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    @Test func theWindowPassingOrARightPasswordStartsAfresh() async throws {
        final class Clock: @unchecked Sendable { var now = Date(timeIntervalSince1970: 1_800_000_000) }
        let clock = Clock()
        try await withAccountsStore { store in
            let throttle = SignInThrottle(store: store, limit: 3, window: 60, now: { clock.now })
            let log = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            for _ in 0..<3 { try await throttle.fail("alice", logger: log) }
            let held = await #expect(throws: ServerError.self) { try await throttle.check("alice", logger: log) }
            #expect(held?.headers[.retryAfter] == "60", "the oldest failure leaves the window in 60 s")
            clock.now += 61
            #expect(try await throttle.check("alice", logger: log) == 0)
            for _ in 0..<2 { try await throttle.fail("alice", logger: log) }
            try await throttle.succeed("alice", logger: log)
            try await throttle.fail("alice", logger: log)
            #expect(try await throttle.check("alice", logger: log) == 1)
        }
    }

    @Test func theTableHoldsOneWindowOfFailures() async throws {
        final class Clock: @unchecked Sendable { var now = Date(timeIntervalSince1970: 1_800_000_000) }
        let clock = Clock()
        try await withAccountsStore { store in
            let throttle = SignInThrottle(store: store, limit: 1, window: 10, now: { clock.now })
            let log = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
            for n in 0..<30 {
                clock.now += 1
                try await throttle.fail("name\(n)", logger: log)
            }
            // The failures of the last 10 seconds: those before went with each new one.
            #expect(try await throttle.storedFailures() == 10)
            #expect(try await throttle.check("name0", logger: log) == 0)
            await #expect(throws: ServerError.self) { try await throttle.check("name29", logger: log) }
        }
    }

    /// Two server instances on one database (two processes behind a balancer)
    /// count one name's wrong passwords together, and instances started again
    /// on it still hold the name.
    @Test func instancesOnOneDatabaseThrottleAsOneAndARestartKeepsTheCount() async throws {
        let path = temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let quiet = Logger(label: "store") { _ in SwiftLogNoOpLogHandler() }
        let first = try await RemindersRoutes.store(path, logger: quiet)
        try await withSyncServer(first) { one, _ in
            // The second instance opens the database the first made.
            let second = try await RemindersRoutes.store(path, logger: quiet)
            do {
                try await instancesThrottleAsOne(one, second)
            } catch {
                await second.close()
                throw error
            }
            await second.close()
        }
        await first.close()
        let restarted = try await RemindersRoutes.store(path, logger: quiet)
        try await withSyncServer(restarted) { client, _ in
            let held = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse battery"}"#)
            #expect(held.status == .tooManyRequests, "after a restart: \(held.text)")
        }
        await restarted.close()
    }

    /// Five wrong passwords for one name, sent to `one` and to an instance on
    /// `second` in turn: both then hold the name.
    private func instancesThrottleAsOne(_ one: Client, _ second: Store) async throws {
        try await withSyncServer(second) { other, _ in
            _ = try await one.signUp("alice")
            for attempt in 0..<5 {
                let wrong = try await (attempt.isMultiple(of: 2) ? one : other)
                    .send(.post, "/sync/sessions", #"{"name": "alice", "password": "not her password"}"#)
                #expect(wrong.status == .unauthorized, "attempt \(attempt): \(wrong.text)")
            }
            for instance in [one, other] {
                let held = try await instance.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse battery"}"#)
                #expect(held.status == .tooManyRequests, "five wrong passwords through two instances: \(held.text)")
            }
        }
    }

    /// The same on PostgreSQL: one instance served over HTTP, the other through
    /// the router, both on one schema; then an instance started again.
    @Test func instancesOnOnePostgreSQLDatabaseThrottleAsOne() async throws {
        final class Captured: @unchecked Sendable { var configuration: PostgresConfiguration? }
        let captured = Captured()
        try await withSyncServerOnPostgres(configure: { captured.configuration = $0 }) { server, _ in
            let configuration = try #require(captured.configuration)
            let quiet = Logger(label: "store") { _ in SwiftLogNoOpLogHandler() }
            let signUp = try await request("POST", server.appendingPathComponent("/sync/accounts"), json: ["name": "alice", "password": "correct horse battery"])
            #expect(signUp.status == 201)
            let second = try await RemindersRoutes.store(postgres: configuration, logger: quiet)
            try await withSyncServer(second) { other, _ in
                for attempt in 0..<5 {
                    let status: Int
                    if attempt.isMultiple(of: 2) {
                        status = try await request("POST", server.appendingPathComponent("/sync/sessions"), json: ["name": "alice", "password": "wrong"]).status
                    } else {
                        status = Int(try await other.send(.post, "/sync/sessions", #"{"name": "alice", "password": "wrong"}"#).status.code)
                    }
                    #expect(status == 401, "attempt \(attempt)")
                }
                let overHTTP = try await request("POST", server.appendingPathComponent("/sync/sessions"), json: ["name": "alice", "password": "correct horse battery"])
                #expect(overHTTP.status == 429)
                let throughRouter = try await other.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse battery"}"#)
                #expect(throughRouter.status == .tooManyRequests, "\(throughRouter.text)")
            }
            await second.close()
            let restarted = try await RemindersRoutes.store(postgres: configuration, logger: quiet)
            try await withSyncServer(restarted) { client, _ in
                let held = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse battery"}"#)
                #expect(held.status == .tooManyRequests, "after a restart: \(held.text)")
            }
            await restarted.close()
        }
    }
}

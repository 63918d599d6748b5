import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// A secret that rotates, as a secret manager holds it.
final class RotatingSecret: @unchecked Sendable {
    private let lock = NSLock()
    private var current: String
    private var handedOut: [String: Int] = [:]

    init(_ password: String) { current = password }

    func set(_ password: String) { lock.withLock { current = password } }

    /// The current password, counted.
    func next() -> String {
        lock.withLock {
            handedOut[current, default: 0] += 1
            return current
        }
    }

    func times(_ password: String) -> Int { lock.withLock { handedOut[password] ?? 0 } }
}

@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresCredentialTests {
    @Test func aPasswordRotatedWhileTwentyTasksRunFailsNoAccessOnceTheRotationIsDone() async throws {
        let admin = try await PostgresTestServer.freshStore()
        let role = "rotating_" + UUID().uuidString.prefix(8).lowercased()
        let (first, second) = ("first-" + UUID().uuidString, "second-" + UUID().uuidString)
        try await admin.write { db in
            try db.execute("CREATE ROLE \(ident: role) LOGIN PASSWORD \(unsafeRaw: "'" + first + "'")")
        }
        let secret = RotatingSecret(first)
        var configuration = try PostgresTestServer.requireConfiguration()
        configuration.user = role
        configuration.password = nil
        configuration.passwordProvider = { secret.next() }
        configuration.connectionLifetime = .milliseconds(100)
        configuration.maxConnections = 4
        // Twenty tasks share four connections that each reconnect after 100 ms: under the thread
        // sanitizer beside the rest of the suite, a task waited past the default 30 s for one (and
        // failed with a timeout, which this test would count as a failure after the rotation).
        // Waiting is not what it is about.
        configuration.store.checkoutTimeout = .seconds(600)
        let store = try await Store.postgres(configuration)

        let rotated = RotationClock()
        let counts = AccessCounts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    // On after the rotation for a second and 200 accesses (bounded: a loaded machine connects slowly).
                    let deadline = ContinuousClock.now + .seconds(600)
                    while !(rotated.isFinishedSince(.seconds(1)) && counts.figures.after >= 200), ContinuousClock.now < deadline {
                        let started = ContinuousClock.now
                        do {
                            _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
                            counts.succeeded(after: rotated.isDone(before: started))
                        } catch {
                            counts.failed(after: rotated.isDone(before: started), error)
                        }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            // The rotation: the server first, then the secret store.
            try await admin.write { db in
                try db.execute("ALTER ROLE \(ident: role) PASSWORD \(unsafeRaw: "'" + second + "'")")
            }
            secret.set(second)
            rotated.done()
            try await group.waitForAll()
        }
        let figures = counts.figures
        print("password rotation: \(figures.before) accesses before it was done (\(figures.failedBefore) failed), \(figures.after) after (\(figures.failedAfter) failed), the new password handed out \(secret.times(second)) times")
        #expect(figures.failedAfter == 0, "\(counts.errors)")
        #expect(figures.after >= 200, "accesses ran after the rotation")
        #expect(secret.times(second) > 3, "connections opened with the new password after the rotation")
        await store.close()
        try await admin.write { db in
            try db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \(role)")
        }
        await admin.close()
    }

    @Test func aProviderThatFailsIsAConnectionErrorThatNamesNoSecret() async throws {
        struct VaultDown: Error, CustomStringConvertible { var description: String { "the vault is sealed" } }
        var configuration = try PostgresTestServer.requireConfiguration()
        let password = configuration.password ?? ""
        configuration.passwordProvider = { throw VaultDown() }
        let error = await #expect(throws: DatabaseError.self) { _ = try await Store.postgres(configuration) }
        #expect(error?.kind == .connection)
        #expect("\(error.map { "\($0)" } ?? "")".contains("the vault is sealed"))
        #expect(!"\(error.map { "\($0)" } ?? "")".contains(password))
        #expect(!"\(configuration)".contains(password) && "\(configuration)".contains("***"))
    }
}

/// When the rotation finished.
final class RotationClock: @unchecked Sendable {
    private let lock = NSLock()
    private var finished: ContinuousClock.Instant?

    func done() { lock.withLock { finished = .now } }

    /// Whether the rotation had finished before `instant`.
    func isDone(before instant: ContinuousClock.Instant) -> Bool { lock.withLock { finished.map { $0 < instant } ?? false } }

    func isFinishedSince(_ duration: Duration) -> Bool { lock.withLock { finished.map { ContinuousClock.now - $0 > duration } ?? false } }
}

/// Accesses that succeeded and failed, before and after the rotation.
final class AccessCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var counts = (before: 0, failedBefore: 0, after: 0, failedAfter: 0)
    private(set) var errors: [String] = []

    func succeeded(after: Bool) { lock.withLock { if after { counts.after += 1 } else { counts.before += 1 } } }

    func failed(after: Bool, _ error: any Error) {
        lock.withLock {
            if after { counts.after += 1; counts.failedAfter += 1; errors.append("\(error)") } else { counts.before += 1; counts.failedBefore += 1 }
        }
    }

    var figures: (before: Int, failedBefore: Int, after: Int, failedAfter: Int) { lock.withLock { counts } }
}

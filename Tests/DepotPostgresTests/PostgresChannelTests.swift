import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Testing
import TestSupport

/// Events a listener delivered, collected by a task of their own.
final class ChannelRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [PostgresChannelEvent] = []
    private var finished = false

    /// Whether the sequence ended.
    var isFinished: Bool { lock.withLock { finished } }
    private var task: Task<Void, Never>?
    private let listener: PostgresChannelListener

    init(_ listener: PostgresChannelListener) {
        self.listener = listener
        task = Task { [self] in
            for await event in listener { lock.withLock { collected.append(event) } }
            lock.withLock { finished = true }
        }
    }

    var events: [PostgresChannelEvent] { lock.withLock { collected } }

    /// Stops the listener.
    func stop() { listener.stop() }

    var notifications: [PostgresNotification] {
        events.compactMap { if case .notification(let notification) = $0 { notification } else { nil } }
    }

    /// Waits until `condition` holds of the events (a bound on liveness, not a speed claim).
    func wait(_ what: String, within limit: Duration = .seconds(120), until condition: ([PostgresChannelEvent]) -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition(events) {
            guard ContinuousClock.now < deadline else { throw ObservationWait.TimedOut(description: "\(what): not within \(limit); got \(events)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresChannelTests {
    static func channel() -> String { "orders_" + UUID().uuidString.prefix(8).lowercased() }

    @Test func aNotificationArrivesWhenItsTransactionCommitsAndNeverWhenItRollsBack() async throws {
        let store = try await PostgresTestServer.freshStore()
        let channel = Self.channel()
        let listener = try await store.listen(to: channel, channel + "_other")
        let recorder = ChannelRecorder(listener)
        let sender = try await store.write { db in
            try db.notify(channel, payload: "order 1")
            try db.notify(channel + "_other")
            return try db.fetchOne(Int32.self, "SELECT pg_backend_pid()") ?? 0
        }
        try await recorder.wait("two notifications") { $0.count == 2 }
        #expect(recorder.notifications == [PostgresNotification(channel: channel, payload: "order 1", backendPID: sender),
                                           PostgresNotification(channel: channel + "_other", payload: "", backendPID: sender)])
        struct Abandoned: Error {}
        await #expect(throws: Abandoned.self) {
            try await store.write { db in
                try db.notify(channel, payload: "order 2")
                throw Abandoned()
            }
        }
        try await store.write { db in try db.notify(channel, payload: "order 3 ✓") }
        // The third is the fence: notifications arrive in commit order, so a
        // rolled-back one that was sent would have come before it.
        try await recorder.wait("the third order") { $0.count == 3 }
        #expect(recorder.notifications.map(\.payload) == ["order 1", "", "order 3 ✓"], "the rolled-back one never came")
        listener.stop()
        await store.close()
    }

    @Test func aListenerWhoseBackendIsKilledSaysItMayHaveMissedNotificationsAndHearsLaterOnes() async throws {
        let store = try await PostgresTestServer.freshStore()
        let channel = Self.channel()
        let listener = try await store.listen(to: channel)
        let recorder = ChannelRecorder(listener)
        try await store.write { db in try db.notify(channel, payload: "before") }
        try await recorder.wait("the first") { $0.count == 1 }
        let killed = try await store.write { db in
            try db.fetchOne(Int.self, """
                SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                 WHERE application_name = 'depot-listener' AND query = \("LISTEN \"\(channel)\"")
                """) ?? 0
        }
        #expect(killed == 1)
        try await recorder.wait("the reconnect") { $0.contains(.mayHaveMissedNotifications) }
        try await store.write { db in try db.notify(channel, payload: "after") }
        try await recorder.wait("the one after") { $0.count == 3 }
        #expect(recorder.events.last == .notification(recorder.notifications.last ?? PostgresNotification(channel: "", payload: "", backendPID: 0)))
        #expect(recorder.notifications.map(\.payload) == ["before", "after"])
        listener.stop()
        try await recorder.wait("the end of the sequence") { _ in recorder.isFinished }
        await store.close()
    }

    @Test func aListenerThatCannotConnectFailsWithTheErrorAndNoPassword() async throws {
        var configuration = try PostgresTestServer.requireConfiguration()
        let store = try await Store.postgres(configuration)
        configuration.password = "wrong-secret-\(UUID().uuidString.prefix(6))"
        configuration.store.waitsForServer = true
        let wrong = try await Store.postgres(configuration)
        let error = await #expect(throws: DatabaseError.self) { _ = try await wrong.listen(to: "anything") }
        #expect(error?.kind == .authentication)
        #expect(!"\(error.map { "\($0)" } ?? "")".contains(configuration.password ?? "-"), "no password in \(error.map { "\($0)" } ?? "")")
        await wrong.close()
        await store.close()
    }

    @Test func channelsAreAPostgreSQLFeature() async throws {
        let store = Store.sqliteInMemory()
        await #expect(throws: DatabaseError.self) { _ = try await store.listen(to: "orders") }
        let error = await #expect(throws: DatabaseError.self) { try await store.write { db in try db.notify("orders") } }
        #expect(error?.kind == .misuse)
        await store.close()
    }
}

@_spi(Driver) import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// Observation on PostgreSQL beyond the shared contract: another process, and
/// a listener that loses its connection.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresObservationTests {
    func counterStore(tweak: (inout PostgresConfiguration) -> Void = { _ in }) async throws -> (Store, schema: String) {
        let store = try await PostgresTestServer.freshStore(tweak: tweak)
        let schema = try await store.write { db in
            try db.execute("CREATE TABLE counters (id bigint PRIMARY KEY, value bigint NOT NULL)")
            try db.execute("INSERT INTO counters VALUES (1, 0)")
            try db.enableObservation(of: ["counters"])
            return try db.fetchOne(String.self, "SELECT current_schema()") ?? ""
        }
        return (store, schema)
    }

    func observeCounter(_ store: Store) -> Observation<Int>.Iterator {
        store.observe { db in try db.fetchOne(Int.self, "SELECT value FROM counters WHERE id = 1") ?? -1 }.makeAsyncIterator()
    }

    @Test func aCommitFromAnotherProcessIsSeen() async throws {
        let (store, schema) = try await counterStore()
        let values = observeCounter(store)
        #expect(try await ObservationWait.next(values) == 0)
        let url = try #require(PostgresTestServer.url)
        let child = try await ChildProcess.run("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-c",
                                                           "UPDATE \"\(schema)\".counters SET value = 5 WHERE id = 1"])
        #expect(child.status == 0, "psql: \(child.output)")
        #expect(try await ObservationWait.next(values, "after psql's commit") == 5)
        await store.close()
    }

    @Test func readingATableWithoutTheNotifyTriggerIsAnErrorThatSaysWhatToRun() async throws {
        let store = try await PostgresTestServer.freshStore()
        try await store.write { db in try db.execute("CREATE TABLE silent (id bigint PRIMARY KEY)") }
        let values = store.observe { db in try db.fetchOne(Int.self, "SELECT count(*) FROM silent") ?? 0 }.makeAsyncIterator()
        let error = await #expect(throws: DatabaseError.self) { try await ObservationWait.next(values) }
        #expect(error?.kind == .misuse)
        #expect(error?.message.contains("\"silent\" is read by an observation but was never made observable") == true, "\(String(describing: error))")
        #expect(error?.message.contains("db.enableObservation(of: [\"silent\"])") == true)
        #expect(store.liveObservationCount == 0)
        await store.close()
    }

    @Test func aListenerWhoseConnectionIsKilledReconnectsAndRefreshes() async throws {
        // Its own application name: the kill below must reach this store's listener
        // only, never the listeners of tests running beside it.
        let application = "depot-kill-" + UUID().uuidString.prefix(8).lowercased()
        let (store, _) = try await counterStore { $0.parameters["application_name"] = application }
        let values = observeCounter(store)
        #expect(try await ObservationWait.next(values) == 0)
        let admin = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        // Kill the listener, and commit while it is away: that notification is lost.
        let killed = try await admin.write { db in
            try db.fetchAll(Bool.self, """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name = \(application + "-listener") AND query LIKE 'LISTEN%'
                """)
        }
        #expect(killed == [true], "this store's listener, and no other")
        try await store.write { db in try db.execute("UPDATE counters SET value = 9 WHERE id = 1") }
        // Once listening again, every observation reads afresh.
        var seen: [Int] = []
        while seen.last != 9 {
            guard let value = try await ObservationWait.next(values, "a value after the listener came back") else { break }
            seen.append(value)
        }
        #expect(seen.last == 9)
        await admin.close()
        await store.close()
    }
}

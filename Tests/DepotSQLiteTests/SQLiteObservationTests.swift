import Depot
import DepotSQLite
import Foundation
import Testing
import TestSupport

/// Observation on SQLite beyond the shared contract: other processes, and
/// writes the update hook would miss.
@Suite struct SQLiteObservationTests {
    func counterStore() async throws -> (Store, String) {
        let path = try temporaryDatabasePath()
        let store = try Store.sqlite(at: path)
        try await store.write { db in
            try db.execute("CREATE TABLE counters (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)")
            try db.execute("INSERT INTO counters VALUES (1, 0)")
            try db.enableObservation(of: ["counters"])
        }
        return (store, path)
    }

    func observeCounter(_ store: Store) -> Observation<Int>.Iterator {
        store.observe { db in try db.fetchOne(Int.self, "SELECT value FROM counters WHERE id = 1") ?? -1 }.makeAsyncIterator()
    }

    @Test func aCommitFromAnotherProcessIsSeen() async throws {
        let (store, path) = try await counterStore()
        let values = observeCounter(store)
        #expect(try await ObservationWait.next(values) == 0)
        let child = try await ChildProcess.run("/usr/bin/sqlite3", [path, "UPDATE counters SET value = 5 WHERE id = 1"])
        #expect(child.status == 0, "sqlite3: \(child.output)")
        #expect(try await ObservationWait.next(values, "after the other process's commit") == 5)
        await store.close()
    }

    @Test func writesByTriggersCascadesAndBareDeletesAreSeen() async throws {
        let (store, _) = try await counterStore()
        try await store.write { db in
            try db.execute("CREATE TABLE parents (id INTEGER PRIMARY KEY)")
            try db.execute("CREATE TABLE children (id INTEGER PRIMARY KEY, parentID INTEGER REFERENCES parents(id) ON DELETE CASCADE)")
            try db.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, note TEXT) WITHOUT ROWID")
            try db.execute("CREATE TRIGGER bump AFTER INSERT ON parents BEGIN INSERT INTO log VALUES (NEW.id, 'parent'); END")
            try db.execute("INSERT INTO parents VALUES (1)")
            try db.execute("INSERT INTO children VALUES (1, 1), (2, 1)")
            try db.enableObservation(of: ["children", "log"])
        }
        let children = store.observe { db in try db.fetchOne(Int.self, "SELECT count(*) FROM children") ?? -1 }.makeAsyncIterator()
        let log = store.observe { db in try db.fetchOne(Int.self, "SELECT count(*) FROM log") ?? -1 }.makeAsyncIterator()
        #expect(try await ObservationWait.next(children) == 2)
        #expect(try await ObservationWait.next(log) == 1)
        // A trigger's insert into a WITHOUT ROWID table.
        try await store.write { db in try db.execute("INSERT INTO parents VALUES (2)") }
        #expect(try await ObservationWait.next(log, "the trigger's write") == 2)
        // A foreign-key cascade.
        try await store.write { db in try db.execute("DELETE FROM parents WHERE id = 1") }
        #expect(try await ObservationWait.next(children, "the cascade") == 0)
        // A bare DELETE (SQLite's truncate optimization skips the update hook).
        try await store.write { db in try db.execute("DELETE FROM log") }
        #expect(try await ObservationWait.next(log, "the bare delete") == 0)
        await store.close()
    }
}

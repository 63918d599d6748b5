import Depot
import DepotSQLite
import Foundation
import Testing

/// Stored dates are SQLite's own date text, so they compare with what SQLite
/// writes itself: `CURRENT_TIMESTAMP`, `datetime()`, a `DEFAULT CURRENT_TIMESTAMP` column.
@Suite struct SQLiteDateTextTests {
    struct Event: Record, Equatable {
        static let tableName = "events"
        var id: Int64?
        var at: Date
    }

    @Test func aStoredDateEqualsSQLitesTextForTheSameInstant() async throws {
        let store = Store.sqliteInMemory()
        let whole = Date(timeIntervalSince1970: 1_763_779_518)
        let fraction = Date(timeIntervalSince1970: 1_763_779_518.25)
        let answers = try await store.write { db -> [Bool?] in
            try db.execute("CREATE TABLE \(ident: "events") (\(ident: "id") INTEGER PRIMARY KEY, \(ident: "at") TEXT NOT NULL)")
            try db.insert(Event(id: 1, at: whole))
            try db.insert(Event(id: 2, at: fraction))
            return [
                try db.fetchOne(Bool.self, "SELECT \(ident: "at") = datetime(1763779518, 'unixepoch') FROM \(ident: "events") WHERE \(ident: "id") = 1"),
                try db.fetchOne(Bool.self, "SELECT \(ident: "at") = '2025-11-22 02:45:18' FROM \(ident: "events") WHERE \(ident: "id") = 1"),
                try db.fetchOne(Bool.self, "SELECT \(ident: "at") > datetime(1763779518, 'unixepoch') FROM \(ident: "events") WHERE \(ident: "id") = 2"),
                try db.fetchOne(Bool.self, "SELECT \(ident: "at") < datetime(1763779519, 'unixepoch') FROM \(ident: "events") WHERE \(ident: "id") = 2"),
                try db.fetchOne(Bool.self, "SELECT \(ident: "at") = strftime('%Y-%m-%d %H:%M:%f', 1763779518.25, 'unixepoch') FROM \(ident: "events") WHERE \(ident: "id") = 2"),
                try db.fetchOne(Bool.self, "SELECT julianday(\(ident: "at")) = julianday('2025-11-22 02:45:18.25') FROM \(ident: "events") WHERE \(ident: "id") = 2"),
            ]
        }
        #expect(answers == [true, true, true, true, true, true])
        await store.close()
    }

    @Test func aDefaultCurrentTimestampColumnReadsAsADateAndComparesWithBoundDates() async throws {
        let store = Store.sqliteInMemory()
        let hourAgo = Date().addingTimeInterval(-3600)
        let hourAhead = Date().addingTimeInterval(3600)
        // CURRENT_TIMESTAMP is whole seconds, taken inside the access: between these two, a
        // second either way, however long a busy machine takes to run the access.
        let started = Date()
        let (created, after, before) = try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "log") (\(ident: "id") INTEGER PRIMARY KEY, \(ident: "created") TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
            try db.execute("INSERT INTO \(ident: "log") DEFAULT VALUES")
            return (try db.fetchOne(Date.self, "SELECT \(ident: "created") FROM \(ident: "log")"),
                    try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "log") WHERE \(ident: "created") > \(hourAgo)"),
                    try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "log") WHERE \(ident: "created") < \(hourAhead)"))
        }
        let ended = Date()
        #expect(created.map { $0 >= started.addingTimeInterval(-1) && $0 <= ended.addingTimeInterval(1) } == true,
                "\(String(describing: created)) between \(started) and \(ended)")
        #expect(after == 1)
        #expect(before == 1)
        await store.close()
    }

    @Test func theEarlierTextFormIsStillRead() async throws {
        let store = Store.sqliteInMemory()
        let date = try await store.read { db in try db.fetchOne(Date.self, "SELECT \("2026-11-22T02:45:18.123456Z")") }
        #expect(date == Date(timeIntervalSince1970: 1_795_315_518.123456))
        await store.close()
    }
}

import Depot
import DepotSQLite
import Foundation
import Reminders
import Testing

/// Migrations that change what is stored keep every answer.
@Suite struct RemindersMigrationTests {
    @Test func datesStoredInTheEarlierTextFormAreRewrittenInSQLitesOwn() async throws {
        let store = Store.sqliteInMemory()
        try await RemindersSchema.migrate(store)
        try await store.write { db in
            try db.execute(#"INSERT INTO "remindersLists" ("id", "title", "color", "position", "sort", "sortAscending", "showCompleted") VALUES (1, 'Work', 0, 0, 'dueDate', 1, 0)"#)
            try db.execute(#"INSERT INTO "reminders" ("id", "title", "notes", "isCompleted", "isFlagged", "priority", "dueDate", "createdAt", "position", "remindersListID") VALUES (1, 'a', '', 0, 0, 0, '2026-03-15T10:00:00.250000Z', '2026-03-01T00:00:00.000000Z', 0, 1), (2, 'b', '', 0, 0, 0, NULL, '2026-03-02T09:30:00.000001Z', 1, 1)"#)
            // As if the store had only the first migration: the later ones run again.
            try db.execute("DELETE FROM \(ident: "depotMigrations") WHERE \(ident: "name") <> \("1 lists, reminders, tags")")
            try db.execute("DROP TABLE \(ident: "remindersListCoverImages")")
            try db.execute("DROP TABLE \(ident: "reminderSearch")")
        }
        try await RemindersSchema.migrate(store)
        let texts = try await store.read { db in
            try db.fetchAll(Row.self, "SELECT \(ident: "dueDate"), \(ident: "createdAt") FROM \(ident: "reminders") ORDER BY \(ident: "id")")
                .map { $0.values.map(\.description) }
        }
        #expect(texts == [["TEXT '2026-03-15 10:00:00.250'", "TEXT '2026-03-01 00:00:00'"],
                          ["NULL", "TEXT '2026-03-02 09:30:00.000001'"]])
        await store.close()
    }

    @Test func aDeletedListsIDIsNeverANewListsOnEitherEngineEvenAfterTheMigrationRunsAgain() async throws {
        let store = Store.sqliteInMemory()
        try await RemindersSchema.migrate(store)
        let model = RemindersModel(store: store)
        let first = try await model.createList(title: "One")
        let last = try await model.createList(title: "Two")
        try await model.deleteList("Two")
        #expect(try await model.createList(title: "Three").id ?? 0 > last.id ?? 0)
        // As if the store had only the first five migrations: the sixth runs again and keeps the sequence.
        try await store.write { db in
            try db.execute("DELETE FROM \(ident: "depotMigrations") WHERE \(ident: "name") IN (\("6 keys never reused"), \("7 observed tables on every engine"), \("8 reminder search"))")
            try db.execute("DROP TABLE \(ident: "reminderSearch")")
        }
        try await RemindersSchema.migrate(store)
        try await model.deleteList("Three")
        let four = try await model.createList(title: "Four")
        #expect(four.id ?? 0 > (last.id ?? 0) + 1, "ids given: \(first.id ?? 0), \(last.id ?? 0), then \(four.id ?? 0)")
        await store.close()
    }

    @Test func aDatabaseMadeBeforeSQLiteRecordedObservableTablesIsWatchedAfterMigrating() async throws {
        let store = Store.sqliteInMemory()
        try await RemindersSchema.migrate(store)
        // As a database made before migration 7: nothing recorded.
        try await store.write { db in
            try db.execute("DROP TABLE \(ident: "depotObservedTables")")
            try db.execute("DELETE FROM \(ident: "depotMigrations") WHERE \(ident: "name") IN (\("7 observed tables on every engine"), \("8 reminder search"))")
            try db.execute("DROP TABLE \(ident: "reminderSearch")")
        }
        let model = RemindersModel(store: store)
        var before = model.watch(.home).makeAsyncIterator()
        await #expect(throws: DatabaseError.self) { _ = try await before.next() }
        try await RemindersSchema.migrate(store)
        var after = model.watch(.home).makeAsyncIterator()
        #expect(try await after.next() != nil)
        await store.close()
    }
}

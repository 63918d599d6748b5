import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders
import Testing
import TestSupport

/// Migrations that change what is stored keep every answer.
@Suite struct RemindersMigrationTests {
    @Test func datesStoredInTheEarlierTextFormAreRewrittenInSQLitesOwn() async throws {
        let store = Store.sqliteInMemory()
        // A database made when only the first migration existed, with dates in the earlier form.
        try await RemindersSchema.migrator.migrate(store, upTo: "1 lists, reminders, tags")
        try await store.write { db in
            try db.execute(#"INSERT INTO "remindersLists" ("id", "title", "color", "position", "sort", "sortAscending", "showCompleted") VALUES (1, 'Work', 0, 0, 'dueDate', 1, 0)"#)
            try db.execute(#"INSERT INTO "reminders" ("id", "title", "notes", "isCompleted", "isFlagged", "priority", "dueDate", "createdAt", "position", "remindersListID") VALUES (1, 'a', '', 0, 0, 0, '2026-03-15T10:00:00.250000Z', '2026-03-01T00:00:00.000000Z', 0, 1), (2, 'b', '', 0, 0, 0, NULL, '2026-03-02T09:30:00.000001Z', 1, 1)"#)
        }
        try await RemindersSchema.migrate(store)
        let texts = try await store.read { db in
            try db.fetchAll(Row.self, "SELECT \(ident: "dueDate"), \(ident: "createdAt") FROM \(ident: "reminders") ORDER BY \(ident: "number")")
                .map { $0.values.map(\.description) }
        }
        #expect(texts == [["TEXT '2026-03-15 10:00:00.250'", "TEXT '2026-03-01 00:00:00'"],
                          ["NULL", "TEXT '2026-03-02 09:30:00.000001'"]])
        await store.close()
    }

    static func engines() async throws -> [Store] {
        [Store.sqliteInMemory(), try await PostgresTestServer.freshStore()]
    }

    /// Migration 9 moves every row to a UUID key: each list and reminder keeps
    /// its old id as its number, links and cover images follow, a tag's key is
    /// made from its title, search finds what it found, and numbers continue
    /// after every id ever given (a deleted last one included).
    @Test func keysThatNeverCollideKeepEveryRowLinkAndNumberOnBothEngines() async throws {
        for (index, store) in try await Self.engines().enumerated() {
            try await RemindersSchema.migrator.migrate(store, upTo: "8 reminder search")
            let yes = store.dialect.engineName == "PostgreSQL" ? "true" : "1", no = store.dialect.engineName == "PostgreSQL" ? "false" : "0"
            try await store.write { db in
                try db.execute(script: SQL(unsafeRaw: """
                    INSERT INTO "remindersLists" ("title", "color", "position", "sort", "sortAscending", "showCompleted") VALUES
                      ('Groceries', 0, 0, 'dueDate', \(yes), \(no)), ('Work', 1, 1, 'manual', \(no), \(yes)), ('Gone', 2, 2, 'title', \(yes), \(no));
                    INSERT INTO "reminders" ("id", "title", "notes", "isCompleted", "isFlagged", "priority", "dueDate", "createdAt", "position", "remindersListID") VALUES
                      (1, 'Milk', 'oat', \(no), \(yes), 2, NULL, '2026-03-01 00:00:00', 0, 1), (5, 'Report', '', \(yes), \(no), 0, '2026-03-02 09:30:00', '2026-03-01 00:00:00', 0, 2);
                    INSERT INTO "tags" ("id", "title") VALUES (1, 'Errand'), (2, 'work');
                    INSERT INTO "remindersTags" ("reminderID", "tagID") VALUES (1, 1), (5, 1), (5, 2);
                    INSERT INTO "remindersListCoverImages" ("remindersListID", "image") VALUES (2, \(store.dialect.engineName == "PostgreSQL" ? "'\\x00ff'::bytea" : "x'00ff'"));
                    DELETE FROM "remindersLists" WHERE "id" = 3
                    """))
            }
            try await RemindersSchema.migrate(store)
            let model = RemindersModel(store: store)
            let lists = try await model.lists()
            #expect(lists.map(\.list.title) == ["Groceries", "Work"], "engine \(index)")
            #expect(lists.map(\.list.number) == [1, 2], "engine \(index): old ids are the numbers")
            #expect(Set(lists.map(\.list.id)).count == 2)
            #expect(try await model.reminder(5).reminder.title == "Report")
            #expect(try await model.reminder(5).tags == ["Errand", "work"], "engine \(index): links follow their reminders and tags")
            #expect(try await model.reminder(1).tags == ["Errand"])
            #expect(try await model.reminder(1).reminder.remindersListID == lists[0].list.id)
            #expect(try await model.tag(named: "errand")?.id == Tag.id(forTitle: "Errand"), "engine \(index): a tag's key is its title's")
            #expect(try await model.coverImage(of: "Work") == Data([0x00, 0xFF]))
            #expect(try await model.search("oat").details.map(\.reminder.title) == ["Milk"], "engine \(index): search was rebuilt")
            let next = try await model.createList(title: "Three")
            #expect(next.number == 4, "engine \(index): numbers continue after the deleted list 3")
            let added = try await model.addReminder(ReminderDraft(title: "Eggs"), to: "Groceries")
            #expect(added.reminder.number == 6)
            await store.close()
        }
    }

    @Test func aDatabaseMadeBeforeSQLiteRecordedObservableTablesIsWatchedAfterMigrating() async throws {
        let store = Store.sqliteInMemory()
        try await RemindersSchema.migrator.migrate(store, upTo: "6 keys never reused")
        try await RemindersSchema.migrate(store)
        let model = RemindersModel(store: store)
        var after = model.watch(.home).makeAsyncIterator()
        #expect(try await after.next() != nil)
        await store.close()
    }
}

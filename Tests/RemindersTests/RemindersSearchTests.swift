import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders
import Testing
import TestSupport

/// Search follows every change of a title, notes or tags, on both engines,
/// and finds reminders stored before the index existed.
@Suite(.serialized) struct RemindersSearchTests {
    static func engines() async throws -> [Store] {
        [Store.sqliteInMemory(), try await PostgresTestServer.freshStore()]
    }

    static func titles(_ model: RemindersModel, _ text: String) async throws -> [String] {
        try await model.search(text, includeCompleted: true).details.map(\.reminder.title)
    }

    @Test func searchFollowsEditsTagsRenamesAndDeletes() async throws {
        for (index, store) in try await Self.engines().enumerated() {
            let model = RemindersModel(store: store)
            try await model.migrate()
            _ = try await model.createList(title: "Home")
            let paint = try await model.addReminder(ReminderDraft(title: "Paint the fence", notes: "white", tags: ["weekend"]), to: "Home")
            let mow = try await model.addReminder(ReminderDraft(title: "Mow the lawn", tags: ["Weekend", "garden"]), to: "Home")
            let id = paint.reminder.number ?? 0
            #expect(try await Self.titles(model, "weekend") == ["Paint the fence", "Mow the lawn"], "engine \(index)")

            try await model.editReminder(id, ReminderDraft(title: "Paint the shed", notes: "green"))
            #expect(try await Self.titles(model, "fence") == [], "the old title")
            #expect(try await Self.titles(model, "shed green") == ["Paint the shed"], "the new title and notes")

            try await model.untag(id, from: ["weekend"])
            #expect(try await Self.titles(model, "weekend") == ["Mow the lawn"], "untagged")
            try await model.tag(id, with: ["chores"])
            #expect(try await Self.titles(model, "chores") == ["Paint the shed"], "tagged")

            try await model.renameTag("garden", to: "Yard work")
            #expect(try await Self.titles(model, "garden") == [], "the tag's old title")
            #expect(try await Self.titles(model, "yard") == ["Mow the lawn"], "the tag's new title")
            try await model.deleteTag("Yard work")
            #expect(try await Self.titles(model, "yard") == [], "a deleted tag")

            try await model.complete(mow.reminder.number ?? 0)
            #expect(try await model.search("mow").details.isEmpty, "completed: hidden unless asked")
            #expect(try await model.deleteCompletedMatches("mow") == 1)
            #expect(try await Self.titles(model, "lawn") == [], "deleted")
            try await model.deleteList("Home")
            #expect(try await Self.titles(model, "paint") == [], "deleted with its list")
            let left = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "reminderSearch")") }
            #expect(left == 0, "no index row outlives its reminder")
            await store.close()
        }
    }

    @Test func remindersStoredBeforeTheIndexAreFoundAfterMigrating() async throws {
        for (index, store) in try await Self.engines().enumerated() {
            // A database made before migration 8: no index.
            try await RemindersSchema.migrator.migrate(store, upTo: "7 observed tables on every engine")
            let (yes, no) = store.dialect.engineName == "PostgreSQL" ? ("true", "false") : ("1", "0")
            try await store.write { db in
                try db.execute(script: SQL(unsafeRaw: """
                    INSERT INTO "remindersLists" ("id", "title", "color", "position", "sort", "sortAscending", "showCompleted") VALUES (1, 'Home', 0, 0, 'dueDate', \(yes), \(no));
                    INSERT INTO "reminders" ("id", "title", "notes", "isCompleted", "isFlagged", "priority", "dueDate", "createdAt", "position", "remindersListID")
                      VALUES (1, 'Call the plumber', 'leak under the sink', \(no), \(no), 0, NULL, '2026-03-01 00:00:00', 0, 1);
                    INSERT INTO "tags" ("id", "title") VALUES (1, 'urgent');
                    INSERT INTO "remindersTags" ("reminderID", "tagID") VALUES (1, 1)
                    """))
            }
            let model = RemindersModel(store: store)
            try await model.migrate()
            #expect(try await Self.titles(model, "plumb sink urgent") == ["Call the plumber"], "engine \(index)")
            await store.close()
        }
    }
}

import Depot
import DepotSQLite
import Foundation
import Reminders
import Testing

/// Text the model takes: what every engine stores alike, so a row written on
/// one engine syncs to any other.
@Suite struct RemindersTextTests {
    @Test func noTitleNotesOrTagHoldsUPlus0000OnAnyEngine() async throws {
        let store = Store.sqliteInMemory()
        let model = RemindersModel(store: store)
        try await model.migrate()
        _ = try await model.createList(title: "Inbox")
        let refusals: [(String, () async throws -> Void)] = [
            ("a title", { _ = try await model.addReminder(ReminderDraft(title: "a\u{0}b"), to: "Inbox") }),
            ("the notes", { _ = try await model.addReminder(ReminderDraft(title: "ok", notes: "a\u{0}b"), to: "Inbox") }),
            ("a title", { _ = try await model.addReminder(ReminderDraft(title: "ok", tags: ["t\u{0}"]), to: "Inbox") }),
            ("a title", { _ = try await model.createList(title: "L\u{0}") }),
        ]
        for (field, refused) in refusals {
            do {
                try await refused()
                Issue.record("\(field) holding U+0000 was stored")
            } catch let error as RemindersError {
                #expect(error == .invalidInput("\(field) cannot hold the character U+0000 (NUL): not every database stores it"))
            }
        }
        #expect(try await model.reminders(in: .all).isEmpty, "nothing was stored")
        await store.close()
    }
}

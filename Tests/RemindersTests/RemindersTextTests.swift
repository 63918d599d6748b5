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

    @Test func aListTitleComposedOtherwiseIsTheSameTitleAndFindsTheList() async throws {
        let store = Store.sqliteInMemory()
        let model = RemindersModel(store: store)
        try await model.migrate()
        let composed = try await model.createList(title: "Caf\u{E9}")
        do {
            _ = try await model.createList(title: "CAFE\u{301}")
            Issue.record("a second list titled Café, written with a combining accent, was made")
        } catch let error as RemindersError {
            #expect(error == .conflict("a list named \"Caf\u{E9}\" exists already; choose another title"))
        }
        // Named either way, it is the one list, its title kept as typed.
        let found = try await model.reminders(in: "cafe\u{301}").list
        #expect(found.id == composed.id)
        #expect(Array(found.title.utf8) == Array("Caf\u{E9}".utf8))
        #expect(try await model.lists().count == 1)
        await store.close()
    }

    @Test func jsonDatesKeepTheirFractionOfASecondToTheMicrosecond() throws {
        let saturday = 1_795_856_400.0   // 2026-11-28T09:00:00Z
        #expect(RemindersJSON.dateText(Date(timeIntervalSince1970: saturday)) == "2026-11-28T09:00:00Z")
        #expect(RemindersJSON.dateText(Date(timeIntervalSince1970: saturday + 0.700862)) == "2026-11-28T09:00:00.700862Z")
        #expect(RemindersJSON.dateText(Date(timeIntervalSince1970: saturday + 0.5)) == "2026-11-28T09:00:00.5Z")
        #expect(RemindersJSON.dateText(Date(timeIntervalSince1970: saturday + 59.9999996)) == "2026-11-28T09:01:00Z")
        #expect(RemindersJSON.dateText(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.75Z")
        // As the command prints a reminder: its creation time as stored, not cut to the second.
        let encoded = try RemindersJSON.encoder().encode(["at": Date(timeIntervalSince1970: saturday + 0.123456)])
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"at":"2026-11-28T09:00:00.123456Z"}"#)
    }
}

import Depot
import DepotSync
import Foundation
import Reminders

extension WebData {
    /// What the reminder form sends: every field it shows.
    struct ReminderForm: Sendable, Equatable {
        var title: String
        var notes: String
        /// Nil: no due date.
        var dueDate: Date?
        var priority: Priority
        var isFlagged: Bool
        var isCompleted: Bool
        var list: UUID
        /// The tags' titles, as ``WebData/tagTitles(_:)`` reads the field.
        var tags: [String]

        /// The form's fields, each checked: a wrong one is a 422 naming it.
        init(_ form: WebForm) throws {
            title = try WebData.title(form["title"] ?? "", of: "a reminder")
            notes = form["notes"] ?? ""
            guard notes.count <= 10_000 else { throw Self.invalid("the notes are at most 10,000 characters") }
            dueDate = try Self.dueDate(form["due"] ?? "")
            guard let number = Int(form["priority"] ?? "0"), let priority = Priority(rawValue: number) else {
                throw Self.invalid("the priority is none, low, medium or high")
            }
            self.priority = priority
            isFlagged = form["flagged"] == "on"
            isCompleted = form["completed"] == "on"
            guard let list = form["list"].flatMap(UUID.init(uuidString:)) else { throw Self.invalid("choose a list") }
            self.list = list
            tags = try WebData.tagTitles(form["tags"] ?? "")
        }

        /// A due date as `<input type="datetime-local">` sends it (`2026-12-24T18:00`),
        /// or a day alone, in UTC, as the page says; empty for none.
        static func dueDate(_ text: String) throws -> Date? {
            let text = text.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { return nil }
            for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "UTC")
                formatter.dateFormat = format
                if let date = formatter.date(from: text) { return date }
            }
            throw invalid("the due date is a day and a time, as 2026-12-24T18:00 (UTC)")
        }

        static func invalid(_ message: String) -> ServerError {
            ServerError(status: .unprocessableContent, message: message, cause: "invalid field")
        }
    }

    /// The reminder's fields as the form sent them, its tags with them, all
    /// in one edit; a move to another list the account sees is part of it.
    func editReminder(_ id: UUID, _ form: ReminderForm) async throws {
        var reminder = try await reminder(id)
        if form.list != reminder.remindersListID {
            // The list must be one the account sees: any other is no such list.
            // It goes last in the list it moves to.
            reminder.position = try await server.store.read { db in
                try Self.mustSee(db, RemindersList.tableName, form.list, account)
                return try Self.after(try db.fetchOne(Int?.self, """
                    SELECT max(\(ident: "position")) FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") = \(form.list)
                    """) ?? nil)
            }
            reminder.remindersListID = form.list
        }
        reminder.title = form.title
        reminder.notes = form.notes
        reminder.dueDate = form.dueDate
        reminder.priority = form.priority
        reminder.isFlagged = form.isFlagged
        reminder.isCompleted = form.isCompleted
        let tags = try await server.store.read { db in try tagEdits(db, reminder: id, titles: form.tags) }
        try await edit([.save(reminder)] + tags)
    }

    /// Deletes a list the account sees, its reminders with it.
    func deleteList(_ id: UUID) async throws {
        try await server.store.read { db in try Self.mustSee(db, RemindersList.tableName, id, account) }
        try await edit([.delete(RemindersList.tableName, key: Self.key(id))])
    }
}

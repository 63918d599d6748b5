import Depot
import Foundation

extension RemindersModel {
    /// What the model reads, for Depot's `SchemaCheck`: every record type's
    /// table, each smart list's query and a list's query in each sort, run
    /// once with sample values.
    ///
    /// ```swift
    /// try await model.migrate()
    /// let differences = try await store.read { db in try RemindersModel.schemaCheck.differences(db) }
    /// ```
    public static var schemaCheck: SchemaCheck {
        var check = SchemaCheck()
        check.add(RemindersList.self)
        check.add(Reminder.self)
        check.add(Tag.self)
        check.add(ReminderTag.self)
        check.add(ListCoverImage.self)
        check.add(SyncAccount.self)
        let day = Day(containing: Date(timeIntervalSince1970: 1_773_568_800), in: .gmt)
        for view in SmartList.allCases {
            check.add(query: "the \(view) smart list") { db in _ = try reminders(db, in: view, day: day, limit: 3) }
        }
        for sort in [ReminderSort.dueDate, .priority, .title, .createdAt, .manual] {
            check.add(query: "a list by \(sort)") { db in
                _ = try db.fetchPage(ordered(Reminder.where { $0.remindersListID.eq(UUID()) }, ReminderOrder(sort: sort, ascending: true, showCompleted: true)), limit: 3)
            }
        }
        return check
    }
}

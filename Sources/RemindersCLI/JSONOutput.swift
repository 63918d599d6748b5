import Foundation
import Reminders

// What --json prints: the model's JSON forms (Reminders/JSONForms.swift).

extension Output {
    static func json(_ home: HomeScreen) throws { try json(HomeJSON(home)) }
    static func json(_ lists: [ListSummary]) throws { try json(lists.map(ListSummaryJSON.init)) }
    static func json(_ list: RemindersList) throws { try json(ListJSON(list)) }
    static func json(_ details: [ReminderDetail]) throws { try json(details.map(ReminderDetailJSON.init)) }
    static func json(_ detail: ReminderDetail) throws { try json(ReminderDetailJSON(detail)) }
}

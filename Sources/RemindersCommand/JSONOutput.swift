import Foundation
import Reminders

// What --json prints: the model's values as the command takes them back:
// colours as "#RRGGBBAA" text (as `lists recolor` reads them) and a list's
// place among the lists from 1 (as `lists move` numbers it).

/// A list, as --json shows it.
struct ListJSON: Encodable {
    var id: Int64?
    var title: String
    /// `#RRGGBBAA`.
    var color: String
    /// The place among the lists, from 1.
    var position: Int
    var sort: ReminderSort
    var sortAscending: Bool
    var showCompleted: Bool

    init(_ list: RemindersList) {
        id = list.id
        title = list.title
        color = Output.hex(list.color)
        position = list.position + 1
        sort = list.sort
        sortAscending = list.sortAscending
        showCompleted = list.showCompleted
    }
}

/// A list with its counts.
struct ListSummaryJSON: Encodable {
    var list: ListJSON
    var incompleteCount: Int
    var hasCoverImage: Bool

    init(_ summary: ListSummary) {
        list = ListJSON(summary.list)
        incompleteCount = summary.incompleteCount
        hasCoverImage = summary.hasCoverImage
    }
}

/// The home screen.
struct HomeJSON: Encodable {
    var today, scheduled, all, flagged, completed, overdue: Int
    var lists: [ListSummaryJSON]
    var tags: [TagSummary]

    init(_ home: HomeScreen) {
        (today, scheduled, all, flagged, completed, overdue) = (home.today, home.scheduled, home.all, home.flagged, home.completed, home.overdue)
        lists = home.lists.map(ListSummaryJSON.init)
        tags = home.tags
    }
}

/// A reminder with what its row shows.
struct ReminderDetailJSON: Encodable {
    var reminder: Reminder
    var listTitle: String
    /// `#RRGGBBAA`.
    var listColor: String
    var tags: [String]
    var tagsText: String
    var isPastDue: Bool
    var notesPreview: String

    init(_ detail: ReminderDetail) {
        reminder = detail.reminder
        listTitle = detail.listTitle
        listColor = Output.hex(detail.listColor)
        tags = detail.tags
        tagsText = detail.tagsText
        isPastDue = detail.isPastDue
        notesPreview = detail.notesPreview
    }
}

/// A list's screen, for `watch LIST --json`.
struct ListScreenJSON: Encodable {
    var list: ListJSON
    var reminders: [ReminderDetailJSON]

    init(_ screen: ListScreen) {
        list = ListJSON(screen.list)
        reminders = screen.reminders.map(ReminderDetailJSON.init)
    }
}

extension Output {
    static func json(_ home: HomeScreen) throws { try json(HomeJSON(home)) }
    static func json(_ lists: [ListSummary]) throws { try json(lists.map(ListSummaryJSON.init)) }
    static func json(_ list: RemindersList) throws { try json(ListJSON(list)) }
    static func json(_ details: [ReminderDetail]) throws { try json(details.map(ReminderDetailJSON.init)) }
    static func json(_ detail: ReminderDetail) throws { try json(ReminderDetailJSON(detail)) }
}

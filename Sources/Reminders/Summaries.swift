import Depot
import Foundation

/// The home screen: the smart-list counts, every list with its open count, the tags in use.
public struct HomeScreen: Codable, Equatable, Sendable {
    /// Open reminders due on today's calendar day (overdue ones are ``overdue``).
    public var today: Int
    /// Open reminders with a due date.
    public var scheduled: Int
    /// Open reminders.
    public var all: Int
    /// Open flagged reminders.
    public var flagged: Int
    /// Completed reminders.
    public var completed: Int
    /// Open reminders due before the start of today.
    public var overdue: Int
    /// Every list, in order, empty ones included.
    public var lists: [ListSummary]
    /// The tags at least one reminder carries.
    public var tags: [TagSummary]
}

/// A list and how many open reminders it holds.
public struct ListSummary: Codable, Equatable, Sendable {
    /// The list.
    public var list: RemindersList
    /// Its open reminders.
    public var incompleteCount: Int
    /// Whether it has a cover image (``RemindersModel/coverImage(of:)`` reads it).
    public var hasCoverImage: Bool
}

/// A tag and how many reminders carry it.
public struct TagSummary: Codable, Equatable, Sendable {
    /// The tag.
    public var tag: Tag
    /// How many reminders carry it, done or not.
    public var reminderCount: Int
    /// How many open reminders carry it.
    public var openCount: Int
}

/// The result of a search.
public struct SearchResult: Codable, Equatable, Sendable {
    /// The matching reminders (completed ones only when asked for).
    public var reminders: [Reminder]
    /// How many completed reminders match, shown or not.
    public var completedCount: Int
}

/// A reminder with what its row draws: its list's title and colour, its tags,
/// whether it is past due, and a preview of its notes.
public struct ReminderDetail: Codable, Equatable, Sendable {
    /// The reminder.
    public var reminder: Reminder
    /// Its list's title.
    public var listTitle: String
    /// Its list's colour, 0xRRGGBBAA.
    public var listColor: Int64
    /// Its tags, by title, ignoring case in order.
    public var tags: [String]
    /// Its tags as the row shows them: `#a #b`, in the order of ``tags``.
    public var tagsText: String
    /// Not completed and due before the start of today's calendar day (in the model's zone).
    public var isPastDue: Bool
    /// The notes on one line: every line break a space, at most 200 characters.
    public var notesPreview: String

    init(reminder: Reminder, listTitle: String, listColor: Int64, tags: [String], today: Day) {
        self.reminder = reminder
        self.listTitle = listTitle
        self.listColor = listColor
        self.tags = tags
        tagsText = tags.map { "#" + $0 }.joined(separator: " ")
        isPastDue = !reminder.isCompleted && (reminder.dueDate.map { $0 < today.start } ?? false)
        notesPreview = Self.preview(reminder.notes)
    }

    /// `notes` on one line (each line break, CRLF included, one space), cut after 200 characters.
    static func preview(_ notes: String) -> String {
        var line = ""
        var count = 0
        for character in notes {
            guard count < 200 else { break }
            line.append(character.isNewline ? " " : character)
            count += 1
        }
        return line
    }
}

/// The built-in views across lists.
public enum SmartList: String, Codable, Sendable, CaseIterable {
    case today, scheduled, flagged, completed, all
}

/// Calendar days in a time zone the caller chooses, so "today" never depends on
/// the server's session zone.
struct Day {
    let start: Date
    let end: Date

    init(containing date: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        start = calendar.startOfDay(for: date)
        end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
    }
}

/// A-Z to a-z and nothing else: the folding both engines' SQL agrees on.
func foldedASCII(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
        (65...90).contains(scalar.value) ? Unicode.Scalar(scalar.value + 32) ?? scalar : scalar
    }))
}

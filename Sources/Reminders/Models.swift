import Depot
import DepotSync
import Foundation

/// A list of reminders, such as "Groceries" or "Work".
@Columns
public struct RemindersList: Record, Equatable, Hashable {
    public static let tableName = "remindersLists"

    /// The key: made on the device that creates the list, the same on every
    /// device it syncs to.
    public var id: UUID
    /// This store's short name for the list (1, 2, 3...), given when the list
    /// is stored; nil before. Another device may number it otherwise.
    public var number: Int64?
    /// The title shown in the list of lists.
    public var title: String
    /// The colour, as 0xRRGGBBAA (it needs 32 unsigned bits: stored as a 64-bit integer).
    public var color: Int64
    /// The place among the lists, from 0.
    public var position: Int
    /// How the list's reminders are sorted, chosen per list.
    public var sort: ReminderSort
    /// Whether the sort runs ascending.
    public var sortAscending: Bool
    /// Whether completed reminders are shown with the others.
    public var showCompleted: Bool

    /// A list with the default sort (due date, ascending) that hides completed reminders.
    public init(id: UUID = UUID(), number: Int64? = nil, title: String, color: Int64 = 0x4A99_EFFF, position: Int = 0,
                sort: ReminderSort = .dueDate, sortAscending: Bool = true, showCompleted: Bool = false) {
        self.id = id
        self.number = number
        self.title = title
        self.color = color
        self.position = position
        self.sort = sort
        self.sortAscending = sortAscending
        self.showCompleted = showCompleted
    }
}

/// How a list's reminders are ordered.
public enum ReminderSort: String, Codable, Sendable, CaseIterable {
    /// By due date; reminders without one come last.
    case dueDate
    /// By priority, high first when descending.
    case priority
    /// By title, ignoring letter case.
    case title
    /// By when they were created.
    case createdAt
    /// In the order the user arranged (``RemindersModel/moveReminder(_:before:)``).
    case manual
}

/// How important a reminder is. Stored as its raw value, 0 to 3.
public enum Priority: Int, Codable, Sendable, CaseIterable, Comparable {
    case none = 0
    case low = 1
    case medium = 2
    case high = 3

    /// Priorities order from none to high.
    public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `!`, `!!` or `!!!`, as Reminders shows it.
    public var marks: String { String(repeating: "!", count: rawValue) }
}

/// Priorities compare and order in queries by their raw value.
extension Priority: QueryComparable {}

/// Something to do.
@Columns
public struct Reminder: Record, Equatable, Hashable {
    public static let tableName = "reminders"

    /// The key: made on the device that creates the reminder, the same on
    /// every device it syncs to.
    public var id: UUID
    /// This store's short name for the reminder (1, 2, 3...), given when it
    /// is stored; nil before. Another device may number it otherwise.
    public var number: Int64?
    /// What to do.
    public var title: String
    /// Free text; empty when there are none.
    public var notes: String
    /// Whether it is done.
    public var isCompleted: Bool
    /// Whether it is flagged.
    public var isFlagged: Bool
    /// How important it is.
    public var priority: Priority
    /// When it is due, if ever.
    public var dueDate: Date?
    /// When it was created.
    public var createdAt: Date
    /// The place within its list, from 0.
    public var position: Int
    /// The list that holds it.
    public var remindersListID: UUID

    /// A reminder; `createdAt` defaults to now.
    public init(id: UUID = UUID(), number: Int64? = nil, title: String, notes: String = "", isCompleted: Bool = false, isFlagged: Bool = false,
                priority: Priority = .none, dueDate: Date? = nil, createdAt: Date = Date(), position: Int = 0,
                remindersListID: UUID) {
        self.id = id
        self.number = number
        self.title = title
        self.notes = notes
        self.isCompleted = isCompleted
        self.isFlagged = isFlagged
        self.priority = priority
        self.dueDate = dueDate
        self.createdAt = createdAt
        self.position = position
        self.remindersListID = remindersListID
    }
}

/// A label reminders share. Titles are unique ignoring letter case: a tag's
/// key is made from its title (``Tag/id(forTitle:namespace:)``), so two devices that
/// create "#errand" offline create one tag.
@Columns
public struct Tag: Record, Equatable, Hashable {
    public static let tableName = "tags"

    /// The key: ``id(forTitle:namespace:)`` of the title it was created with.
    public var id: UUID
    /// The title, as first written.
    public var title: String

    /// A tag keyed by its title.
    public init(title: String, namespace: UUID = Tag.modelNamespace) {
        self.id = Self.id(forTitle: title, namespace: namespace)
        self.title = title
    }

    /// A tag from its parts.
    public init(id: UUID, title: String) {
        self.id = id
        self.title = title
    }

    /// The key of a tag with this title: a name-based UUID (RFC 9562 version
    /// 5) of the title folded for A–Z case, the same on every device of an
    /// account (the namespace is the account's id, see ``SyncAccount``).
    public static func id(forTitle title: String, namespace: UUID = modelNamespace) -> UUID {
        NameBasedUUID.make(namespace: namespace, name: foldedASCII(title))
    }

    /// The namespace of tag keys in a database that never signed in to an account.
    public static let modelNamespace = UUID(uuid: (0x6f, 0x2e, 0x1a, 0x52, 0x8c, 0x3b, 0x4d, 0x1e, 0x9a, 0x07, 0x5b, 0x3c, 0x2d, 0x71, 0x40, 0x9e))
}

/// That a reminder carries a tag.
@Columns
public struct ReminderTag: Record, Equatable, Hashable {
    public static let tableName = "remindersTags"
    /// A reminder carries a tag at most once.
    public static let primaryKey = ["reminderID", "tagID"]

    /// The tagged reminder.
    public var reminderID: UUID
    /// The tag.
    public var tagID: UUID

    /// That `reminderID` carries `tagID`.
    public init(reminderID: UUID, tagID: UUID) {
        self.reminderID = reminderID
        self.tagID = tagID
    }
}

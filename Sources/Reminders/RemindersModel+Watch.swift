import Depot
import Foundation

/// What a list's screen shows: the list and its reminders in its stored sort.
public struct ListScreen: Codable, Equatable, Sendable {
    /// The list, with its sort and whether completed reminders show.
    public var list: RemindersList
    /// Its reminders, in the list's sort: the first of them when read with a limit.
    public var reminders: [ReminderDetail]
    /// How many reminders the list shows in all: more than ``reminders`` holds
    /// when it was read with a limit.
    public var total: Int

    /// A list's screen; `total` defaults to the reminders given.
    public init(list: RemindersList, reminders: [ReminderDetail], total: Int? = nil) {
        self.list = list
        self.reminders = reminders
        self.total = total ?? reminders.count
    }
}

/// A screen `reminders watch` can show.
public enum WatchedScreen: Sendable, Equatable {
    /// The home screen: smart-list counts, lists and tags.
    case home
    /// A smart list.
    case smartList(SmartList)
    /// A list, by title (ignoring letter case) or id.
    case list(String)
}

/// One rendering of a watched screen.
public enum ScreenContent: Equatable, Sendable {
    case home(HomeScreen)
    /// A smart list's reminders (the first of them, when watched with a
    /// limit) and how many it holds.
    case smartList(SmartList, [ReminderDetail], total: Int)
    case list(ListScreen)
}

extension RemindersModel {
    /// A screen now, and again after every commit that changes what it shows,
    /// from this process or any other, on SQLite and on PostgreSQL.
    ///
    /// ```swift
    /// for try await content in model.watch(.home) { render(content) }
    /// ```
    ///
    /// "Today" is the calendar day in ``timeZone`` at each read; the screen is
    /// not read again at midnight by itself, only when data changes.
    ///
    /// With a `limit`, a list's screen holds its first `limit` reminders and
    /// their total, so each drawing of a list of 50,000 reads one screenful; it
    /// is still drawn again for a change to a reminder it does not show (the
    /// observation follows tables, not rows). A negative limit ends the
    /// sequence with ``RemindersError/invalidInput(_:)``.
    public func watch(_ screen: WatchedScreen, limit: Int? = nil) -> Observation<ScreenContent> {
        let (zone, now) = (timeZone, self.now)
        return store.observe { db -> ScreenContent in
            try Self.validate(limit: limit)
            let day = Day(containing: now(), in: zone)
            switch screen {
            case .home:
                return .home(try Self.homeScreen(db, day: day))
            case .smartList(let view):
                let (reminders, total) = try Self.reminders(db, in: view, day: day, limit: limit)
                return .smartList(view, reminders, total: total)
            case .list(let nameOrID):
                return .list(try Self.screen(db, of: try Self.findList(db, nameOrID), today: day, limit: limit))
            }
        }.removeDuplicates()
    }
}

import Depot
import Foundation

/// What a list's screen shows: the list and its reminders in its stored sort.
public struct ListScreen: Codable, Equatable, Sendable {
    /// The list, with its sort and whether completed reminders show.
    public var list: RemindersList
    /// Its reminders, in the list's sort.
    public var reminders: [ReminderDetail]
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
    case smartList(SmartList, [ReminderDetail])
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
    public func watch(_ screen: WatchedScreen) -> Observation<ScreenContent> {
        let (zone, now) = (timeZone, self.now)
        return store.observe { db -> ScreenContent in
            let day = Day(containing: now(), in: zone)
            switch screen {
            case .home:
                return .home(try Self.homeScreen(db, day: day))
            case .smartList(let view):
                return .smartList(view, try Self.reminders(db, in: view, day: day))
            case .list(let nameOrID):
                let list = try Self.findList(db, nameOrID)
                return .list(ListScreen(list: list, reminders: try Self.reminders(db, of: list, today: day)))
            }
        }.removeDuplicates()
    }
}

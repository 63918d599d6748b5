import Depot
import DepotSync
import Foundation
import Reminders

extension WebData {
    /// The smart lists of the home page, over every list the account sees.
    enum SmartList: String, CaseIterable, Sendable {
        case today, scheduled, all, flagged, completed

        var title: String {
            switch self {
            case .today: "Today"
            case .scheduled: "Scheduled"
            case .all: "All"
            case .flagged: "Flagged"
            case .completed: "Completed"
            }
        }

        /// Whether a reminder belongs here: open ones due by the end of today
        /// (UTC; overdue ones too), open ones with a due date, open ones,
        /// flagged open ones, done ones.
        func contains(_ reminder: Reminder, endOfToday: Date) -> Bool {
            switch self {
            case .today: !reminder.isCompleted && (reminder.dueDate.map { $0 < endOfToday } ?? false)
            case .scheduled: !reminder.isCompleted && reminder.dueDate != nil
            case .all: !reminder.isCompleted
            case .flagged: !reminder.isCompleted && reminder.isFlagged
            case .completed: reminder.isCompleted
            }
        }
    }

    /// A reminder with the list it is in, for the pages that gather several lists.
    struct Found: Sendable, Equatable {
        var reminder: Reminder
        var list: RemindersList
    }

    /// The end of the current day in UTC.
    static func endOfToday(_ now: Date = Date()) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: now)) ?? now
    }

    /// Every reminder of the lists the account sees, with its list.
    static func everything(_ db: Database, _ account: String) throws -> [Found] {
        let ids = try SyncServer.visibleKeys(db, of: RemindersList.tableName, to: account).compactMap(UUID.init(uuidString:))
        guard !ids.isEmpty else { return [] }
        let lists = Dictionary(try db.fetchAll(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") IN \(list: ids)")
            .map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return try db.fetchAll(Reminder.self, "SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") IN \(list: ids)")
            .compactMap { reminder in lists[reminder.remindersListID].map { Found(reminder: reminder, list: $0) } }
    }

    /// How many reminders each smart list holds.
    static func smartCounts(_ db: Database, _ account: String) throws -> [SmartList: Int] {
        let all = try everything(db, account), end = endOfToday()
        var counts: [SmartList: Int] = [:]
        for smart in SmartList.allCases { counts[smart] = all.count { smart.contains($0.reminder, endOfToday: end) } }
        return counts
    }

    /// A smart list's reminders: by due date (none last), then by list and place.
    static func smart(_ db: Database, _ account: String, _ smart: SmartList) throws -> [Found] {
        let end = endOfToday()
        return try everything(db, account).filter { smart.contains($0.reminder, endOfToday: end) }.sorted { a, b in
            let (x, y) = (a.reminder.dueDate ?? .distantFuture, b.reminder.dueDate ?? .distantFuture)
            return (x, a.list.title, a.reminder.position, a.reminder.id.uuidString) < (y, b.list.title, b.reminder.position, b.reminder.id.uuidString)
        }
    }

    /// The reminders of the account's lists that match a search, as the
    /// command searches (every word, each the start of a word of the title,
    /// tags or notes; open ones first, the best match first).
    static func search(_ db: Database, _ account: String, _ text: String) throws -> [Found] {
        let ids = try SyncServer.visibleKeys(db, of: RemindersList.tableName, to: account).compactMap(UUID.init(uuidString:))
        guard !ids.isEmpty, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return [] }
        let query = RemindersModel.searchQuery(text)
        let found = try db.fetchAll(Reminder.all.matching(query, in: Reminder.searchIndex).where { $0.remindersListID.in(ids) }
            .order { $0.isCompleted.ascending() }.orderedBySearchRank(query, in: Reminder.searchIndex).limit(200))
        let lists = Dictionary(try db.fetchAll(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") IN \(list: ids)")
            .map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return found.compactMap { reminder in lists[reminder.remindersListID].map { Found(reminder: reminder, list: $0) } }
    }
}

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

        /// Which reminders belong here, on a reminder's columns: open ones due
        /// by the end of today (UTC; overdue ones too), open ones with a due
        /// date, open ones, flagged open ones, done ones.
        func condition(endOfToday: Date) -> SQL {
            let open: SQL = "\(ident: "isCompleted") = \(false)"
            switch self {
            case .today: return "\(open) AND \(ident: "dueDate") IS NOT NULL AND \(ident: "dueDate") < \(endOfToday)"
            case .scheduled: return "\(open) AND \(ident: "dueDate") IS NOT NULL"
            case .all: return open
            case .flagged: return "\(open) AND \(ident: "isFlagged") = \(true)"
            case .completed: return "\(ident: "isCompleted") = \(true)"
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

    /// How many reminders each smart list holds, counted by the database in one pass.
    static func smartCounts(_ db: Database, _ account: String, lists visible: [UUID]? = nil) throws -> [SmartList: Int] {
        let lists = try visible ?? visibleLists(db, account), end = endOfToday()
        guard !lists.isEmpty else { return Dictionary(uniqueKeysWithValues: SmartList.allCases.map { ($0, 0) }) }
        struct Counts: Decodable { var today, scheduled, all, flagged, completed: Int }
        let each = SmartList.allCases.map { smart -> SQL in "count(CASE WHEN \(smart.condition(endOfToday: end)) THEN 1 END) AS \(ident: smart.rawValue)" }
        guard let counts = try db.fetchOne(Counts.self, """
            SELECT \(SQL.join(each, separator: ", ")) FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") IN \(list: lists)
            """) else { return [:] }
        return [.today: counts.today, .scheduled: counts.scheduled, .all: counts.all, .flagged: counts.flagged, .completed: counts.completed]
    }

    /// A smart list's first page of reminders: by due date (none last), then
    /// by place; with how many it holds in all.
    static func smart(_ db: Database, _ account: String, _ smart: SmartList) throws -> (found: [Found], total: Int) {
        let lists = try listsByID(db, account), end = endOfToday()
        guard !lists.isEmpty else { return ([], 0) }
        let ids = Array(lists.keys)
        let total = try db.fetchOne(Int.self, """
            SELECT count(*) FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") IN \(list: ids) AND \(smart.condition(endOfToday: end))
            """) ?? 0
        let reminders = try db.fetchAll(Reminder.self, """
            SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") IN \(list: ids) AND \(smart.condition(endOfToday: end))
            ORDER BY CASE WHEN \(ident: "dueDate") IS NULL THEN 1 ELSE 0 END, \(ident: "dueDate"), \(ident: "position"), \(ident: "id") LIMIT \(pageSize)
            """)
        return (reminders.compactMap { reminder in lists[reminder.remindersListID].map { Found(reminder: reminder, list: $0) } }, total)
    }

    /// The most matches a search ranks; past it, the page shows the first
    /// matches unranked and asks for more letters.
    static let rankedMatches = 2_000

    /// The reminders of the account's lists that match a search, as the
    /// command searches (every word, each the start of a word of the title,
    /// tags or notes; open ones first, the best match first), at most 200;
    /// `unranked` when more than ``rankedMatches`` match (a letter or two
    /// typed so far): then they are 200 of the first found, open ones first,
    /// since ranking every reminder an account has would keep the page waiting.
    static func search(_ db: Database, _ account: String, _ text: String) throws -> (found: [Found], unranked: Bool) {
        let lists = try listsByID(db, account), ids = Array(lists.keys)
        guard !ids.isEmpty, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return ([], false) }
        let query = RemindersModel.searchQuery(text)
        // The matches' keys first (the index is searched once), then the records of at most 200, ranked among the matches.
        let keys = try db.fetchAll(Reminder.all.matching(query, in: Reminder.searchIndex).where { $0.remindersListID.in(ids) }
            .select { $0.id }.limit(rankedMatches + 1))
        let many = keys.count > rankedMatches
        let chosen = many ? Array(keys.prefix(200)) : keys
        guard !chosen.isEmpty else { return ([], false) }
        let records = Reminder.where { $0.id.in(chosen) }.order { $0.isCompleted.ascending() }
        let found = many ? try db.fetchAll(records.order { $0.position.ascending() })
            : try db.fetchAll(records.orderedBySearchRank(query, in: Reminder.searchIndex).limit(200))
        return (found.compactMap { reminder in lists[reminder.remindersListID].map { Found(reminder: reminder, list: $0) } }, many)
    }
}

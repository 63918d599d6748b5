import Depot
import Foundation

/// A screen of reminders: a list, a smart list or a tag.
public enum ReminderScreen: Sendable, Equatable {
    /// A list, by title (ignoring letter case) or id.
    case list(String)
    /// A smart list: today, scheduled, flagged, completed or all.
    case smart(SmartList)
    /// The reminders carrying a tag (its title ignoring letter case, `#` optional).
    case tag(String)
}

/// How a screen orders its reminders, and whether it shows completed ones.
///
/// Every order puts open reminders first, then follows `sort`, and ends with
/// the id, so ties always come out the same on every engine:
/// - due date: undated reminders last when ascending (first when descending);
/// - priority: reminders without a priority last in either direction (as in
///   the Reminders app: high first means high, medium, low, then none);
///   within one priority, flagged before unflagged;
/// - title: ignoring letter case (A–Z);
/// - creation date;
/// - manual: the order the user arranged (positions within a list).
public struct ReminderOrder: Sendable, Equatable {
    /// The sort.
    public var sort: ReminderSort
    /// Ascending (earliest, lowest, A first) or descending.
    public var ascending: Bool
    /// Whether completed reminders are shown (after the open ones).
    public var showCompleted: Bool

    /// An order.
    public init(sort: ReminderSort, ascending: Bool = true, showCompleted: Bool = false) {
        self.sort = sort
        self.ascending = ascending
        self.showCompleted = showCompleted
    }
}

extension RemindersModel {
    /// A screen's reminders in an order of the caller's choosing (nothing is stored).
    ///
    /// ```swift
    /// let flagged = try await model.reminders(on: .smart(.flagged), order: ReminderOrder(sort: .priority, ascending: false))
    /// ```
    public func reminders(on screen: ReminderScreen, order: ReminderOrder) async throws -> [ReminderDetail] {
        try await reminders(on: screen, order: order, limit: nil).reminders
    }

    /// The first `limit` of a screen's reminders in an order of the caller's
    /// choosing (every one when nil), and how many it holds.
    public func reminders(on screen: ReminderScreen, order: ReminderOrder, limit: Int?) async throws -> (reminders: [ReminderDetail], total: Int) {
        try Self.validate(limit: limit)
        let day = today
        return try await store.read(logger: logger) { db in
            let (reminders, total) = try Self.page(db, try Self.query(db, screen, order, day: day), limit: limit)
            return (try Self.details(db, reminders, today: day), total)
        }
    }

    /// A page of a screen's reminders: at most `limit`, after `cursor` (from
    /// the start when nil), and the cursor of the next page (nil on the last).
    /// Pages go by the values of the order's terms, not by an offset: the
    /// 500th page costs what the first does, and a reminder added or deleted
    /// meanwhile neither repeats nor skips one.
    ///
    /// ```swift
    /// var page = try await model.reminderPage(on: .list("Groceries"), order: order, after: nil, limit: 50)
    /// while let next = page.next { page = try await model.reminderPage(on: .list("Groceries"), order: order, after: next, limit: 50) }
    /// ```
    ///
    /// `total` is how many the screen holds, counted on the first page only
    /// (and only when there is a next one): later pages cost no count.
    ///
    /// - Throws: `invalidInput` for a limit below 1 or a cursor of another order.
    public func reminderPage(on screen: ReminderScreen, order: ReminderOrder, after cursor: PageCursor?, limit: Int) async throws
        -> (reminders: [ReminderDetail], next: PageCursor?, total: Int?) {
        guard limit >= 1 else { throw RemindersError.invalidInput("a page holds 1 reminder or more, not \(limit)") }
        let day = today
        return try await store.read(logger: logger) { db in
            let query = try Self.query(db, screen, order, day: day)
            let page: Page<Reminder>
            do {
                page = try db.fetchPage(query, after: cursor, limit: limit)
            } catch let error as DatabaseError where error.kind == .misuse && cursor != nil {
                throw RemindersError.invalidInput("this page cursor belongs to another order or screen: start again from the first page")
            }
            let total = cursor != nil ? nil : page.next == nil ? page.items.count : try db.fetchCount(query)
            return (try Self.details(db, page.items, today: day), page.next, total)
        }
    }

    /// A screen's reminders in an order.
    static func query(_ db: Database, _ screen: ReminderScreen, _ order: ReminderOrder, day: Day) throws -> Query<Reminder> {
        var query: Query<Reminder>
        switch screen {
        case .list(let nameOrID):
            let id = try Self.findList(db, nameOrID).id
            query = Reminder.where { $0.remindersListID.eq(id) }
        case .tag(let title):
            guard let tagID = try Self.findTag(db, title)?.id else { throw RemindersError.tagNotFound(title) }
            query = Reminder.where { reminder in
                ReminderTag.exists { $0.reminderID.eq(reminder.id) && $0.tagID.eq(tagID) }
            }
        case .smart(.today):
            query = Reminder.where { $0.dueDate >= day.start && $0.dueDate < day.end }
        case .smart(.scheduled):
            query = Reminder.where { $0.dueDate.isNotNull() }
        case .smart(.flagged):
            query = Reminder.where { $0.isFlagged }
        case .smart(.completed):
            query = Reminder.where { $0.isCompleted }
        case .smart(.all):
            query = Reminder.all
        }
        if !order.showCompleted, screen != .smart(.completed) { query = query.where { !$0.isCompleted } }
        return Self.ordered(query, order)
    }

    /// The query in `order`: open first, the sort's terms, then the id (the builder adds it).
    static func ordered(_ query: Query<Reminder>, _ order: ReminderOrder) -> Query<Reminder> {
        let up = order.ascending
        return query.order { reminder in
            var terms = [reminder.isCompleted.ascending()]
            switch order.sort {
            case .dueDate:
                terms.append(up ? reminder.dueDate.ascending(nulls: .last) : reminder.dueDate.descending(nulls: .first))
            case .priority:
                // "No priority" goes last in either direction, as in the Reminders app:
                // order by whether it is none first, always ascending.
                let none = reminder.priority.eq(.none)
                terms += [none.ascending(),
                          up ? reminder.priority.ascending() : reminder.priority.descending(),
                          reminder.isFlagged.descending()]
            case .title:
                terms.append(up ? reminder.title.folded.ascending() : reminder.title.folded.descending())
            case .createdAt:
                terms.append(up ? reminder.createdAt.ascending() : reminder.createdAt.descending())
            case .manual:
                terms.append(up ? reminder.position.ascending() : reminder.position.descending())
            }
            // Ties in this store's order of arrival (the builder ends with the key).
            terms.append(reminder.number.ascending(nulls: .last))
            return terms
        }
    }
}

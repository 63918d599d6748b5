import Depot
import Foundation

/// What a new reminder says; also the changes an edit makes (nil leaves a field as it is).
public struct ReminderDraft: Sendable, Equatable {
    /// The title; required for a new reminder.
    public var title: String?
    /// The notes.
    public var notes: String?
    /// The due date: `.some(nil)` clears it, nil leaves it.
    public var dueDate: Date??
    /// The priority.
    public var priority: Priority?
    /// Whether it is flagged.
    public var isFlagged: Bool?
    /// Whether it is done; an edit only (a new reminder starts not done).
    public var isCompleted: Bool?
    /// The list to move it to, by title or id; an edit only.
    public var list: String?
    /// Tags to add, by title; new ones are created.
    public var tags: [String]
    /// Whether ``tags`` are all the reminder's tags after an edit (others are
    /// removed), rather than tags to add.
    public var replacesTags: Bool

    /// A draft; every field left nil is left as it is.
    public init(title: String? = nil, notes: String? = nil, dueDate: Date?? = nil, priority: Priority? = nil,
                isFlagged: Bool? = nil, isCompleted: Bool? = nil, list: String? = nil,
                tags: [String] = [], replacesTags: Bool = false) {
        self.title = title
        self.notes = notes
        self.dueDate = dueDate
        self.priority = priority
        self.isFlagged = isFlagged
        self.isCompleted = isCompleted
        self.list = list
        self.tags = tags
        self.replacesTags = replacesTags
    }
}

/// Which completed reminders "clear completed" removes, as the app offers.
public enum CompletedAge: String, Sendable, CaseIterable, Codable {
    /// Every completed match.
    case any
    /// Due more than 1 month before today.
    case oneMonth
    /// Due more than 6 months before today.
    case sixMonths
    /// Due more than 12 months before today.
    case twelveMonths

    var months: Int? {
        switch self {
        case .any: nil
        case .oneMonth: 1
        case .sixMonths: 6
        case .twelveMonths: 12
        }
    }

    /// The instant before which a due date is old enough: the start of today, that many calendar months back.
    func cutoff(before today: Day, in timeZone: TimeZone) throws -> Date? {
        guard let months else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let cutoff = calendar.date(byAdding: .month, value: -months, to: today.start) else {
            throw RemindersError.invalidInput("cannot count \(months) months back from \(today.start)")
        }
        return cutoff
    }
}

extension RemindersModel {
    // MARK: Views

    /// The reminders of a smart list, with their lists and tags.
    ///
    /// Today: open, due on today's calendar day (overdue ones are not). Scheduled: open
    /// with a due date. Flagged: open and flagged. Completed: done. All: open, by list.
    public func reminders(in view: SmartList) async throws -> [ReminderDetail] {
        try await reminders(in: view, limit: nil).reminders
    }

    /// The first `limit` reminders of a smart list (every one when nil), in
    /// its order, and how many it holds: a screen of a list of 50,000 reads
    /// only what it shows.
    ///
    /// ```swift
    /// let (first, total) = try await model.reminders(in: .all, limit: 20)
    /// print("\(total - first.count) more")
    /// ```
    public func reminders(in view: SmartList, limit: Int?) async throws -> (reminders: [ReminderDetail], total: Int) {
        try Self.validate(limit: limit)
        let day = Day(containing: now(), in: timeZone)
        return try await store.read(logger: logger) { db in try Self.reminders(db, in: view, day: day, limit: limit) }
    }

    static func reminders(_ db: Database, in view: SmartList, day: Day) throws -> [ReminderDetail] {
        try reminders(db, in: view, day: day, limit: nil).reminders
    }

    /// A limit counts reminders: a negative one is refused.
    static func validate(limit: Int?) throws {
        if let limit, limit < 0 { throw RemindersError.invalidInput("a limit counts reminders: 0 or more, not \(limit)") }
    }

    /// The first `limit` reminders of a query (every one when nil), and how
    /// many it holds, counted only when the page may not be all of them.
    static func page(_ db: Database, _ query: Query<Reminder>, limit: Int?) throws -> (reminders: [Reminder], total: Int) {
        guard let limit else { return try db.fetchAll(query).withCount }
        let shown = try db.fetchAll(query.limit(limit))
        return (shown, shown.count < limit ? shown.count : try db.fetchCount(query))
    }

    static func reminders(_ db: Database, in view: SmartList, day: Day, limit: Int?) throws -> (reminders: [ReminderDetail], total: Int) {
        func page(_ query: Query<Reminder>) throws -> ([Reminder], Int) { try Self.page(db, query, limit: limit) }
        let (reminders, total): ([Reminder], Int)
        switch view {
        case .today:
            (reminders, total) = try page(Reminder.where { !$0.isCompleted && $0.dueDate >= day.start && $0.dueDate < day.end }
                .order { [$0.dueDate.ascending(), $0.priority.descending(), $0.number.ascending(nulls: .last)] })
        case .scheduled:
            (reminders, total) = try page(Reminder.where { !$0.isCompleted && $0.dueDate.isNotNull() }
                .order { [$0.dueDate.ascending(), $0.number.ascending(nulls: .last)] })
        case .flagged:
            (reminders, total) = try page(Reminder.where { !$0.isCompleted && $0.isFlagged }
                .order { [$0.dueDate.ascending(), $0.number.ascending(nulls: .last)] })
        case .completed:
            (reminders, total) = try page(Reminder.where { $0.isCompleted }
                .order { [$0.dueDate.descending(), $0.number.ascending(nulls: .last)] })
        case .all:
            let open = Reminder.where { !$0.isCompleted }
                .join(RemindersList.self) { reminder, list in reminder.remindersListID.eq(list.id) }
                .order { reminder, list in [list.position.ascending(), list.number.ascending(nulls: .last), list.id.ascending(), reminder.position.ascending(),
                                                  reminder.number.ascending(nulls: .last)] }
            if let limit {
                reminders = try db.fetchAll(open.limit(limit)).map(\.0)
                total = reminders.count < limit ? reminders.count : try db.fetchCount(open)
            } else {
                (reminders, total) = try db.fetchAll(open).map(\.0).withCount
            }
        }
        return (try Self.details(db, reminders, today: day), total)
    }

    /// Reminders carrying a tag (matched ignoring letter case), open ones unless `includeCompleted`.
    public func reminders(taggedWith title: String, includeCompleted: Bool = false) async throws -> [ReminderDetail] {
        try await reminders(taggedWith: title, includeCompleted: includeCompleted, limit: nil).reminders
    }

    /// The first `limit` reminders carrying a tag (every one when nil), and how many do.
    public func reminders(taggedWith title: String, includeCompleted: Bool = false, limit: Int?) async throws -> (reminders: [ReminderDetail], total: Int) {
        try Self.validate(limit: limit)
        return try await store.read(logger: logger) { db in
            guard let tagID = try Self.findTag(db, title)?.id else { throw RemindersError.tagNotFound(title) }
            var tagged = Reminder.where { $0.id.in(ReminderTag.where { $0.tagID.eq(tagID) }.select { $0.reminderID }) }
            if !includeCompleted { tagged = tagged.where { !$0.isCompleted } }
            let (reminders, total) = try Self.page(db, tagged.order { [$0.isCompleted.ascending(), $0.dueDate.ascending(), $0.number.ascending(nulls: .last)] }, limit: limit)
            return (try Self.details(db, reminders, today: today), total)
        }
    }

    /// The reminder with this number.
    public func reminder(_ number: Int64) async throws -> ReminderDetail {
        try await store.read(logger: logger) { db in
            let reminder = try Self.findReminder(db, number)
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    // MARK: Changes

    /// Adds a reminder at the end of a list, with its tags (created when new).
    @discardableResult
    public func addReminder(_ draft: ReminderDraft, to listNameOrID: String) async throws -> ReminderDetail {
        let title = try Self.validTitle(draft.title ?? "")
        _ = try draft.notes.map { try Self.validText($0, "the notes") }
        let createdAt = now()
        return try await store.write(logger: logger) { db in
            let list = try Self.findList(db, listNameOrID)
            let listID = list.id
            let position = try Self.nextPosition(db, listID: listID)
            let reminder = try Self.insertNumbered(db, Reminder(id: newID(), title: title, notes: draft.notes ?? "", isFlagged: draft.isFlagged ?? false,
                                                  priority: draft.priority ?? .none, dueDate: draft.dueDate ?? nil,
                                                  createdAt: createdAt, position: position, remindersListID: listID))
            try Self.tag(db, reminder.id, draft.tags)
            try Self.reindex(db, [reminder.id])
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    /// Changes the fields a draft sets, moves it to the draft's list, and adds
    /// its tags (or makes them its only tags): all in one write, or nothing.
    @discardableResult
    public func editReminder(_ number: Int64, _ changes: ReminderDraft) async throws -> ReminderDetail {
        let title = try changes.title.map(Self.validTitle)
        _ = try changes.notes.map { try Self.validText($0, "the notes") }
        return try await store.write(logger: logger) { db in
            var reminder = try Self.findReminder(db, number)
            let id = reminder.id
            reminder.title = title ?? reminder.title
            reminder.notes = changes.notes ?? reminder.notes
            if let dueDate = changes.dueDate { reminder.dueDate = dueDate }
            reminder.priority = changes.priority ?? reminder.priority
            reminder.isFlagged = changes.isFlagged ?? reminder.isFlagged
            reminder.isCompleted = changes.isCompleted ?? reminder.isCompleted
            if let list = changes.list {
                // It keeps its place in the manual order: its position stays.
                reminder.remindersListID = try Self.findList(db, list).id
            }
            try db.update(reminder)
            if changes.replacesTags {
                try db.delete(ReminderTag.where { $0.reminderID.eq(id) })
            }
            try Self.tag(db, id, changes.tags)
            try Self.reindex(db, [id])
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    /// Marks a reminder done, or not done.
    @discardableResult
    public func complete(_ number: Int64, _ completed: Bool = true) async throws -> ReminderDetail {
        try await update(number) { $0.isCompleted = completed }
    }

    /// Flags a reminder, or clears its flag.
    @discardableResult
    public func flag(_ number: Int64, _ flagged: Bool = true) async throws -> ReminderDetail {
        try await update(number) { $0.isFlagged = flagged }
    }

    /// Moves a reminder to another list; it keeps its place in the manual order (its position).
    @discardableResult
    public func move(_ number: Int64, to listNameOrID: String) async throws -> ReminderDetail {
        try await store.write(logger: logger) { db in
            var reminder = try Self.findReminder(db, number)
            let list = try Self.findList(db, listNameOrID)
            guard reminder.remindersListID != list.id else { return try Self.details(db, [reminder], today: today)[0] }
            // It keeps its place in the manual order: its position stays.
            reminder.remindersListID = list.id
            try db.update(reminder)
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    /// Deletes a reminder.
    public func deleteReminder(_ number: Int64) async throws {
        try await store.write(logger: logger) { db in
            guard try db.delete(Reminder.where { $0.number.eq(number) }) > 0 else { throw RemindersError.reminderNotFound(number) }
        }
    }

    /// Adds tags to a reminder, creating the ones that do not exist (titles match ignoring letter case).
    @discardableResult
    public func tag(_ number: Int64, with titles: [String]) async throws -> ReminderDetail {
        try await store.write(logger: logger) { db in
            let reminder = try Self.findReminder(db, number)
            try Self.tag(db, reminder.id, titles)
            try Self.reindex(db, [reminder.id])
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    /// Removes tags from a reminder. The tags themselves stay.
    @discardableResult
    public func untag(_ number: Int64, from titles: [String]) async throws -> ReminderDetail {
        try await store.write(logger: logger) { db in
            let reminder = try Self.findReminder(db, number)
            let id = reminder.id
            for title in titles {
                guard let tag = try Self.findTag(db, title) else { throw RemindersError.tagNotFound(title) }
                try db.delete(ReminderTag.where { $0.reminderID.eq(id) && $0.tagID.eq(tag.id) })
            }
            try Self.reindex(db, [id])
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    private func update(_ number: Int64, _ change: @escaping @Sendable (inout Reminder) -> Void) async throws -> ReminderDetail {
        try await store.write(logger: logger) { db in
            var reminder = try Self.findReminder(db, number)
            change(&reminder)
            try db.update(reminder)
            return try Self.details(db, [reminder], today: today)[0]
        }
    }

    static func tag(_ db: Database, _ reminderID: UUID, _ titles: [String]) throws {
        for raw in titles {
            let title = try validTagTitle(raw)
            let tag = try findTag(db, title) ?? db.insert(Tag(title: title, namespace: try tagNamespace(db)))
            // An upsert on the link's key: tagging twice keeps one link.
            try db.upsert(ReminderTag(reminderID: reminderID, tagID: tag.id))
        }
    }
}

extension Array {
    /// The elements and how many there are.
    fileprivate var withCount: ([Element], Int) { (self, count) }
}

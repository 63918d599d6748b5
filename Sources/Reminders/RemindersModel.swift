import Depot
import Logging
import Foundation

/// The reminders app's model: lists, reminders and tags in any Depot store.
///
/// ```swift
/// let model = RemindersModel(store: try Store.sqlite(at: path))
/// try await model.migrate()
/// let groceries = try await model.createList(title: "Groceries")
/// try await model.addReminder(ReminderDraft(title: "Milk", tags: ["errand"]), to: groceries.title)
/// let home = try await model.homeScreen()
/// ```
///
/// Every query gives one answer on SQLite and PostgreSQL, by these rules:
/// - every ORDER BY says where NULLs go and ends with the store's `number`,
///   then the unique `id`;
/// - "today" and "overdue" are calendar days in ``timeZone`` (UTC by default),
///   computed in Swift and bound, never the server's session zone;
/// - letter case folds A-Z only, on both engines (`lower(x)` on SQLite,
///   `lower(x COLLATE "C")` on PostgreSQL; user text is folded the same way in Swift);
/// - search is full-text search with Depot's tokenizer (``Reminder/searchIndex``):
///   words folded for case and diacritics, each a prefix, all of them needed;
/// - booleans are tested as booleans (`NOT "isCompleted"`), counts use
///   `count(*) FILTER (WHERE ...)`, both valid on both engines.
public struct RemindersModel: Sendable {
    /// The store the model reads and writes.
    public let store: Store
    /// The logger of the model's accesses (a request's, on a server); nil: the store's.
    public var logger: Logger?
    /// The zone whose calendar days "today" and "overdue" mean.
    public var timeZone: TimeZone
    /// The clock, so tests can fix "now".
    public var now: @Sendable () -> Date
    /// Makes the key of a new list or reminder: random UUIDs (so tests can
    /// make them predictable; keys made otherwise must never repeat).
    public var newID: @Sendable () -> UUID = { UUID() }

    /// A model over a store; "today" means the calendar day in `timeZone` at `now()`.
    public init(store: Store, timeZone: TimeZone = TimeZone(identifier: "UTC") ?? .current, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.timeZone = timeZone
        self.now = now
    }

    /// The calendar day in ``timeZone`` at ``now``.
    var today: Day { Day(containing: now(), in: timeZone) }

    /// Applies the schema's migrations.
    public func migrate() async throws {
        try await RemindersSchema.migrate(store)
    }

    // MARK: Home

    /// The smart-list counts, the lists with their open counts, and the tags in use.
    public func homeScreen() async throws -> HomeScreen {
        let day = Day(containing: now(), in: timeZone)
        return try await store.read(logger: logger) { db in try Self.homeScreen(db, day: day) }
    }

    static func homeScreen(_ db: Database, day: Day) throws -> HomeScreen {
        let counts = try db.fetchOne(Reminder.all.select {
            (Aggregates.count(where: !$0.isCompleted && $0.dueDate >= day.start && $0.dueDate < day.end),
             Aggregates.count(where: !$0.isCompleted && $0.dueDate.isNotNull()),
             Aggregates.count(where: !$0.isCompleted),
             Aggregates.count(where: !$0.isCompleted && $0.isFlagged),
             Aggregates.count(where: $0.isCompleted),
             Aggregates.count(where: !$0.isCompleted && $0.dueDate < day.start))
        }) ?? (0, 0, 0, 0, 0, 0)
        return HomeScreen(today: counts.0, scheduled: counts.1, all: counts.2, flagged: counts.3,
                          completed: counts.4, overdue: counts.5,
                          lists: try Self.listSummaries(db), tags: try Self.tagsInUse(db))
    }

    /// The lists in order, each with its open reminders counted and whether it has a cover image.
    static func listSummaries(_ db: Database) throws -> [ListSummary] {
        let lists = try db.fetchAll(RemindersList.order { [$0.position, $0.number, $0.id] })
        let open = try db.fetchAll(Reminder.where { !$0.isCompleted }
            .select { ($0.remindersListID, Aggregates.countAll()) }.group { $0.remindersListID })
        let counts = Dictionary(open, uniquingKeysWith: { a, _ in a })
        let covered = Set(try db.fetchAll(ListCoverImage.all.select { $0.remindersListID }))
        return lists.map { list in
            ListSummary(list: list, incompleteCount: counts[list.id] ?? 0, hasCoverImage: covered.contains(list.id))
        }
    }

    /// The tags at least one reminder carries, by title ignoring A–Z case, with their counts.
    static func tagsInUse(_ db: Database) throws -> [TagSummary] {
        let uses = Dictionary(try db.fetchAll(ReminderTag.all.select { ($0.tagID, Aggregates.countAll()) }.group { $0.tagID }),
                              uniquingKeysWith: { a, _ in a })
        let open = Dictionary(try db.fetchAll(ReminderTag.where { link in Reminder.exists { $0.id.eq(link.reminderID) && !$0.isCompleted } }
            .select { ($0.tagID, Aggregates.countAll()) }.group { $0.tagID }), uniquingKeysWith: { a, _ in a })
        let tags = try db.fetchAll(Tag.where { $0.id.in(ReminderTag.all.select { $0.tagID }) }.order { [$0.title.folded, $0.id] })
        return tags.map { tag in
            TagSummary(tag: tag, reminderCount: uses[tag.id] ?? 0, openCount: open[tag.id] ?? 0)
        }
    }

    // MARK: Lists

    /// Every list, in order.
    public func lists() async throws -> [ListSummary] {
        try await store.read(logger: logger) { db in try Self.listSummaries(db) }
    }

    /// The list with this number (or key), or whose title matches ignoring letter case.
    public func list(named nameOrID: String) async throws -> RemindersList {
        try await store.read(logger: logger) { db in try Self.findList(db, nameOrID) }
    }

    static func findList(_ db: Database, _ nameOrID: String) throws -> RemindersList {
        if let number = Int64(nameOrID), let list = try db.fetchOne(RemindersList.where { $0.number.eq(number) }) { return list }
        if let id = UUID(uuidString: nameOrID), let list = try db.find(RemindersList.self, id: id) { return list }
        let matches = try listsTitled(db, nameOrID)
        guard let first = matches.first else { throw RemindersError.listNotFound(nameOrID) }
        guard matches.count == 1 else { throw RemindersError.ambiguousList(nameOrID, matches: matches.count) }
        return first
    }

    /// A list's reminders in its stored sort; pass `sort`, `ascending` or
    /// `showCompleted` to change (and store) the list's choice.
    public func reminders(in nameOrID: String, sort: ReminderSort? = nil, ascending: Bool? = nil, showCompleted: Bool? = nil) async throws -> (list: RemindersList, reminders: [ReminderDetail]) {
        let screen = try await reminders(in: nameOrID, sort: sort, ascending: ascending, showCompleted: showCompleted, limit: nil)
        return (screen.list, screen.reminders)
    }

    /// The first `limit` of a list's reminders (every one when nil) in its
    /// stored sort, and how many it shows in all; `sort`, `ascending` and
    /// `showCompleted` change (and store) the list's choice.
    public func reminders(in nameOrID: String, sort: ReminderSort? = nil, ascending: Bool? = nil, showCompleted: Bool? = nil,
                          limit: Int?) async throws -> ListScreen {
        try Self.validate(limit: limit)
        let changes = sort != nil || ascending != nil || showCompleted != nil
        let body: @Sendable (Database) throws -> ListScreen = { db in
            var list = try Self.findList(db, nameOrID)
            if changes {
                list.sort = sort ?? list.sort
                list.sortAscending = ascending ?? list.sortAscending
                list.showCompleted = showCompleted ?? list.showCompleted
                try db.update(list)
            }
            return try Self.screen(db, of: list, today: today, limit: limit)
        }
        // Only a changed choice needs a write.
        return changes ? try await store.write(logger: logger, body) : try await store.read(logger: logger, body)
    }

    /// A list's reminders in its stored sort, by the rules of ``ReminderOrder``.
    static func screen(_ db: Database, of list: RemindersList, today: Day, limit: Int?) throws -> ListScreen {
        var query = Reminder.where { $0.remindersListID.eq(list.id) }
        if !list.showCompleted { query = query.where { !$0.isCompleted } }
        let order = ReminderOrder(sort: list.sort, ascending: list.sortAscending, showCompleted: list.showCompleted)
        let (reminders, total) = try page(db, ordered(query, order), limit: limit)
        return ListScreen(list: list, reminders: try details(db, reminders, today: today), total: total)
    }

    /// Creates a list at the end of the lists; a title another list has (ignoring letter case) is refused.
    @discardableResult
    public func createList(title: String, color: Int64 = 0x4A99_EFFF) async throws -> RemindersList {
        let title = try Self.validTitle(title)
        try Self.validate(color: color)
        return try await store.write(logger: logger) { db in
            try Self.requireUnusedTitle(db, title, except: nil)
            let position = try db.fetchOne(RemindersList.all.select { $0.position.max() + 1 ?? 0 }) ?? 0
            return try Self.insertNumbered(db, RemindersList(id: newID(), title: title, color: color, position: position))
        }
    }

    /// The first list, or a new list titled `title` when there is none, decided
    /// in one write: processes adding to an empty database at once agree on one list.
    public func firstList(creatingIfNone title: String = defaultListTitle) async throws -> RemindersList {
        let title = try Self.validTitle(title)
        return try await store.write(logger: logger) { db in
            if let first = try db.fetchOne(RemindersList.order { [$0.position.ascending(), $0.number.ascending(), $0.id.ascending()] }.limit(1)) { return first }
            return try Self.insertNumbered(db, RemindersList(id: newID(), title: title, color: 0x4A99_EFFF, position: 0))
        }
    }

    /// Two lists never share a title (ignoring A–Z case, however its characters
    /// are composed): a title names one list.
    /// (Two devices may each create a list of one title offline: after a sync
    /// both stay, and naming either by its title is ambiguous; its number names it.)
    static func requireUnusedTitle(_ db: Database, _ title: String, except id: UUID?) throws {
        // The first: after a sync, two lists may share a title already.
        if let other = try listsTitled(db, title).first(where: { $0.id != id }) {
            throw RemindersError.conflict("a list named \"\(other.title)\" exists already; choose another title")
        }
    }

    /// The lists a title names, in their order: the same text ignoring A–Z
    /// case, and written with the same characters however they are composed
    /// ("Café" with é as one character or as e and a combining accent, which
    /// look alike), as Swift compares strings. The titles are kept as typed.
    static func listsTitled(_ db: Database, _ title: String) throws -> [RemindersList] {
        let folded = foldedASCII(title)
        return try db.fetchAll(RemindersList.order { [$0.position, $0.number, $0.id] }).filter { foldedASCII($0.title) == folded }
    }

    /// Renames a list; another list's title (ignoring letter case) is refused.
    @discardableResult
    public func renameList(_ nameOrID: String, to title: String) async throws -> RemindersList {
        let title = try Self.validTitle(title)
        return try await store.write(logger: logger) { db in
            var list = try Self.findList(db, nameOrID)
            try Self.requireUnusedTitle(db, title, except: list.id)
            list.title = title
            try db.update(list)
            return list
        }
    }

    /// Gives a list a new colour, 0xRRGGBBAA.
    @discardableResult
    public func recolorList(_ nameOrID: String, to color: Int64) async throws -> RemindersList {
        try Self.validate(color: color)
        return try await store.write(logger: logger) { db in
            var list = try Self.findList(db, nameOrID)
            list.color = color
            try db.update(list)
            return list
        }
    }

    /// Moves a list to a place among the lists (0 is first); a place past the
    /// last is refused with an `invalidInput` error, not taken as the last.
    public func moveList(_ nameOrID: String, to position: Int) async throws {
        try await store.write(logger: logger) { db in
            let list = try Self.findList(db, nameOrID)
            var ids = try Self.listIDsInOrder(db)
            ids.removeAll { $0 == list.id }
            // A place past the last is refused, not taken as the last: the caller meant another list count.
            guard (0...ids.count).contains(position) else {
                throw RemindersError.invalidInput("there \(ids.count == 0 ? "is 1 list" : "are \(ids.count + 1) lists"): a list's place is from 1 to \(ids.count + 1), not \(position + 1)")
            }
            ids.insert(list.id, at: position)
            try Self.renumberLists(db, ids)
        }
    }

    /// How many reminders a list holds, done or not: what deleting it removes.
    public func reminderCount(inList nameOrID: String) async throws -> Int {
        try await store.read(logger: logger) { db in
            let id = try Self.findList(db, nameOrID).id
            return try db.fetchCount(Reminder.where { $0.remindersListID.eq(id) })
        }
    }

    /// The list a database always has: deleting the last list leaves a new,
    /// empty one of this title, and adding a reminder to a database with no
    /// list makes it.
    public static let defaultListTitle = "Reminders"

    /// Deletes a list and its reminders, and returns it. Deleting the last list
    /// leaves a new, empty list titled ``defaultListTitle``, as the app always
    /// has one: returned as `madeInItsPlace`, so the caller can say so.
    @discardableResult
    public func deleteList(_ nameOrID: String) async throws -> (deleted: RemindersList, madeInItsPlace: RemindersList?) {
        try await store.write(logger: logger) { db in
            let list = try Self.findList(db, nameOrID)
            try db.delete(list)
            let remaining = try Self.listIDsInOrder(db)
            if remaining.isEmpty {
                let made = try Self.insertNumbered(db, RemindersList(id: newID(), title: Self.defaultListTitle, color: 0x4A99_EFFF, position: 0))
                return (list, made)
            }
            try Self.renumberLists(db, remaining)
            return (list, nil)
        }
    }

    static func renumberLists(_ db: Database, _ ids: [UUID]) throws {
        for (position, id) in ids.enumerated() {
            // Only the lists whose place changed: an unchanged list is not written (nor synced).
            try db.update(RemindersList.where { $0.id.eq(id) && $0.position.neq(position) }) { [$0.position.to(position)] }
        }
    }

    /// The lists' ids, by position.
    static func listIDsInOrder(_ db: Database) throws -> [UUID] {
        try db.fetchAll(RemindersList.order { [$0.position, $0.number, $0.id] }.select { $0.id })
    }

    /// Inserts a list and reads it back with the number the store gave it.
    static func insertNumbered(_ db: Database, _ list: RemindersList) throws -> RemindersList {
        try db.insertWithoutReturning(list)
        guard let stored = try db.find(RemindersList.self, id: list.id) else { throw RemindersError.listNotFound(list.title) }
        return stored
    }

    /// Inserts a reminder and reads it back with the number the store gave it.
    static func insertNumbered(_ db: Database, _ reminder: Reminder) throws -> Reminder {
        try db.insertWithoutReturning(reminder)
        guard let stored = try db.find(Reminder.self, id: reminder.id) else { throw RemindersError.invalidInput("the new reminder was not stored") }
        return stored
    }

    /// The reminder with this number.
    static func findReminder(_ db: Database, _ number: Int64) throws -> Reminder {
        guard let reminder = try db.fetchOne(Reminder.where { $0.number.eq(number) }) else { throw RemindersError.reminderNotFound(number) }
        return reminder
    }

    static func validTitle(_ title: String) throws -> String {
        let trimmed = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw RemindersError.invalidInput("a title cannot be empty") }
        return try validText(trimmed, "a title")
    }

    /// Text every engine stores alike: no U+0000, which PostgreSQL refuses and
    /// SQLite keeps, so a reminder written on a device could never sync to a
    /// PostgreSQL server.
    static func validText(_ text: String, _ field: String) throws -> String {
        if text.utf8.contains(0) {
            throw RemindersError.invalidInput("\(field) cannot hold the character U+0000 (NUL): not every database stores it")
        }
        return text
    }

    static func validate(color: Int64) throws {
        guard (0...0xFFFF_FFFF).contains(color) else {
            throw RemindersError.invalidInput("a colour is 0xRRGGBBAA, between 0x00000000 and 0xFFFFFFFF")
        }
    }

    /// Each reminder with its list's title and colour, its tags, and what a row
    /// draws (past due before `today`, a notes preview), in one query per kind.
    /// The titles of each reminder's tags, ignoring case in order.
    static func tagTitles(_ db: Database, of ids: [UUID]) throws -> [UUID: [String]] {
        var tags: [UUID: [String]] = [:]
        // Chunks keep every IN list well below each engine's bound-value limit.
        for chunk in stride(from: 0, to: ids.count, by: 1000).map({ Array(ids[$0..<min($0 + 1000, ids.count)]) }) {
            let links = try db.fetchAll(ReminderTag.where { $0.reminderID.in(chunk) })
            let titles = try db.fetchAll(Tag.where { $0.id.in(Set(links.map(\.tagID))) }.order { [$0.title.folded, $0.id] })
            var linked: [UUID: Set<UUID>] = [:]
            for link in links { linked[link.tagID, default: []].insert(link.reminderID) }
            for tag in titles {
                for reminderID in (linked[tag.id] ?? []).sorted() { tags[reminderID, default: []].append(tag.title) }
            }
        }
        return tags
    }

    static func details(_ db: Database, _ reminders: [Reminder], today: Day) throws -> [ReminderDetail] {
        guard !reminders.isEmpty else { return [] }
        let ids = reminders.map(\.id)
        let listIDs = Array(Set(reminders.map(\.remindersListID))).sorted()
        let lists = try db.fetchAll(RemindersList.self, ids: listIDs)
        let byID = Dictionary(lists.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let tags = try tagTitles(db, of: ids)
        return reminders.map { reminder in
            let list = byID[reminder.remindersListID]
            return ReminderDetail(reminder: reminder, listTitle: list?.title ?? "", listColor: list?.color ?? 0,
                                  tags: tags[reminder.id] ?? [], today: today)
        }
    }
}

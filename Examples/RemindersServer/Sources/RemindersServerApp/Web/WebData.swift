import Depot
import DepotSync
import Foundation
import Reminders

/// What one account sees and changes through the web app: the lists it owns
/// and those shared with it (a device's view, ``SyncServer/visibleKeys(of:to:)``),
/// written through ``SyncServer/edit(_:account:)`` so that every device of the
/// account, and of the accounts a list is shared with, pulls each change.
struct WebData: Sendable {
    let server: SyncServer
    let account: String

    /// A list on the home page.
    struct ListSummary: Sendable, Equatable {
        var list: RemindersList
        var open: Int
    }

    /// A list's page: the list and a page of its reminders (open ones first,
    /// each in the list's order), with the titles of the tags each carries.
    struct ListPage: Sendable, Equatable {
        var list: RemindersList
        var reminders: [Reminder]
        /// How many reminders the list holds, on every page.
        var total: Int
        /// Where this page starts among them.
        var offset: Int
        var tags: [UUID: [String]]
    }

    /// The most reminders one page shows; the rest are on the next pages.
    static let pageSize = 300

    /// What a live page shows, compared to tell it when it changed (a list
    /// gone or unshared is nil: the page then shows that).
    enum Shown: Sendable, Equatable {
        case home([ListSummary], [SmartList: Int], [TagSummary])
        case list(ListPage?)
        case smart([Found], total: Int)
        case tag(Tag?, [Found])
    }

    /// What a live page shows, read in one access.
    static func shown(_ db: Database, _ account: String, _ page: WebPage) throws -> Shown {
        switch page {
        case .home:
            // The lists the account sees, read once for the three parts of the page.
            let lists = try visibleLists(db, account)
            return .home(try home(db, account, lists: lists), try smartCounts(db, account, lists: lists), try tags(db, account, lists: lists))
        // A list gone or unshared: the page says so, once.
        case .list(let id, let offset): return .list(try? list(db, account, id, offset: offset))
        case .smart(let smart):
            let (found, total) = try self.smart(db, account, smart)
            return .smart(found, total: total)
        case .tag(let id):
            guard let (tag, found) = try? tagged(db, account, id) else { return .tag(nil, []) }
            return .tag(tag, found)
        }
    }

    static let notFound = ServerError(status: .notFound, message: "no such list or reminder in this account", cause: "not found")

    /// The account's lists, in their order, with their open reminders counted.
    func home() async throws -> [ListSummary] {
        try await server.store.read { db in try Self.home(db, account) }
    }

    static func home(_ db: Database, _ account: String, lists visible: [UUID]? = nil) throws -> [ListSummary] {
        let ids = try visible ?? visibleLists(db, account)
        guard !ids.isEmpty else { return [] }
        let lists = try db.fetchAll(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") IN \(list: ids)")
        struct Count: Decodable { var list: UUID; var open: Int }
        let counts = try db.fetchAll(Count.self, """
            SELECT \(ident: "remindersListID") AS "list", count(*) AS "open" FROM \(ident: Reminder.tableName)
            WHERE \(ident: "remindersListID") IN \(list: ids) AND \(ident: "isCompleted") = \(false) GROUP BY \(ident: "remindersListID")
            """)
        let open = Dictionary(counts.map { ($0.list, $0.open) }, uniquingKeysWith: +)
        return lists.sorted { ($0.position, $0.title, $0.id.uuidString) < ($1.position, $1.title, $1.id.uuidString) }
            .map { ListSummary(list: $0, open: open[$0.id] ?? 0) }
    }

    /// A list the account sees, with a page of its reminders; 404 for any other.
    func list(_ id: UUID, offset: Int = 0) async throws -> ListPage {
        try await server.store.read { db in try Self.list(db, account, id, offset: offset) }
    }

    static func list(_ db: Database, _ account: String, _ id: UUID, offset: Int = 0) throws -> ListPage {
        guard try SyncServer.isVisible(db, RemindersList.tableName, key: key(id), to: account),
              let list = try db.fetchOne(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") = \(id)") else {
            throw notFound
        }
        let total = try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") = \(id)") ?? 0
        let reminders = try db.fetchAll(Reminder.self, """
            SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") = \(id)
            ORDER BY \(ident: "isCompleted"), \(ident: "position"), \(ident: "createdAt"), \(ident: "id") LIMIT \(pageSize) OFFSET \(max(0, offset))
            """)
        return ListPage(list: list, reminders: reminders, total: total, offset: max(0, offset), tags: try tagTitles(db, account, of: reminders.map(\.id)))
    }

    /// The titles of the tags the account sees on each of these reminders, by title ignoring case.
    static func tagTitles(_ db: Database, _ account: String, of reminders: [UUID]) throws -> [UUID: [String]] {
        guard !reminders.isEmpty else { return [:] }
        struct Link: Decodable { var reminder: UUID; var tag: UUID; var title: String }
        let links = try db.fetchAll(Link.self, """
            SELECT l.\(ident: "reminderID") AS "reminder", t.\(ident: "id") AS "tag", t.\(ident: "title") AS "title"
            FROM \(ident: ReminderTag.tableName) l JOIN \(ident: Tag.tableName) t ON t.\(ident: "id") = l.\(ident: "tagID")
            WHERE l.\(ident: "reminderID") IN \(list: reminders)
            """)
        guard !links.isEmpty else { return [:] }
        let visible = Set(try SyncServer.visibleKeys(db, of: Tag.tableName, to: account))
        var titles: [UUID: [String]] = [:]
        for link in links where visible.contains(key(link.tag)) { titles[link.reminder, default: []].append(link.title) }
        return titles.mapValues { $0.sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) } }
    }

    /// A reminder the account sees; 404 for any other.
    func reminder(_ id: UUID) async throws -> Reminder {
        try await server.store.read { db in try Self.reminder(db, account, id) }
    }

    /// A reminder of a list the account sees; 404 for any other.
    ///
    /// The list decides, not the sync server's log: a reminder another writer
    /// stored in the list without the sync server (the `reminders` command on
    /// the server's database) is the list's too. The web app's first edit of
    /// it logs it, and the account's devices pull it from then on.
    static func reminder(_ db: Database, _ account: String, _ id: UUID) throws -> Reminder {
        guard let reminder = try db.fetchOne(Reminder.self, "SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "id") = \(id)"),
              try SyncServer.isVisible(db, RemindersList.tableName, key: key(reminder.remindersListID), to: account) else {
            throw notFound
        }
        return reminder
    }

    /// A new list, last on the home page.
    @discardableResult
    func createList(title: String, color: String? = nil) async throws -> RemindersList {
        let title = try Self.title(title, of: "a list")
        let color = try color.map(Self.color) ?? Self.defaultColor
        let position = try Self.after(try await home().map(\.list.position).max())
        let list = RemindersList(title: title, color: color, position: position)
        try await edit([.save(list)])
        return list
    }

    /// A new reminder, last in its list.
    @discardableResult
    func addReminder(title: String, to listID: UUID) async throws -> Reminder {
        let title = try Self.title(title, of: "a reminder")
        let position = try await server.store.read { db in
            try Self.mustSee(db, RemindersList.tableName, listID, account)
            let last = try db.fetchOne(Int?.self, """
                SELECT max(\(ident: "position")) FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") = \(listID)
                """) ?? nil
            return try Self.after(last)
        }
        let reminder = Reminder(title: title, position: position, remindersListID: listID)
        try await edit([.save(reminder)])
        return reminder
    }

    /// Marks a reminder done, or not done.
    func setCompleted(_ id: UUID, _ completed: Bool) async throws {
        var reminder = try await reminder(id)
        guard reminder.isCompleted != completed else { return }
        reminder.isCompleted = completed
        try await edit([.save(reminder)])
    }

    /// Deletes a reminder (its tags' links with it).
    func deleteReminder(_ id: UUID) async throws {
        let (reminder, logged) = try await server.store.read { db in
            (try Self.reminder(db, account, id), try SyncServer.isVisible(db, Reminder.tableName, key: Self.key(id), to: account))
        }
        // The sync server deletes what its log holds: a reminder another writer stored is logged first, in the same edit.
        try await edit((logged ? [] : [.save(reminder)]) + [.delete(Reminder.tableName, key: Self.key(id))])
    }

    func edit(_ edits: [SyncEdit]) async throws {
        do {
            try await server.edit(edits, account: account)
        } catch is SyncAccessDenied {
            // Unshared between the read and the write: as if it were never there.
            throw Self.notFound
        }
    }

    /// A title as typed, without the spaces around it: 1 to 500 characters.
    static func title(_ text: String, of what: String) throws -> String {
        let title = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty else { throw ServerError(status: .unprocessableContent, message: "\(what) needs a title", cause: "no title") }
        guard title.count <= 500 else { throw ServerError(status: .unprocessableContent, message: "a title is at most 500 characters", cause: "long title") }
        return title
    }

    /// A row's key as the sync server keeps it.
    static func key(_ id: UUID) -> String { id.uuidString.lowercased() }

    /// Nothing, when the account sees the row; 404 otherwise.
    static func mustSee(_ db: Database, _ table: String, _ id: UUID, _ account: String) throws {
        guard try SyncServer.isVisible(db, table, key: key(id), to: account) else { throw notFound }
    }
}

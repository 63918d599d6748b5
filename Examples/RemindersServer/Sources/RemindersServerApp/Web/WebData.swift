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

    /// A list's page: the list and its reminders, open ones first, each in the list's order.
    struct ListPage: Sendable, Equatable {
        var list: RemindersList
        var reminders: [Reminder]
    }

    /// What a live page shows, compared to tell it when it changed (a list
    /// gone or unshared is nil: the page then shows that).
    enum Shown: Sendable, Equatable {
        case home([ListSummary], [SmartList: Int])
        case list(ListPage?)
        case smart([Found])
    }

    static let notFound = ServerError(status: .notFound, message: "no such list or reminder in this account", cause: "not found")

    /// The account's lists, in their order, with their open reminders counted.
    func home() async throws -> [ListSummary] {
        try await server.store.read { db in try Self.home(db, account) }
    }

    static func home(_ db: Database, _ account: String) throws -> [ListSummary] {
        let ids = try SyncServer.visibleKeys(db, of: RemindersList.tableName, to: account).compactMap(UUID.init(uuidString:))
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

    /// A list the account sees, with its reminders; 404 for any other.
    func list(_ id: UUID) async throws -> ListPage {
        try await server.store.read { db in try Self.list(db, account, id) }
    }

    static func list(_ db: Database, _ account: String, _ id: UUID) throws -> ListPage {
        guard try SyncServer.isVisible(db, RemindersList.tableName, key: key(id), to: account),
              let list = try db.fetchOne(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") = \(id)") else {
            throw notFound
        }
        let reminders = try db.fetchAll(Reminder.self, "SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") = \(id)")
            .sorted { (!$0.isCompleted ? 0 : 1, $0.position, $0.createdAt, $0.id.uuidString) < (!$1.isCompleted ? 0 : 1, $1.position, $1.createdAt, $1.id.uuidString) }
        return ListPage(list: list, reminders: reminders)
    }

    /// A reminder the account sees; 404 for any other.
    func reminder(_ id: UUID) async throws -> Reminder {
        try await server.store.read { db in
            guard try SyncServer.isVisible(db, Reminder.tableName, key: Self.key(id), to: account),
                  let reminder = try db.fetchOne(Reminder.self, "SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "id") = \(id)") else {
                throw Self.notFound
            }
            return reminder
        }
    }

    /// A new list, last on the home page.
    @discardableResult
    func createList(title: String) async throws -> RemindersList {
        let title = try Self.title(title, of: "a list")
        let position = try await home().map(\.list.position).max().map { $0 + 1 } ?? 0
        let list = RemindersList(title: title, position: position)
        try await edit([.save(list)])
        return list
    }

    /// A new reminder, last in its list.
    @discardableResult
    func addReminder(title: String, to listID: UUID) async throws -> Reminder {
        let title = try Self.title(title, of: "a reminder")
        let page = try await list(listID)
        let reminder = Reminder(title: title, position: (page.reminders.map(\.position).max() ?? -1) + 1, remindersListID: listID)
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
        _ = try await reminder(id)
        try await edit([.delete(Reminder.tableName, key: Self.key(id))])
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
}

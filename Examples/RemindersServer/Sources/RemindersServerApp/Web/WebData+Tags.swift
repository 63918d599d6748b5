import Depot
import DepotSync
import Foundation
import Reminders

extension WebData {
    /// A tag on the home page: how many reminders of the account's lists carry it.
    struct TagSummary: Sendable, Equatable {
        var tag: Tag
        var count: Int
    }

    /// The namespace of the account's tag keys: its id, as a device of the
    /// account keys them (``SyncAccount``), so "#errand" typed on a page and
    /// on a phone is one tag.
    var tagNamespace: UUID { UUID(uuidString: account) ?? Tag.modelNamespace }

    /// The tags the account sees, by title ignoring case, each with how many
    /// of the account's reminders carry it.
    static func tags(_ db: Database, _ account: String, lists visible: [UUID]? = nil) throws -> [TagSummary] {
        let ids = try SyncServer.visibleKeys(db, of: Tag.tableName, to: account).compactMap(UUID.init(uuidString:))
        guard !ids.isEmpty else { return [] }
        let lists = try visible ?? visibleLists(db, account)
        let tags = try db.fetchAll(Tag.self, "SELECT * FROM \(ident: Tag.tableName) WHERE \(ident: "id") IN \(list: ids)")
        struct Count: Decodable { var tag: UUID; var count: Int }
        let counts = lists.isEmpty ? [] : try db.fetchAll(Count.self, """
            SELECT t.\(ident: "tagID") AS "tag", count(*) AS "count" FROM \(ident: ReminderTag.tableName) t
            JOIN \(ident: Reminder.tableName) r ON r.\(ident: "id") = t.\(ident: "reminderID")
            WHERE t.\(ident: "tagID") IN \(list: ids) AND r.\(ident: "remindersListID") IN \(list: lists)
            GROUP BY t.\(ident: "tagID")
            """)
        let used = Dictionary(counts.map { ($0.tag, $0.count) }, uniquingKeysWith: +)
        return tags.map { TagSummary(tag: $0, count: used[$0.id] ?? 0) }
            .sorted { ($0.tag.title.lowercased(), $0.tag.id.uuidString) < ($1.tag.title.lowercased(), $1.tag.id.uuidString) }
    }

    /// The tags of a reminder the account sees, by title ignoring case (a
    /// tag of another account, on a reminder of a list shared with this
    /// one, is not this account's to see, as on its devices).
    static func tags(_ db: Database, _ account: String, of reminder: UUID) throws -> [Tag] {
        let linked = try db.fetchAll(UUID.self, """
            SELECT \(ident: "tagID") FROM \(ident: ReminderTag.tableName) WHERE \(ident: "reminderID") = \(reminder)
            """)
        guard !linked.isEmpty else { return [] }
        let visible = Set(try SyncServer.visibleKeys(db, of: Tag.tableName, to: account))
        let ids = linked.filter { visible.contains(key($0)) }
        guard !ids.isEmpty else { return [] }
        return try db.fetchAll(Tag.self, "SELECT * FROM \(ident: Tag.tableName) WHERE \(ident: "id") IN \(list: ids)")
            .sorted { ($0.title.lowercased(), $0.id.uuidString) < ($1.title.lowercased(), $1.id.uuidString) }
    }

    /// A tag's page: the tag and the account's reminders that carry it; 404 for a tag it does not see.
    static func tagged(_ db: Database, _ account: String, _ id: UUID) throws -> (Tag, [Found]) {
        guard try SyncServer.isVisible(db, Tag.tableName, key: key(id), to: account),
              let tag = try db.fetchOne(Tag.self, "SELECT * FROM \(ident: Tag.tableName) WHERE \(ident: "id") = \(id)") else {
            throw notFound
        }
        let lists = try listsByID(db, account)
        guard !lists.isEmpty else { return (tag, []) }
        let reminders = try db.fetchAll(Reminder.self, """
            SELECT r.* FROM \(ident: Reminder.tableName) r JOIN \(ident: ReminderTag.tableName) t ON t.\(ident: "reminderID") = r.\(ident: "id")
            WHERE t.\(ident: "tagID") = \(id) AND r.\(ident: "remindersListID") IN \(list: Array(lists.keys))
            ORDER BY r.\(ident: "isCompleted"), r.\(ident: "position"), r.\(ident: "id") LIMIT \(pageSize)
            """)
        return (tag, reminders.compactMap { reminder in lists[reminder.remindersListID].map { Found(reminder: reminder, list: $0) } })
    }

    /// Tag titles as a person types them in one field: separated by commas or
    /// spaces, each with or without its `#`; one per tag key (letter case
    /// folded), in the order typed. At most 50, each at most 100 characters.
    static func tagTitles(_ text: String) throws -> [String] {
        var titles: [String] = [], seen = Set<UUID>()
        for word in text.split(whereSeparator: { $0 == "," || $0.isWhitespace }) {
            let title = word.hasPrefix("#") ? String(word.dropFirst()) : String(word)
            guard !title.isEmpty else { continue }
            guard title.count <= 100 else { throw ReminderForm.invalid("a tag is at most 100 characters") }
            if seen.insert(Tag.id(forTitle: title)).inserted { titles.append(title) }
        }
        guard titles.count <= 50 else { throw ReminderForm.invalid("a reminder carries at most 50 tags") }
        return titles
    }

    /// The edits that make a reminder carry exactly these tags: new tags
    /// created in the account's namespace, links added and removed. Tags of
    /// other accounts on the reminder (a shared list) are left as they are.
    func tagEdits(_ db: Database, reminder: UUID, titles: [String]) throws -> [SyncEdit] {
        let wanted = titles.map { Tag(title: $0, namespace: tagNamespace) }
        let visible = Set(try SyncServer.visibleKeys(db, of: Tag.tableName, to: account))
        let linked = Set(try db.fetchAll(UUID.self, """
            SELECT \(ident: "tagID") FROM \(ident: ReminderTag.tableName) WHERE \(ident: "reminderID") = \(reminder)
            """))
        var edits: [SyncEdit] = []
        for tag in wanted where !visible.contains(Self.key(tag.id)) { edits.append(.save(tag)) }
        for tag in wanted where !linked.contains(tag.id) { edits.append(.save(ReminderTag(reminderID: reminder, tagID: tag.id))) }
        let keep = Set(wanted.map(\.id))
        for id in linked.sorted(by: { $0.uuidString < $1.uuidString }) where visible.contains(Self.key(id)) && !keep.contains(id) {
            edits.append(.delete(ReminderTag.tableName, key: Self.key(reminder) + "|" + Self.key(id)))
        }
        return edits
    }

    /// The ids of the lists the account sees.
    static func visibleLists(_ db: Database, _ account: String) throws -> [UUID] {
        try SyncServer.visibleKeys(db, of: RemindersList.tableName, to: account).compactMap(UUID.init(uuidString:))
    }

    /// The lists the account sees, by id.
    static func listsByID(_ db: Database, _ account: String) throws -> [UUID: RemindersList] {
        let ids = try visibleLists(db, account)
        guard !ids.isEmpty else { return [:] }
        return Dictionary(try db.fetchAll(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") IN \(list: ids)")
            .map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

import Depot
import Foundation

/// What the tag picker offers: the most used tags first, then every other.
public struct TagPicker: Codable, Equatable, Sendable {
    /// The three tags most reminders carry (ties by title ignoring letter case, then id).
    public var mostUsed: [Tag]
    /// Every other tag, by title ignoring letter case, then id.
    public var others: [Tag]
}

extension RemindersModel {
    // MARK: Tags

    /// The tags section: the tags at least one reminder carries, each with how
    /// many reminders and how many open reminders carry it, by title ignoring letter case.
    public func tagsInUse() async throws -> [TagSummary] {
        try await store.read(logger: logger) { db in try Self.tagsInUse(db) }
    }

    /// The tag picker: the three most used tags, then every other tag by title.
    public func tagPicker() async throws -> TagPicker {
        try await store.read(logger: logger) { db in
            struct Used { var id: UUID; var title: String; var uses: Int }
            let uses = Dictionary(try db.fetchAll(ReminderTag.all.select { ($0.tagID, Aggregates.countAll()) }.group { $0.tagID }),
                                  uniquingKeysWith: { a, _ in a })
            let tags = try db.fetchAll(Tag.all).map { tag in Used(id: tag.id, title: tag.title, uses: uses[tag.id] ?? 0) }
                .sorted { a, b in
                    if a.uses != b.uses { return a.uses > b.uses }
                    let (x, y) = (foldedASCII(a.title), foldedASCII(b.title))
                    return x == y ? a.id < b.id : x.utf8.lexicographicallyPrecedes(y.utf8)
                }
            // Only tags in use can be "most used".
            let mostUsed = Array(tags.prefix { $0.uses > 0 }.prefix(3))
            let chosen = Set(mostUsed.map(\.id))
            let others = tags.filter { !chosen.contains($0.id) }.sorted { a, b in
                let (x, y) = (foldedASCII(a.title), foldedASCII(b.title))
                return x == y ? a.id < b.id : x.utf8.lexicographicallyPrecedes(y.utf8)
            }
            return TagPicker(mostUsed: mostUsed.map { Tag(id: $0.id, title: $0.title) },
                             others: others.map { Tag(id: $0.id, title: $0.title) })
        }
    }

    /// The tag with this title, ignoring letter case (A–Z), and a leading `#`; nil when there is none.
    public func tag(named title: String) async throws -> Tag? {
        try await store.read(logger: logger) { db in try Self.findTag(db, title) }
    }

    /// Creates a tag; a tag of that title (ignoring letter case) must not exist.
    @discardableResult
    public func createTag(_ title: String) async throws -> Tag {
        try await store.write(logger: logger) { db in
            let title = try Self.validTagTitle(title)
            if try Self.findTag(db, title) != nil { throw RemindersError.conflict("a tag named \"\(title)\" exists already") }
            return try db.insert(Tag(title: title, namespace: try Self.tagNamespace(db)))
        }
    }

    /// Renames a tag. Another tag with the new title (ignoring letter case) is refused;
    /// the same tag with other letter case is a rename.
    ///
    /// A tag's key is made from its title, so a new title is a new tag: the
    /// reminders move to it and the old one is deleted, in one write. (A
    /// device that tagged a reminder with the old title offline meanwhile
    /// loses that tag at the next sync: the old tag is gone.)
    @discardableResult
    public func renameTag(_ title: String, to newTitle: String) async throws -> Tag {
        try await store.write(logger: logger) { db in
            guard var tag = try Self.findTag(db, title) else { throw RemindersError.tagNotFound(title) }
            let newTitle = try Self.validTagTitle(newTitle)
            let tagged = try Self.reminderIDs(db, taggedWith: tag.id)
            if foldedASCII(newTitle) == foldedASCII(tag.title) {
                tag.title = newTitle
                try db.update(tag)
            } else {
                if let other = try Self.findTag(db, newTitle) {
                    throw RemindersError.conflict("a tag named \"\(other.title)\" exists already")
                }
                let renamed = try db.insert(Tag(title: newTitle, namespace: try Self.tagNamespace(db)))
                for reminderID in tagged { try db.upsert(ReminderTag(reminderID: reminderID, tagID: renamed.id)) }
                try db.delete(tag)   // its links go with it (ON DELETE CASCADE)
                tag = renamed
            }
            try Self.reindex(db, tagged)
            return tag
        }
    }

    /// Deletes a tag; the reminders that carried it lose it. Returns how many did.
    @discardableResult
    public func deleteTag(_ title: String) async throws -> Int {
        try await store.write(logger: logger) { db in
            guard let tag = try Self.findTag(db, title) else { throw RemindersError.tagNotFound(title) }
            let tagged = try Self.reminderIDs(db, taggedWith: tag.id)
            try db.delete(tag)   // its links go with it (ON DELETE CASCADE)
            try Self.reindex(db, tagged)
            return tagged.count
        }
    }

    static func findTag(_ db: Database, _ title: String) throws -> Tag? {
        let bare = title.hasPrefix("#") ? String(title.dropFirst()) : title
        // The tag keyed by this title; else one renamed to it by letter case.
        if let tag = try db.find(Tag.self, id: Tag.id(forTitle: bare, namespace: try tagNamespace(db))) { return tag }
        return try db.fetchOne(Tag.where { $0.title.folded.eq(foldedASCII(bare)) }.order { $0.id.ascending() }.limit(1))
    }

    static func validTagTitle(_ raw: String) throws -> String {
        try validTitle(raw.hasPrefix("#") ? String(raw.dropFirst()) : raw)
    }
}

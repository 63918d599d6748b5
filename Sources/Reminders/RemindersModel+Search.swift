import Depot
import Foundation

extension Reminder {
    /// The reminders' full-text index: a reminder's title (a match weighs 3),
    /// its tags' titles (2) and its notes (1). The model writes it in every
    /// write that changes one of them.
    public static let searchIndex = SearchIndex<Reminder>(tableName: "reminderSearch", fields: [
        SearchIndex.Field("title", weight: 3), SearchIndex.Field("tags", weight: 2), "notes",
    ])
}

extension RemindersModel {
    /// What a person's search text asks: every word, each as the start of a
    /// word of the reminder's title, tags or notes, folded for case and
    /// diacritics (Depot's `SearchTokenizer` rules): "oat mil" finds "Oat milk".
    public static func searchQuery(_ text: String) -> SearchQuery {
        SearchQuery(text, matching: .allTerms, prefixes: .everyTerm)
    }

    /// The reminders that match a search: open ones unless `includeCompleted`,
    /// the best matches first (a match in the title weighs most), then by due date.
    /// Text without a word (only punctuation or emoji) matches nothing.
    public func search(_ text: String, includeCompleted: Bool = false) async throws -> (result: SearchResult, details: [ReminderDetail]) {
        let found = try await search(text, includeCompleted: includeCompleted, limit: nil)
        return (SearchResult(reminders: found.details.map(\.reminder), completedCount: found.completedCount), found.details)
    }

    /// The first `limit` reminders that match a search (every one when nil),
    /// in ``search(_:includeCompleted:)``'s order, how many match in all, and
    /// how many completed ones match, shown or not.
    ///
    /// ```swift
    /// let found = try await model.search("milk", limit: 20)
    /// print("\(found.total - found.details.count) more")
    /// ```
    public func search(_ text: String, includeCompleted: Bool = false, limit: Int?) async throws -> (details: [ReminderDetail], total: Int, completedCount: Int) {
        try Self.validate(limit: limit)
        let query = Self.searchQuery(text)
        return try await store.read(logger: logger) { db in
            let matching = Reminder.all.matching(query, in: Reminder.searchIndex)
            let completedCount = try db.fetchCount(matching.where { $0.isCompleted })
            let shown = includeCompleted ? matching : matching.where { !$0.isCompleted }
            let (reminders, total) = try Self.page(db, shown.order { $0.isCompleted.ascending() }
                .orderedBySearchRank(query, in: Reminder.searchIndex)
                .order { [$0.dueDate.ascending(), $0.number.ascending(nulls: .last)] }, limit: limit)
            return (try Self.details(db, reminders, today: today), total, completedCount)
        }
    }

    /// How many completed reminders match a search (and are old enough): what
    /// ``deleteCompletedMatches(_:olderThan:)`` would delete.
    public func completedMatchCount(_ text: String, olderThan age: CompletedAge = .any) async throws -> Int {
        let matches = Self.completedMatches(text, cutoff: try age.cutoff(before: today, in: timeZone))
        return try await store.read(logger: logger) { db in try db.fetchCount(matches) }
    }

    /// Deletes the completed reminders that match a search; returns how many.
    ///
    /// With `olderThan`, only those due more than that many months before
    /// today's calendar day (in ``timeZone``): a reminder without a due date is
    /// never older than anything.
    @discardableResult
    public func deleteCompletedMatches(_ text: String, olderThan age: CompletedAge = .any) async throws -> Int {
        let doomed = Self.completedMatches(text, cutoff: try age.cutoff(before: today, in: timeZone))
        // Their index rows go with them (ON DELETE CASCADE).
        return try await store.write(logger: logger) { db in try db.delete(doomed) }
    }

    /// The completed reminders that match a search, due before `cutoff` when there is one.
    static func completedMatches(_ text: String, cutoff: Date?) -> Query<Reminder> {
        let matches = Reminder.all.matching(searchQuery(text), in: Reminder.searchIndex).where { $0.isCompleted }
        guard let cutoff else { return matches }
        return matches.where { $0.dueDate < cutoff }
    }

    /// Writes the search index of these reminders from their titles, tags and
    /// notes, in the caller's write.
    static func reindex(_ db: Database, _ ids: [UUID]) throws {
        guard !ids.isEmpty else { return }
        // In chunks: a list synced again brings all its reminders, more than one statement binds.
        for start in stride(from: 0, to: ids.count, by: 1000) {
            let chunk = Array(ids[start..<min(start + 1000, ids.count)])
            let tags = try tagTitles(db, of: chunk)
            let entries = try db.fetchAll(Reminder.self, ids: chunk).map { reminder in
                (key: reminder.id, texts: searchTexts(reminder, tags: tags[reminder.id] ?? []))
            }
            try db.updateSearchIndex(Reminder.searchIndex, entries: entries)
        }
    }

    /// Writes the search index of every reminder again.
    static func reindexAll(_ db: Database) throws {
        let tags = try tagTitles(db, of: try db.fetchAll(Reminder.all.select { $0.id }))
        try db.rebuildSearchIndex(Reminder.searchIndex) { reminder in searchTexts(reminder, tags: tags[reminder.id] ?? []) }
    }

    /// The indexed texts of a reminder, in the index's field order.
    static func searchTexts(_ reminder: Reminder, tags: [String]) -> [String] {
        [reminder.title, tags.joined(separator: " "), reminder.notes]
    }

    /// The reminders that carry a tag.
    static func reminderIDs(_ db: Database, taggedWith tagID: UUID) throws -> [UUID] {
        try db.fetchAll(ReminderTag.where { $0.tagID.eq(tagID) }.select { $0.reminderID })
    }
}

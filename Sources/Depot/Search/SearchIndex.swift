/// A full-text index of one record type's texts, with one meaning on every
/// engine: the tokens are computed in Swift by ``SearchTokenizer`` and kept in
/// a plain table, so SQLite and PostgreSQL store, match and rank the same tokens.
///
/// Declare it once, create it in a migration, write each record's texts in the
/// transaction that writes the record, and search with a ``SearchQuery``:
///
/// ```swift
/// extension Reminder {
///     static let searchIndex = SearchIndex<Reminder>(tableName: "reminderSearch",
///                                                    fields: [SearchIndex.Field("title", weight: 2), "notes"])
/// }
///
/// migrator.register("reminder search") { db in
///     try db.createSearchIndex(Reminder.searchIndex, keyType: .integer)
///     try db.rebuildSearchIndex(Reminder.searchIndex) { [$0.title, $0.notes] }
/// }
///
/// try await store.write { db in
///     let reminder = try db.insert(Reminder(title: "Oat milk", notes: ""))
///     try db.updateSearchIndex(Reminder.searchIndex, key: reminder.id, texts: [reminder.title, reminder.notes])
/// }
///
/// let query = SearchQuery("milk", prefixes: .lastTerm)
/// let found = try await store.read { db in
///     try db.fetchAll(Reminder.all.matching(query, in: Reminder.searchIndex)
///         .orderedBySearchRank(query, in: Reminder.searchIndex))
/// }
/// ```
///
/// The index table holds one row per record, field and distinct token (how
/// often the token occurs there), with a foreign key to the record's table
/// that deletes a record's rows with the record, however it is deleted.
///
/// Ranking is a rule both engines compute exactly: a record's rank is the sum,
/// over the tokens of its fields that match a term, of the field's weight
/// times how often the token occurs there. (Not BM25: its floating-point
/// scores could order two records differently on two engines.)
///
/// Caveat: the index holds what you wrote into it. A record changed without
/// ``Database/updateSearchIndex(_:key:texts:)`` (by raw SQL, or by an update
/// statement of the builder) keeps its old tokens until you write them again
/// or ``Database/rebuildSearchIndex(_:texts:)``.
public struct SearchIndex<Indexed: Record>: Sendable {
    /// One indexed text of a record, and how much a match in it weighs in the rank.
    public struct Field: Sendable, Hashable, ExpressibleByStringLiteral {
        /// The field's name (for people reading the declaration; the table stores its position).
        public let name: String
        /// What one occurrence of a matching token in this field adds to a rank: 1 to 1,000.
        public let weight: Int

        /// A field whose matches weigh `weight` (1 to 1,000; others are a `misuse` error when the index is used).
        public init(_ name: String, weight: Int = 1) {
            self.name = name
            self.weight = weight
        }

        /// A field of weight 1.
        public init(stringLiteral name: String) {
            self.init(name)
        }
    }

    /// The table that holds the index's tokens.
    public let tableName: String
    /// The indexed texts, in the order ``Database/updateSearchIndex(_:key:texts:)`` takes them.
    public let fields: [Field]

    /// An index kept in `tableName` of these fields of each record.
    public init(tableName: String, fields: [Field]) {
        self.tableName = tableName
        self.fields = fields
    }

    /// The largest weight a field may have, so that no rank can overflow 64 bits.
    public static var maximumWeight: Int { 1_000 }

    /// The fields' weights, checked.
    func checkedWeights() throws -> [Int] {
        guard !fields.isEmpty else { throw DatabaseError.misuse("the search index \(tableName) has no field") }
        for field in fields where !(1...Self.maximumWeight).contains(field.weight) {
            throw DatabaseError.misuse("the search index \(tableName) gives \(field.name) the weight \(field.weight): weights are 1 to \(Self.maximumWeight)")
        }
        return fields.map(\.weight)
    }

    /// The record type's one key column.
    static func keyColumn() throws -> String {
        guard Indexed.primaryKey.count == 1, let key = Indexed.primaryKey.first else {
            throw DatabaseError.misuse("a search index needs a single-column primary key; \(Indexed.self) has \(Indexed.primaryKey)")
        }
        return key
    }
}

/// The index table's columns.
enum SearchIndexColumn {
    static let token = "token", key = "key", field = "field", occurrences = "occurrences"
}

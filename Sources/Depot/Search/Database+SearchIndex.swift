extension Database {
    /// Creates a search index's table, for a migration.
    ///
    /// `keyType` is the column type of the indexed table's primary key
    /// (``ColumnType/autoIncrementingPrimaryKey`` means its integer); the
    /// index's key column references it, deleting a record's tokens with it.
    /// Fill the index of existing records with ``rebuildSearchIndex(_:texts:)``.
    public func createSearchIndex<T: Record>(_ index: SearchIndex<T>, keyType: ColumnType) throws {
        _ = try index.checkedWeights()
        let parentKey = try SearchIndex<T>.keyColumn()
        guard let queryDialect else {
            throw DatabaseError.misuse("\(dialect.engineName)'s dialect renders no queries: it cannot search")
        }
        let type: ColumnType = keyType == .autoIncrementingPrimaryKey ? .integer : keyType
        let column = SearchIndexColumn.self
        try execute("""
            CREATE TABLE \(ident: index.tableName) (\
            \(ident: column.token) \(keyType: .text) NOT NULL, \
            \(ident: column.key) \(keyType: type) NOT NULL REFERENCES \(ident: T.tableName) (\(ident: parentKey)) ON DELETE CASCADE, \
            \(ident: column.field) \(type: .integer) NOT NULL, \
            \(ident: column.occurrences) \(type: .integer) NOT NULL, \
            PRIMARY KEY (\(ident: column.key), \(ident: column.field), \(ident: column.token)))
            """)
        // Prefix queries compare tokens by code point: index them that way.
        let token = queryDialect.binaryCollatedIndexKey("\(ident: column.token)")
        try execute("""
            CREATE INDEX \(ident: index.tableName + "_token") ON \(ident: index.tableName) (\(token), \(ident: column.key))
            """)
    }

    /// Replaces the tokens of the record with `key` by those of `texts`, one
    /// per field of the index, in order. Call it in the transaction that
    /// writes the record, after the record is stored.
    ///
    /// To index many records, ``updateSearchIndex(_:entries:)`` does it in a
    /// few statements instead of two per record.
    ///
    /// - Throws: `misuse` when `texts` does not hold one text per field.
    public func updateSearchIndex<T: Record>(_ index: SearchIndex<T>, key: some Encodable & Sendable, texts: [String]) throws {
        try updateSearchIndex(index, entries: [(key: key, texts: texts)])
    }

    /// Replaces the tokens of many records at once: for each entry, those of
    /// its `texts` (one per field of the index, in order) under its `key`.
    /// Call it in the transaction that writes the records, after they are
    /// stored.
    ///
    /// ```swift
    /// try db.updateSearchIndex(Reminder.searchIndex, entries: reminders.map { (key: $0.id, texts: [$0.title, $0.notes]) })
    /// ```
    ///
    /// It reads the stored tokens of a chunk of records in one statement,
    /// leaves alone the records whose tokens do not change (an edit of
    /// another column), deletes the others' in one statement and inserts
    /// their new ones in as few as the engine's bound-value limit allows: on
    /// a server, where each statement is a round trip, indexing 10,000
    /// records takes a few dozen statements, not 20,000.
    ///
    /// - Throws: `misuse` when an entry does not hold one text per field
    ///   (before anything is written).
    public func updateSearchIndex<T: Record, Key: Encodable & Sendable>(_ index: SearchIndex<T>, entries: [(key: Key, texts: [String])]) throws {
        _ = try index.checkedWeights()
        // A key given twice is indexed once, with its last texts. Keys compare
        // by their stored form: two texts Swift calls equal may be two records.
        var keys: [Value] = []
        var texts: [[String]] = []
        var positions: [ExactKey: Int] = [:]
        for entry in entries {
            guard entry.texts.count == index.fields.count else {
                throw DatabaseError.misuse("the search index \(index.tableName) has \(index.fields.count) fields; \(entry.texts.count) texts were given")
            }
            let key = try encodeKey(entry.key, T.self)
            if let position = positions[ExactKey(key)] {
                texts[position] = entry.texts
            } else {
                positions[ExactKey(key)] = keys.count
                keys.append(key)
                texts.append(entry.texts)
            }
        }
        let perChunk = max(1, min(500, dialect.maxBoundValues))
        var rows = TokenRows(index: index, database: self)
        for start in stride(from: 0, to: keys.count, by: perChunk) {
            let range = start..<min(keys.count, start + perChunk)
            let stored = try storedTokens(index, keys: keys[range])
            var changed: [Value] = [], tokens: [[SearchToken]] = [], doomed: [Value] = []
            for position in range {
                let new = SearchToken.tokens(of: texts[position])
                // Skipped only when the stored tokens are known to be these: a key read back in a form
                // not recognized here is indexed again, never left stale.
                let key = StoredKey(keys[position])
                if let key, let old = stored[key], old == Set(new) { continue }
                if let key, stored[key] == nil, new.isEmpty { continue }
                // A key known to have no tokens (a new record) has none to delete.
                if key.map({ stored[$0] != nil }) ?? true { doomed.append(keys[position]) }
                changed.append(keys[position])
                tokens.append(new)
            }
            guard !changed.isEmpty else { continue }
            if !doomed.isEmpty {
                try execute("""
                    DELETE FROM \(ident: index.tableName) WHERE \(ident: SearchIndexColumn.key) IN (\(SQL.join(doomed.map { "\($0)" }, separator: ", ")))
                    """)
            }
            for (key, tokens) in zip(changed, tokens) { try rows.append(key: key, tokens: tokens) }
        }
        try rows.flush()
    }

    /// The tokens stored for these keys, by key; a key with none is absent.
    private func storedTokens<T: Record>(_ index: SearchIndex<T>, keys: ArraySlice<Value>) throws -> [StoredKey: Set<SearchToken>] {
        let column = SearchIndexColumn.self
        var tokens: [StoredKey: Set<SearchToken>] = [:]
        for row in try fetchAll(Row.self, """
            SELECT \(ident: column.key), \(ident: column.field), \(ident: column.token), \(ident: column.occurrences) FROM \(ident: index.tableName)
            WHERE \(ident: column.key) IN (\(SQL.join(keys.map { "\($0)" }, separator: ", ")))
            """) {
            guard row.values.count == 4, let key = StoredKey(row[0]), case .integer(let field) = row[1], case .text(let token) = row[2],
                  case .integer(let occurrences) = row[3] else { continue }
            tokens[key, default: []].insert(SearchToken(field: field, token: Array(token.utf8), occurrences: occurrences))
        }
        return tokens
    }

    /// Removes the tokens of the record with `key`, as deleting the record does.
    public func removeFromSearchIndex<T: Record>(_ index: SearchIndex<T>, key: some Encodable & Sendable) throws {
        let keyValue = try encodeKey(key, T.self)
        try execute("DELETE FROM \(ident: index.tableName) WHERE \(ident: SearchIndexColumn.key) = \(keyValue)")
    }

    /// Empties the index and writes the tokens of every record of its type
    /// again, reading each record's texts with `texts`: to fill a new index,
    /// or to repair one that writes bypassed.
    public func rebuildSearchIndex<T: Record>(_ index: SearchIndex<T>, texts: (T) throws -> [String]) throws {
        let keyColumn = try SearchIndex<T>.keyColumn()
        _ = try index.checkedWeights()
        try execute("DELETE FROM \(ident: index.tableName)")
        let records = try fetchAll(T.self, "SELECT * FROM \(ident: T.tableName)")
        var rows = TokenRows(index: index, database: self)
        for record in records {
            let recordTexts = try texts(record)
            guard recordTexts.count == index.fields.count else {
                throw DatabaseError.misuse("the search index \(index.tableName) has \(index.fields.count) fields; \(recordTexts.count) texts were given")
            }
            try rows.append(key: try encodedColumn(keyColumn, of: record), texts: recordTexts)
        }
        try rows.flush()
    }

}

/// The token rows of records being indexed, written through the engine's
/// bulk insert (PostgreSQL's COPY; prepared multi-row INSERTs elsewhere) as
/// they fill up: one row per record, field and distinct token, with how often
/// it occurs.
private struct TokenRows<T: Record> {
    let index: SearchIndex<T>
    let database: Database
    private var rows: [[Value]] = []
    /// Rows held before they are written: enough to make a bulk insert worth
    /// starting, few enough to keep a rebuild's memory flat.
    private static var perInsert: Int { 10_000 }

    init(index: SearchIndex<T>, database: Database) {
        self.index = index
        self.database = database
    }

    mutating func append(key: Value, texts: [String]) throws {
        try append(key: key, tokens: SearchToken.tokens(of: texts))
    }

    mutating func append(key: Value, tokens: [SearchToken]) throws {
        for token in tokens {
            rows.append([.text(String(decoding: token.token, as: UTF8.self)), key, .integer(token.field), .integer(token.occurrences)])
            if rows.count == Self.perInsert { try flush() }
        }
    }

    mutating func flush() throws {
        guard !rows.isEmpty else { return }
        let column = SearchIndexColumn.self
        try database.insert(into: index.tableName, columns: [column.token, column.key, column.field, column.occurrences], rows: rows)
        rows.removeAll(keepingCapacity: true)
    }
}

/// A key value hashed by its stored form: a text by its UTF-8 bytes, not by
/// Swift's canonical equivalence.
private enum ExactKey: Hashable {
    case text([UInt8])
    case other(Value)

    init(_ value: Value) {
        if case .text(let text) = value { self = .text(Array(text.utf8)) } else { self = .other(value) }
    }
}

/// One token row of a record: its field, the token's bytes and how often it occurs there.
private struct SearchToken: Hashable {
    var field: Int64
    var token: [UInt8]
    var occurrences: Int64

    /// The rows of a record's texts, one per field and distinct token, in the order tokens first occur.
    static func tokens(of texts: [String]) -> [SearchToken] {
        var rows: [SearchToken] = []
        for (field, text) in texts.enumerated() {
            var counts: [[UInt8]: Int64] = [:]
            var order: [[UInt8]] = []
            for token in SearchTokenizer.tokens(in: text) {
                let bytes = Array(token.utf8)
                if counts[bytes] == nil { order.append(bytes) }
                counts[bytes, default: 0] += 1
            }
            rows += order.map { SearchToken(field: Int64(field), token: $0, occurrences: counts[$0] ?? 0) }
        }
        return rows
    }
}

/// A key as the index stores it, to match the keys a query reads back with
/// those given: a UUID as its lowercase text (SQLite stores it so, PostgreSQL
/// reads it back as a UUID), a text by its bytes. Nil for any other kind,
/// whose records are always indexed again.
private enum StoredKey: Hashable {
    case text([UInt8])
    case integer(Int64)

    init?(_ value: Value) {
        switch value {
        case .text(let text): self = .text(Array(text.utf8))
        case .uuid(let uuid): self = .text(Array(UUIDText.lowercased(uuid).utf8))
        case .integer(let integer): self = .integer(integer)
        default: return nil
        }
    }
}

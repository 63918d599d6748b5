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
    /// It deletes the old tokens of a chunk of records in one statement and
    /// inserts the new ones in as few as the engine's bound-value limit
    /// allows: on a server, where each statement is a round trip, indexing
    /// 10,000 records takes a few dozen statements, not 20,000.
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
        let perDelete = max(1, min(500, dialect.maxBoundValues))
        for start in stride(from: 0, to: keys.count, by: perDelete) {
            let chunk = keys[start..<min(keys.count, start + perDelete)]
            try execute("""
                DELETE FROM \(ident: index.tableName) WHERE \(ident: SearchIndexColumn.key) IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                """)
        }
        var rows = TokenRows(index: index, database: self)
        for (key, texts) in zip(keys, texts) { try rows.append(key: key, texts: texts) }
        try rows.flush()
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

/// The token rows of records being indexed, written in multi-row INSERTs
/// as they fill up: one row per record, field and distinct token, with how
/// often it occurs.
private struct TokenRows<T: Record> {
    let index: SearchIndex<T>
    let database: Database
    private var rows: [SQL] = []
    private let perStatement: Int

    init(index: SearchIndex<T>, database: Database) {
        self.index = index
        self.database = database
        // Four values a row; at most 250 rows, to keep a statement's text small.
        perStatement = max(1, min(250, database.dialect.maxBoundValues / 4))
    }

    mutating func append(key: Value, texts: [String]) throws {
        for (field, text) in texts.enumerated() {
            var counts: [String: Int] = [:]
            var order: [String] = []
            for token in SearchTokenizer.tokens(in: text) {
                if counts[token] == nil { order.append(token) }
                counts[token, default: 0] += 1
            }
            for token in order {
                rows.append("(\(token), \(key), \(field), \(counts[token] ?? 0))")
                if rows.count == perStatement { try flush() }
            }
        }
    }

    mutating func flush() throws {
        guard !rows.isEmpty else { return }
        let column = SearchIndexColumn.self
        try database.execute("""
            INSERT INTO \(ident: index.tableName) (\(ident: column.token), \(ident: column.key), \(ident: column.field), \(ident: column.occurrences)) \
            VALUES \(SQL.join(rows, separator: ", "))
            """)
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

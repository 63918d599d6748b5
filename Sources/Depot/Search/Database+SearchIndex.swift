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
    /// - Throws: `misuse` when `texts` does not hold one text per field.
    public func updateSearchIndex<T: Record>(_ index: SearchIndex<T>, key: some Encodable & Sendable, texts: [String]) throws {
        guard texts.count == index.fields.count else {
            throw DatabaseError.misuse("the search index \(index.tableName) has \(index.fields.count) fields; \(texts.count) texts were given")
        }
        _ = try index.checkedWeights()
        let keyValue = try encodeKey(key, T.self)
        try execute("DELETE FROM \(ident: index.tableName) WHERE \(ident: SearchIndexColumn.key) = \(keyValue)")
        try insertTokens(index, key: keyValue, texts: texts)
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
        for record in records {
            let recordTexts = try texts(record)
            guard recordTexts.count == index.fields.count else {
                throw DatabaseError.misuse("the search index \(index.tableName) has \(index.fields.count) fields; \(recordTexts.count) texts were given")
            }
            try insertTokens(index, key: try encodedColumn(keyColumn, of: record), texts: recordTexts)
        }
    }

    /// Inserts one row per field and distinct token, with how often it occurs.
    private func insertTokens<T: Record>(_ index: SearchIndex<T>, key: Value, texts: [String]) throws {
        var rows: [SQL] = []
        for (field, text) in texts.enumerated() {
            var counts: [String: Int] = [:]
            var order: [String] = []
            for token in SearchTokenizer.tokens(in: text) {
                if counts[token] == nil { order.append(token) }
                counts[token, default: 0] += 1
            }
            for token in order {
                rows.append("(\(token), \(key), \(field), \(counts[token] ?? 0))")
            }
        }
        let column = SearchIndexColumn.self
        let perStatement = max(1, min(100, dialect.maxBoundValues / 4))
        var start = 0
        while start < rows.count {
            let end = min(rows.count, start + perStatement)
            try execute("""
                INSERT INTO \(ident: index.tableName) (\(ident: column.token), \(ident: column.key), \(ident: column.field), \(ident: column.occurrences)) \
                VALUES \(SQL.join(Array(rows[start..<end]), separator: ", "))
                """)
            start = end
        }
    }
}

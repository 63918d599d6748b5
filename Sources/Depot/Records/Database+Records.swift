import Foundation

extension Database {
    /// Inserts a record and returns it as stored, with generated values such as its id.
    ///
    /// Primary-key columns whose value is nil are left out so the engine fills them in.
    /// - Throws: a `unique`, `notNull`, `foreignKey` or `check` ``DatabaseError`` when
    ///   a constraint refuses the row.
    @discardableResult
    public func insert<T: Record>(_ record: T) throws -> T {
        let columns = try encodeForInsert(record)
        let sql = insertSQL(T.self, columns.names, returning: true)
        let stored = try fetchReturned(T.self, sql, columns.values, action: "insert")
        try advanceKeyGenerators(T.self, past: columns)
        return stored
    }

    /// Inserts a record without reading it back: no `RETURNING`, nothing
    /// decoded. For a caller that knows the row it wrote (a key made on the
    /// device, a UUID) or does not need it: the same statement as
    /// `insert(_:)` minus the row's return trip, which on PostgreSQL is
    /// most of a one-row insert's client work.
    ///
    /// ```swift
    /// try db.insertWithoutReturning(Note(id: UUID(), title: "Milk"))
    /// ```
    ///
    /// - Throws: the errors of `insert(_:)`: `unique`, `notNull`,
    ///   `foreignKey` or `check` when a constraint refuses the row.
    ///
    /// Caveat: a generated key (a nil id) is generated, and not told: use
    /// `insert(_:)` to learn it.
    public func insertWithoutReturning<T: Record>(_ record: T) throws {
        let columns = try encodeForInsert(record)
        let sql = insertSQL(T.self, columns.names, returning: false)
        try withStatement(text: sql, values: columns.values) { statement, _ in
            while try statement.step() {}
        }
        try advanceKeyGenerators(T.self, past: columns)
    }

    /// Inserts many records in one savepoint: all or none.
    ///
    /// On an engine with a bulk path (PostgreSQL's COPY) the rows stream through it.
    /// Elsewhere they go in as few statements as the engine likes
    /// (``SQLDialect/batchInsertRows`` rows each, split below its bound-value limit),
    /// each statement prepared once and reused. Either way there is no limit on the
    /// number of records.
    public func insert<T: Record>(contentsOf records: some Sequence<T>) throws {
        try savepoint { db in
            var batch = BatchInsert(db: db, type: T.self)
            defer { batch.release() }
            var keys = ExplicitKeys(T.self)
            for record in records {
                var columns = try db.encodeForInsert(record, deduplicating: false)
                keys.note(columns)
                try batch.add(&columns)
            }
            try batch.flush()
            try keys.advanceGenerators(db)
        }
    }

    /// Inserts a record, or updates the stored one with the same primary key.
    /// Returns the record as stored.
    @discardableResult
    public func upsert<T: Record>(_ record: T) throws -> T {
        // A nil key is left out, as `insert` does, so the engine generates it.
        let all = try encode(record)
        let key = try primaryKeyColumns(T.self, in: all.names)
        let columns = Self.droppingNilKeys(all, T.self)
        guard columns.names.count == all.names.count else {
            // A key left out is generated: the row is new, there is nothing it
            // could conflict with, so it is an insert (and `DEFAULT VALUES`, all
            // SQLite allows for a record of nil keys alone, takes no ON CONFLICT).
            let sql = insertSQL(T.self, columns.names, returning: true)
            let stored = try fetchReturned(T.self, sql, columns.values, action: "upsert")
            try advanceKeyGenerators(T.self, past: columns)
            return stored
        }
        let updated = columns.names.filter { !key.contains($0) }
        // Nothing to update: the stored row is returned as it is.
        return try upsertRow(T.self, columns, target: key, updating: updated)
    }

    /// Updates every column of the stored record with the same primary key;
    /// nil properties are written as NULL. Returns the record: for a record
    /// with a ``Record/versionColumn``, the row as stored, with its new version.
    ///
    /// - Throws: a `notFound` ``DatabaseError`` when no row has that primary
    ///   key; a `conflict` one when the record has a version column and the
    ///   stored row's version is not the record's (another writer saved it).
    @discardableResult
    public func update<T: Record>(_ record: T) throws -> T {
        let columns = try encode(record)
        let key = try primaryKeyColumns(T.self, in: columns.names)
        let version = try recordVersion(T.self, columns)
        var assignments: [SQL] = []
        var keyConditions: [SQL] = []
        for (name, value) in zip(columns.names, columns.values) {
            if key.contains(name) {
                keyConditions.append("\(ident: name) = \(value)")
            } else if name != version?.column {
                assignments.append("\(ident: name) = \(value)")
            }
        }
        var conditions = keyConditions
        if let version {
            assignments.append("\(ident: version.column) = \(ident: version.column) + 1")
            conditions.append("\(ident: version.column) = \(version.expected)")
        }
        if assignments.isEmpty {
            // Only key columns: set them to themselves, so a missing row is still found out.
            assignments = key.map { "\(ident: $0) = \(ident: $0)" }
        }
        let sql: SQL = "UPDATE \(ident: T.tableName) SET \(SQL.join(assignments, separator: ", ")) WHERE \(SQL.join(conditions, separator: " AND "))"
        guard let version else {
            if try execute(sql) == 0 {
                throw DatabaseError(.notFound, "no \(T.self) with this primary key to update", table: T.tableName, sql: try sql.rendered(for: dialect).text)
            }
            return record
        }
        return try updateVersioned(T.self, sql, key: key, keyConditions: keyConditions, version: version)
    }

    /// Deletes the stored record with the same primary key. Returns whether a row was deleted.
    ///
    /// - Throws: a `conflict` ``DatabaseError`` when the record has a
    ///   ``Record/versionColumn`` and the stored row's version is not the
    ///   record's: another writer saved it since it was read.
    @discardableResult
    public func delete<T: Record>(_ record: T) throws -> Bool {
        let columns = try encode(record)
        let key = try primaryKeyColumns(T.self, in: columns.names)
        let keyConditions = key.map { name -> SQL in
            "\(ident: name) = \(columns.values[columns.names.firstIndex(of: name) ?? 0])"
        }
        guard let version = try recordVersion(T.self, columns) else {
            return try execute("DELETE FROM \(ident: T.tableName) WHERE \(SQL.join(keyConditions, separator: " AND "))") > 0
        }
        let conditions = keyConditions + ["\(ident: version.column) = \(version.expected)"]
        let sql: SQL = "DELETE FROM \(ident: T.tableName) WHERE \(SQL.join(conditions, separator: " AND "))"
        if try execute(sql) > 0 { return true }
        guard try rowExists(T.self, keyConditions) else { return false }
        throw Self.versionConflict(T.self, key: key, version: version, action: "delete", sql: try sql.rendered(for: dialect).text)
    }

    /// Deletes the record with this primary key (a single-column key). Returns whether a row was deleted.
    @discardableResult
    public func delete<T: Record>(_ type: T.Type, id: some Encodable & Sendable) throws -> Bool {
        let key = try singleKey(type)
        let value = try encodeKey(id, T.self)
        return try execute("DELETE FROM \(ident: T.tableName) WHERE \(ident: key) = \(value)") > 0
    }

    /// The record with this primary key (a single-column key), or nil.
    ///
    /// ```swift
    /// let list = try db.find(RemindersList.self, id: 42)
    /// ```
    public func find<T: Record>(_ type: T.Type, id: some Encodable & Sendable) throws -> T? {
        let (text, values) = try findStatement(type, id: id)
        return try withStatement(text: text, values: values) { statement, _ in
            guard try statement.step() else { return nil }
            let result = try RowDecoder.decode(type, from: statement, plan: plan(for: statement, type))
            // Unless the engine's plan holds one row at most, a second row proves the key not unique.
            if !statement.returnsOneRowAtMost, try statement.step() {
                throw DatabaseError.findFoundMoreRows(T.self, primaryKey: T.primaryKey)
            }
            return result
        }
    }

    /// The record whose primary-key columns hold these values, or nil.
    public func find<T: Record>(_ type: T.Type, key: [String: Value]) throws -> T? {
        guard Set(key.keys) == Set(T.primaryKey) else {
            throw DatabaseError.misuse("find(\(T.self).self, key:) needs exactly the primary-key columns \(T.primaryKey)")
        }
        let conditions = T.primaryKey.map { name -> SQL in "\(ident: name) = \(key[name] ?? .null)" }
        return try fetchOne(type, "SELECT * FROM \(ident: T.tableName) WHERE \(SQL.join(conditions, separator: " AND "))")
    }

    // MARK: Helpers

    /// Moves the engine's key generators past the integer keys one record gave explicitly.
    ///
    /// A type none of whose key columns has a generator is remembered as such
    /// (until the schema changes), so a one-row insert skips the search.
    func advanceKeyGenerators<T: Record>(_ type: T.Type, past columns: EncodedColumns) throws {
        let id = ObjectIdentifier(type)
        if recordCache.keysWithoutGenerators.contains(id) { return }
        var keys = ExplicitKeys(T.self)
        keys.note(columns)
        try keys.advanceGenerators(self)
        if try T.primaryKey.allSatisfy({ try !hasKeyGenerator(table: T.tableName, column: $0) }) {
            recordCache.keysWithoutGenerators.insert(id)
        }
    }

    /// A primary-key value encoded as the record's property is, with the store's strategies.
    func encodeKey<T: Record>(_ id: some Encodable, _ type: T.Type) throws -> Value {
        do {
            return try ValueEncoder.encode(id, options: coding.encoding, column: T.primaryKey.first)
        } catch let error as EncodingError {
            throw DatabaseError(encoding: error, table: T.tableName)
        } catch {
            throw DatabaseError(.encoding, "cannot use this value as a primary key of \(T.self): \(error)", table: T.tableName)
        }
    }

    /// A record's columns as this store encodes them for an insert: names
    /// (after the key strategy) and values, in the mapping's order. For sync,
    /// which moves records between stores as these values.
    @_spi(Sync) public func encodedColumns<T: Record>(of record: T) throws -> [(name: String, value: Value)] {
        let columns = try encode(record)
        return Array(zip(columns.names, columns.values))
    }

    /// The value one column of a record is stored as.
    func encodedColumn<T: Record>(_ name: String, of record: T) throws -> Value {
        let columns = try encodedColumns(of: record)
        guard let column = columns.first(where: { $0.name == name }) else {
            throw DatabaseError.misuse("\(T.self) encodes no column \(name) (it encodes \(columns.map(\.name)))")
        }
        return column.value
    }

    private func encode<T: Record>(_ record: T, deduplicating: Bool = true) throws -> EncodedColumns {
        try Self.encoding(T.self) {
            try EncodedColumns.encode(record, options: coding.encoding, keyStrategy: coding.keyStrategy, deduplicating: deduplicating,
                                      names: columnNames)
        }
    }

    /// Runs an encoding of a record and reports any failure as an `encoding`
    /// ``DatabaseError`` naming its table (and, from an `EncodingError`, the property).
    static func encoding<T: Record, R>(_ type: T.Type, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as EncodingError {
            throw DatabaseError(encoding: error, table: T.tableName)
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(.encoding, "cannot encode \(T.self): \(error)", table: T.tableName)
        }
    }

    func encodeForInsert<T: Record>(_ record: T, deduplicating: Bool = true) throws -> EncodedColumns {
        Self.droppingNilKeys(try encode(record, deduplicating: deduplicating), T.self)
    }

    /// The columns without the primary-key columns that hold NULL, so the engine generates them.
    static func droppingNilKeys<T: Record>(_ encoded: EncodedColumns, _ type: T.Type) -> EncodedColumns {
        var columns = encoded
        for name in T.primaryKey {
            if let index = columns.names.firstIndex(of: name), columns.values[index].isNull {
                columns.names.remove(at: index)
                columns.values.remove(at: index)
            }
        }
        return columns
    }

    /// The INSERT for these columns, rendered once per connection.
    ///
    /// Looked up by type, then by comparing the names: the names of a `@Columns`
    /// type are one shared array, which compares equal at once, where hashing them
    /// would read every name on every insert.
    func insertSQL(_ type: any Record.Type, _ names: [String], rows: Int = 1, returning: Bool = false) -> String {
        let id = ObjectIdentifier(type)
        if let cached = recordCache.insertSQL[id]?.first(where: { $0.rows == rows && $0.returning == returning && $0.names == names }) {
            return cached.text
        }
        let text = renderInsert(into: type.tableName, names, rows: rows) + (returning ? " RETURNING *" : "")
        var entries = recordCache.insertSQL[id] ?? []
        if entries.count >= 8 { entries.removeFirst() }
        entries.append((names, rows, returning, text))
        recordCache.insertSQL[id] = entries
        return text
    }

    /// `INSERT INTO "table" ("a", "b") VALUES ($1, $2), ($3, $4)`: `rows` rows of placeholders.
    func renderInsert(into table: String, _ names: [String], rows: Int) -> String {
        let table = dialect.quote(identifier: table)
        if names.isEmpty { return dialect.insertDefaultValues(into: table) }
        let columns = names.map { dialect.quote(identifier: $0) }.joined(separator: ", ")
        var text = "INSERT INTO \(table) (\(columns)) VALUES "
        var index = 0
        for row in 0..<rows {
            text += row == 0 ? "(" : ", ("
            for column in 0..<names.count {
                index += 1
                text += (column == 0 ? "" : ", ") + dialect.placeholder(index)
            }
            text += ")"
        }
        return text
    }

    /// Runs a rendered INSERT or UPSERT ... RETURNING * and decodes the one row it returns.
    func fetchReturned<T: Record>(_ type: T.Type, _ text: String, _ values: [Value], action: String) throws -> T {
        guard let stored = try fetchReturnedIfAny(type, text, values) else {
            throw DatabaseError(.other, "\(action) returned no row", table: T.tableName)
        }
        return stored
    }

    /// Runs a rendered INSERT ... RETURNING * and decodes the row it returns, if any.
    func fetchReturnedIfAny<T: Record>(_ type: T.Type, _ text: String, _ values: [Value]) throws -> T? {
        try withStatement(text: text, values: values) { statement, _ in
            guard try statement.step() else { return nil }
            // A primary key is never NULL. SQLite lets a non-integer key of an
            // ordinary table hold one (its legacy, documented); PostgreSQL refuses
            // it. Refuse it everywhere, as the engine's failure it is: the
            // transaction (or savepoint) that stored it can only roll back.
            for key in T.primaryKey {
                if let index = statement.columns.index(of: key), statement.isNull(at: index) {
                    noteEngineFailure()
                    throw DatabaseError(.notNull, "the primary key column \"\(key)\" of \(T.tableName) would be NULL: give the record a key, or let the engine generate it (an integer key)",
                                        table: T.tableName, column: key)
                }
            }
            let result = try RowDecoder.decode(type, from: statement, plan: plan(for: statement, type))
            while try statement.step() {}
            return result
        }
    }

    func primaryKeyColumns<T: Record>(_ type: T.Type, in names: [String]) throws -> [String] {
        let key = T.primaryKey
        guard !key.isEmpty, key.allSatisfy(names.contains) else {
            throw DatabaseError.misuse("\(T.self).primaryKey \(key) names columns the record does not encode (it encodes \(names))")
        }
        return key
    }

    func singleKey<T: Record>(_ type: T.Type) throws -> String {
        guard T.primaryKey.count == 1, let key = T.primaryKey.first else {
            throw DatabaseError.misuse("\(T.self) has a composite primary key \(T.primaryKey): use find(_:key:)")
        }
        return key
    }
}

extension DatabaseError {
    /// An encoding failure, with the coding path of the property that could not be stored.
    init(encoding error: EncodingError, table: String?) {
        switch error {
        case .invalidValue(_, let context):
            self.init(.encoding, context.debugDescription, table: table,
                      column: context.codingPath.first?.stringValue,
                      codingPath: describe(codingPath: context.codingPath))
        @unknown default:
            self.init(.encoding, "\(error)", table: table)
        }
    }
}

/// The largest integer key each primary-key column was given explicitly by the
/// inserts of one call, so the engine's key generator can be moved past them.
///
/// Not generic over the record type, as ``BatchInsert`` is not.
struct ExplicitKeys {
    /// The primary key's columns, read once: `T.primaryKey` may build its array on every call.
    private let key: [String]
    private let table: String
    /// The largest integer given to each key column, in the order of `key`.
    private var largest: [Int64?]
    /// Where the key columns were in the last row's names, reused while the names stay the same.
    private var names: [String] = []
    private var positions: [Int?] = []

    init(_ type: any Record.Type) {
        key = type.primaryKey
        table = type.tableName
        largest = Array(repeating: nil, count: key.count)
    }

    mutating func note(_ columns: EncodedColumns) {
        if columns.names != names {
            names = columns.names
            positions = key.map { columns.names.firstIndex(of: $0) }
        }
        for (offset, position) in positions.enumerated() {
            guard let position, case .integer(let value) = columns.values[position] else { continue }
            if let known = largest[offset], known >= value { continue }
            largest[offset] = value
        }
    }

    func advanceGenerators(_ db: Database) throws {
        for (column, value) in zip(key, largest).sorted(by: { $0.0 < $1.0 }) {
            guard let value, try db.hasKeyGenerator(table: table, column: column),
                  let sql = db.dialect.advanceKeyGenerator(table: table, column: column, past: value) else { continue }
            try db.execute(sql)
        }
    }
}

extension Database {
    /// Whether a column has a key generator to advance, asked of the engine once per
    /// connection and column. Schema changes through this connection forget the answers.
    func hasKeyGenerator(table: String, column: String) throws -> Bool {
        let key = RecordCache.ColumnKey(table: table, column: column)
        if let known = recordCache.keyGenerators[key] { return known }
        let has = try dialect.hasKeyGenerator(table: table, column: column).map { try fetchOne(Bool.self, $0) ?? false } ?? false
        recordCache.keyGenerators[key] = has
        return has
    }
}

import Foundation

// The fetches of `@Columns` types. Each is inlined into the caller's module, so
// the row loop is compiled for the concrete type: the generated `init(columns:)`
// is a direct call and the results array is the type's own, with no generic
// metadata looked up row by row. They mean exactly what the `Decodable`
// fetches mean; with `usesGeneratedMapping` off they decode through Codable.

extension Database {
    /// Fetches every row, decoded through the type's generated column mapping.
    ///
    /// It means what the `Decodable` fetch means, without Codable's containers.
    @inlinable
    public func fetchAll<T: ColumnMapped>(_ type: T.Type, _ sql: SQL) throws -> [T] {
        var results: [T] = []
        try mappedRows(type, sql, limit: .all) { reader in
            if results.isEmpty, let count = reader.rowCountHint { results.reserveCapacity(count) }
            results.append(try reader.record(T.self))
        }
        return results
    }

    /// Fetches at most one row, decoded through the type's generated column mapping.
    ///
    /// - Throws: a `tooManyRows` ``DatabaseError`` when the query returns more than one row.
    @inlinable
    public func fetchOne<T: ColumnMapped>(_ type: T.Type, _ sql: SQL) throws -> T? {
        var result: T?
        try mappedRows(type, sql, limit: .one) { reader in
            result = try reader.record(T.self)
        }
        return result
    }

    /// Decodes each row in turn without keeping them, through the type's generated
    /// column mapping: memory stays flat however many rows the query returns.
    @inlinable
    public func forEach<T: ColumnMapped>(_ type: T.Type, _ sql: SQL, _ body: (T) throws -> Void) throws {
        try mappedRows(type, sql, limit: .streaming) { reader in
            try body(try reader.record(T.self))
        }
    }

    /// The record with this primary key (a single-column key), or nil, decoded
    /// through the type's generated column mapping.
    @inlinable
    public func find<T: Record & ColumnMapped>(_ type: T.Type, id: some Encodable & Sendable) throws -> T? {
        let (text, values) = try findStatement(type, id: id, encoded: Value.plainKey(id))
        var result: T?
        try mappedRows(type, text: text, values: values, limit: .oneByPrimaryKey) { reader in
            result = try reader.record(T.self)
        }
        return result
    }

    /// Inserts many records in one savepoint, all or none, through the type's
    /// generated column mapping. It means what the `Record` batch insert means.
    @inlinable
    public func insert<T: Record & ColumnMapped>(contentsOf records: some Sequence<T>) throws {
        var iterator = records.makeIterator()
        try insertBatch(T.self) { writer in
            guard let record = iterator.next() else { return false }
            if writer.usesGeneratedMapping { try record.encode(columns: &writer) } else { try writer.encodeThroughCodable(record) }
            return true
        }
    }

    /// Runs a batch insert whose rows `next` writes, one per call, until it says there are no more.
    @usableFromInline
    func insertBatch<T: Record & ColumnMapped>(_ type: T.Type, _ next: (inout ColumnWriter) throws -> Bool) throws {
        let names = columnNames.names(for: type, keyStrategy: coding.keyStrategy) ?? ColumnNames(type: type, keyStrategy: coding.keyStrategy)
        var writer = ColumnWriter(names: names, options: coding.encoding, usesGeneratedMapping: coding.encoding.usesGeneratedMapping)
        // Where the key columns sit in a generated row, found once per batch.
        let keyPositions = names.hasRepeats ? nil : T.primaryKey.map { names.columns.firstIndex(of: $0) }
        try savepoint { db in
            var batch = BatchInsert(db: db, type: T.self)
            defer { batch.release() }
            var keys = ExplicitKeys(T.self)
            var row = EncodedColumns()
            while try Self.encoding(T.self, { () -> Bool in
                guard try next(&writer) else { return false }
                try writer.take(into: &row, for: type)
                if row.names == names.columns, let keyPositions {
                    // A row as generated: only a NULL key makes it another row.
                    if keyPositions.contains(where: { $0.map { row.values[$0].isNull } ?? false }) {
                        row = Self.droppingNilKeys(row, T.self)
                    }
                } else {
                    row = Self.droppingNilKeys(row, T.self)
                }
                return true
            }) {
                keys.note(row)
                try batch.add(&row)
            }
            try batch.flush()
            try keys.advanceGenerators(db)
        }
    }

    /// How many rows a mapped fetch reads.
    @usableFromInline
    enum RowLimit {
        /// Every row.
        case all
        /// At most one; a second is a `tooManyRows` error.
        case one
        /// At most one, found by primary key; a second is a `tooManyRows` error.
        case oneByPrimaryKey
        /// Every row, one at a time: the engine does not buffer the result.
        case streaming
    }

    @usableFromInline
    func mappedRows(_ type: any ColumnMapped.Type, _ sql: SQL, limit: RowLimit, _ body: (inout ColumnReader) throws -> Void) throws {
        try checkUsable()
        let (text, values) = try sql.rendered(for: dialect)
        try mappedRows(type, text: text, values: values, limit: limit, body)
    }

    /// Steps through a statement's rows and hands each to `body` as a reader.
    @usableFromInline
    func mappedRows(_ type: any ColumnMapped.Type, text: String, values: [Value], limit: RowLimit, copyingOut: Bool = false,
                    _ body: (inout ColumnReader) throws -> Void) throws {
        try withStatement(text: text, values: values, copyingOut: copyingOut) { statement, _ in
            if case .streaming = limit { try statement.prepareForStreaming() }
            guard try statement.step() else { return }
            let plan = self.plan(for: statement, type)
            // Room for one row's cells, read ahead when the engine can, on the stack.
            try withUnsafeTemporaryAllocation(of: RowCell.self, capacity: plan.mapping?.indexBuffer.count ?? 0) { cells in
                try readRows(statement, plan: plan, cells: cells.baseAddress, type, limit: limit, body)
            }
        }
    }

    /// The row loop of ``mappedRows(_:text:values:limit:_:)``, on a statement stepped to its first row.
    private func readRows(_ statement: any DriverStatement, plan: DecodePlan, cells: UnsafeMutablePointer<RowCell>?,
                          _ type: any ColumnMapped.Type, limit: RowLimit, _ body: (inout ColumnReader) throws -> Void) throws {
        var rows = 0
        // One reader for every row: it reads the statement in place, so only its position moves.
        var reader = ColumnReader(object: statement, plan: plan, mapping: plan.mapping, cells: cells)
        repeat {
            reader.rewind()
            do {
                try body(&reader)
            } catch let error as DecodingError where plan.mapping != nil {
                throw plan.locating(error, type, from: statement)
            }
            rows &+= 1
            switch limit {
            case .all: break
            case .one:
                // A statement the engine compiled to return one row at most needs no second step to prove it.
                if !statement.returnsOneRowAtMost, try statement.step() {
                    throw DatabaseError.fetchOneFoundMoreRows
                }
                return
            case .oneByPrimaryKey:
                // Unless the engine's plan holds one row at most, a second row proves the key not unique.
                if !statement.returnsOneRowAtMost, try statement.step() {
                    throw DatabaseError.findFoundMoreRows(type, primaryKey: (type as? any Record.Type)?.primaryKey ?? [])
                }
                return
            case .streaming:
                // Checked every 256 rows, not every row: prompt enough, and cheaper.
                if rows & 255 == 0 { try checkUsable() }
            }
        } while try statement.step()
    }

    /// The SQL of `find` and its bound key, the text rendered once per connection.
    ///
    /// `encoded` is the key's value when the caller knew it without the
    /// encoder (``Value/plainKey(_:)``); nil to encode it with the store's strategies.
    @usableFromInline
    func findStatement<T: Record>(_ type: T.Type, id: some Encodable & Sendable, encoded: Value? = nil) throws -> (String, [Value]) {
        let text: String
        let typeID = ObjectIdentifier(type)
        if let last = recordCache.lastFind, last.type == typeID {
            text = last.text
        } else if let cached = recordCache.findSQL[typeID] {
            text = cached
            recordCache.lastFind = (typeID, cached)
        } else {
            let key = try singleKey(type)
            text = try SQL("SELECT * FROM \(ident: T.tableName) WHERE \(ident: key) = \(Value.null)").rendered(for: dialect).text
            recordCache.findSQL[typeID] = text
            recordCache.lastFind = (typeID, text)
        }
        let key = try encoded ?? encodeKey(id, T.self)
        recordCache.findKey[0] = key
        return (text, recordCache.findKey)
    }
}

extension Value {
    /// The value of a key of a type no strategy changes (`Int`, `Int64`,
    /// `Int32`, `String`), or nil for any other type, which the encoder then
    /// writes. Inlined, so the type test is decided when the caller compiles,
    /// where the encoder asks the runtime whether the key's type conforms to
    /// its protocol on every call.
    @inlinable
    static func plainKey<K>(_ key: K) -> Value? {
        if K.self == Int64.self, let key = key as? Int64 { return .integer(key) }
        if K.self == Int.self, let key = key as? Int { return .integer(Int64(key)) }
        if K.self == Int32.self, let key = key as? Int32 { return .integer(Int64(key)) }
        if K.self == String.self, let key = key as? String { return .text(key) }
        return nil
    }
}

extension DatabaseError {
    /// `fetchOne` met a second row: the same error from every fetch path.
    static var fetchOneFoundMoreRows: DatabaseError {
        DatabaseError(.tooManyRows, "fetchOne found more than one row; add LIMIT 1 or use fetchAll")
    }

    /// `find(_:id:)` met a second row: the primary key is not unique.
    static func findFoundMoreRows(_ type: Any.Type, primaryKey: [String]) -> DatabaseError {
        DatabaseError(.tooManyRows, "find found more than one row: \(type).primaryKey \(primaryKey) is not unique")
    }
}

import Foundation

extension Database {
    /// Every record the query selects, in its order.
    ///
    /// ```swift
    /// let open = try db.fetchAll(Reminder.where { !$0.isCompleted }.order { $0.dueDate.ascending() })
    /// ```
    @inlinable
    public func fetchAll<T>(_ query: Query<T>) throws -> [T] {
        let (text, values) = try renderSelect(query)
        var results: [T] = []
        try mappedRows(T.self, text: text, values: values, limit: .all) { reader in
            results.append(try reader.record(T.self))
        }
        return results
    }

    /// Decodes each record the query selects in turn, without keeping them:
    /// memory stays flat however many there are.
    @inlinable
    public func forEach<T>(_ query: Query<T>, _ body: (T) throws -> Void) throws {
        let (text, values) = try renderSelect(query)
        try mappedRows(T.self, text: text, values: values, limit: .streaming) { reader in
            try body(try reader.record(T.self))
        }
    }

    /// The one record the query selects, or nil.
    ///
    /// - Throws: a `tooManyRows` ``DatabaseError`` when it selects more than one;
    ///   add `.limit(1)` for the first of several.
    @inlinable
    public func fetchOne<T>(_ query: Query<T>) throws -> T? {
        let (text, values) = try renderSelect(query)
        var result: T?
        try mappedRows(T.self, text: text, values: values, limit: .one) { reader in
            result = try reader.record(T.self)
        }
        return result
    }

    /// How many records the query selects (its limit and offset included).
    public func fetchCount<T>(_ query: Query<T>) throws -> Int {
        let renderer = try queryRenderer(rootTable: T.tableName)
        if query.limitCount != nil || query.offsetCount != nil {
            renderer.text += "SELECT count(*) FROM (SELECT 1 FROM "
            renderer.identifier(T.tableName)
            try renderer.renderWhere(query.filters)
            try renderer.renderPage(limit: query.limitCount, offset: query.offsetCount)
            renderer.text += ") AS " + dialect.quote(identifier: "page")
        } else {
            renderer.text += "SELECT count(*) FROM "
            renderer.identifier(T.tableName)
            try renderer.renderWhere(query.filters)
        }
        let statement = try renderer.statement()
        return try fetchOne(Int.self, text: statement.text, values: statement.values) ?? 0
    }

    /// Whether the query selects at least one record.
    public func exists<T>(_ query: Query<T>) throws -> Bool {
        let renderer = try queryRenderer(rootTable: T.tableName)
        renderer.text += "SELECT EXISTS (SELECT 1 FROM "
        renderer.identifier(T.tableName)
        try renderer.renderWhere(query.filters)
        try renderer.renderPage(limit: query.limitCount, offset: query.offsetCount)
        renderer.text += ")"
        let statement = try renderer.statement()
        return try fetchOne(Bool.self, text: statement.text, values: statement.values) ?? false
    }

    /// Sets columns of every record the query selects, and returns how many changed.
    ///
    /// ```swift
    /// try db.update(Reminder.where { $0.listID.eq(listID) && $0.isCompleted }) { [$0.isFlagged.to(false)] }
    /// ```
    ///
    /// - Throws: a `misuse` error for a query with a limit or an offset, which
    ///   an UPDATE cannot take on every engine.
    ///
    /// For a record with a ``Record/versionColumn`` the statement also adds one
    /// to the version of every row it changes (unless it assigns the version
    /// itself), so a save of a record read before it is a `conflict`.
    @discardableResult
    public func update<T>(_ query: Query<T>, set assignments: (T.Columns) -> [QueryAssignment]) throws -> Int {
        let renderer = try renderUpdate(query, assignments(T.columns))
        let statement = try renderer.statement()
        return try execute(text: statement.text, values: statement.values)
    }

    /// Deletes every record the query selects, and returns how many.
    ///
    /// - Throws: a `misuse` error for a query with a limit or an offset.
    @discardableResult
    public func delete<T>(_ query: Query<T>) throws -> Int {
        let renderer = try renderDelete(query)
        let statement = try renderer.statement()
        return try execute(text: statement.text, values: statement.values)
    }

    func renderUpdate<T>(_ query: Query<T>, _ assignments: [QueryAssignment]) throws -> QueryRenderer {
        try requireWholeTable(query, "update")
        guard !assignments.isEmpty else { throw DatabaseError.misuse("update(_:set:) needs at least one assignment") }
        let renderer = try queryRenderer(rootTable: T.tableName)
        renderer.text += "UPDATE "
        renderer.identifier(T.tableName)
        renderer.text += " SET "
        var assignsVersion = false
        for (index, assignment) in assignments.enumerated() {
            guard !assignment.key.isEmpty else { throw DatabaseError.misuse("update(_:set:) assigns to columns only, not to computed expressions") }
            if index > 0 { renderer.text += ", " }
            renderer.column(key: assignment.key)
            renderer.text += " = "
            try renderer.render(assignment.value)
            if let version = T.versionColumn, try columnName(QueryNode.QueryColumn(key: assignment.key, source: 0), in: T.self) == version {
                assignsVersion = true
            }
        }
        if let version = T.versionColumn, !assignsVersion {
            // A versioned record changed here is a new version: one read before conflicts when saved.
            renderer.text += ", "
            renderer.identifier(version)
            renderer.text += " = "
            renderer.identifier(version)
            renderer.text += " + 1"
        }
        try renderer.renderWhere(query.filters)
        return renderer
    }

    func renderDelete<T>(_ query: Query<T>) throws -> QueryRenderer {
        try requireWholeTable(query, "delete")
        let renderer = try queryRenderer(rootTable: T.tableName)
        renderer.text += "DELETE FROM "
        renderer.identifier(T.tableName)
        try renderer.renderWhere(query.filters)
        return renderer
    }

    /// The records with these primary keys (a single-column key), ordered by key.
    /// Keys without a record are left out.
    public func fetchAll<T: Record & ColumnMapped>(_ type: T.Type, ids: some Sequence<some Encodable & Sendable>) throws -> [T] {
        let (key, values) = try keyList(type, ids)
        guard !values.isEmpty else { return [] }
        let names = mappedColumnNames(type)
        var text = "SELECT " + names.map { dialect.quote(identifier: $0) }.joined(separator: ", ")
        text += " FROM " + dialect.quote(identifier: T.tableName) + " WHERE " + dialect.quote(identifier: key)
        text += " IN (" + values.indices.map { dialect.placeholder($0 + 1) }.joined(separator: ", ") + ")"
        text += " ORDER BY " + dialect.quote(identifier: key) + " ASC"
        var results: [T] = []
        try mappedRows(T.self, text: text, values: values, limit: .all) { reader in
            results.append(try reader.record(T.self))
        }
        return results
    }

    /// Deletes the records with these primary keys (a single-column key) and returns how many.
    @discardableResult
    public func delete<T: Record>(_ type: T.Type, ids: some Sequence<some Encodable & Sendable>) throws -> Int {
        let (key, values) = try keyList(type, ids)
        guard !values.isEmpty else { return 0 }
        let text = "DELETE FROM " + dialect.quote(identifier: T.tableName) + " WHERE " + dialect.quote(identifier: key)
            + " IN (" + values.indices.map { dialect.placeholder($0 + 1) }.joined(separator: ", ") + ")"
        return try execute(text: text, values: values)
    }

    /// Every row of the selection, in its order: values, tuples or records,
    /// as the selection was built.
    public func fetchAll<T, Output>(_ selection: Selection<T, Output>) throws -> [Output] {
        switch selection.reading {
        case .cells(let read):
            let (text, values) = try renderSelect(selection)
            return try withStatement(text: text, values: values) { statement, _ in
                var results: [Output] = []
                while try statement.step() { results.append(try read(self, statement)) }
                return results
            }
        case .mapped(let type):
            let names = mappedColumnNames(type)
            guard selection.outputs.count == names.count else {
                throw DatabaseError.misuse("select(into: \(type).self) has \(selection.outputs.count) outputs for its \(names.count) columns \(names)")
            }
            let (text, values) = try renderSelect(selection)
            var results: [Output] = []
            try mappedRows(type, text: text, values: values, limit: .all) { reader in
                func decode<M: ColumnMapped>(_ type: M.Type) throws -> M {
                    try reader.record(M.self)
                }
                guard let row = try decode(type) as? Output else {
                    throw DatabaseError.misuse("a selection into \(type) cannot be read as \(Output.self)")
                }
                results.append(row)
            }
            return results
        }
    }

    /// The one row of the selection (an aggregate without grouping has exactly one), or nil.
    ///
    /// - Throws: a `tooManyRows` ``DatabaseError`` when it has more than one.
    public func fetchOne<T, Output>(_ selection: Selection<T, Output>) throws -> Output? {
        let all = try fetchAll(selection)
        guard all.count <= 1 else { throw DatabaseError.fetchOneFoundMoreRows }
        return all.first
    }
}

// MARK: Rendering

extension Database {
    func queryRenderer(valuesOnly: Bool = false, rootTable: String? = nil) throws -> QueryRenderer {
        guard let dialect = queryDialect else {
            throw DatabaseError.misuse("\(dialect.engineName)'s dialect renders no queries: its backend does not implement QueryDialect")
        }
        let renderer = QueryRenderer(dialect: dialect, keyStrategy: coding.keyStrategy, encoding: coding.encoding)
        renderer.text.isEnabled = !valuesOnly
        renderer.rootTable = rootTable
        return renderer
    }

    /// The connection's renderer that writes no text, reused by every cached query shape.
    private func valuesRenderer() throws -> QueryRenderer {
        if let renderer = queryCache.valuesRenderer { return renderer }
        let renderer = try queryRenderer(valuesOnly: true)
        queryCache.valuesRenderer = renderer
        return renderer
    }

    func mappedColumnNames<T: ColumnMapped>(_ type: T.Type) -> [String] {
        (columnNames.names(for: type, keyStrategy: coding.keyStrategy) ?? ColumnNames(type: type, keyStrategy: coding.keyStrategy)).columns
    }

    /// The SELECT of a record query: the mapping's columns in order, so rows decode by position.
    @usableFromInline
    func renderSelect<T>(_ query: Query<T>) throws -> (String, [Value]) {
        let key = QueryShapeKey(query, operation: 1)
        if let key, let cached = queryCache.rendered[key], cached.matches(query) {
            let text = cached.sql
            // The SQL of this shape is known: only collect the values, with
            // the connection's values-only renderer (no subquery reaches it).
            let renderer = try valuesRenderer()
            defer { renderer.values = [] }
            try renderer.renderWhere(query.filters)
            try renderer.renderOrder(query.orderings, tieBreak: [])
            try renderer.renderPage(limit: query.limitCount, offset: query.offsetCount)
            return (text, renderer.values.inTextOrder(cached.order))
        }
        let renderer = try queryRenderer(rootTable: T.tableName)
        try renderRecordSelect(renderer, query)
        let (text, order) = try renderer.text.statement(for: renderer.dialect, valueCount: renderer.values.count)
        if let key {
            if queryCache.rendered.count >= 512 { queryCache.rendered.removeAll(keepingCapacity: true) }
            queryCache.rendered[key] = RenderedShape(query, operation: 1, sql: text, order: order)
        }
        return (text, renderer.values.inTextOrder(order))
    }

    /// A record query's whole SELECT, into `renderer`: the mapping's columns, the filters, the total order and the page.
    func renderRecordSelect<T>(_ renderer: QueryRenderer, _ query: Query<T>) throws {
        if let prefix = queryCache.selectPrefixes[ObjectIdentifier(T.self)] {
            renderer.text += prefix
        } else {
            renderer.text += "SELECT "
            for (index, name) in mappedColumnNames(T.self).enumerated() {
                if index > 0 { renderer.text += ", " }
                renderer.identifier(name)
            }
            renderer.text += " FROM "
            renderer.identifier(T.tableName)
            if let prefix = renderer.text.plainText { queryCache.selectPrefixes[ObjectIdentifier(T.self)] = prefix }
        }
        try renderer.renderWhere(query.filters)
        try renderOrder(renderer, query.orderings, tieBreak: T.primaryKey.map { QueryNode.columnNamed($0) })
        try renderer.renderPage(limit: query.limitCount, offset: query.offsetCount)
    }

    func renderSelect<T, V>(_ selection: Selection<T, V>) throws -> (String, [Value]) {
        let renderer = try queryRenderer(rootTable: T.tableName)
        renderer.mappedNames = { [unowned self] in self.mappedColumnNames($0) }
        try renderer.renderSelection(selection, ordered: true)
        return try renderer.statement()
    }

    func renderOrder(_ renderer: QueryRenderer, _ orderings: [QueryOrdering], tieBreak: [QueryNode]) throws {
        try renderer.renderOrder(orderings, tieBreak: tieBreak)
    }

    private func requireWholeTable<T>(_ query: Query<T>, _ operation: String) throws {
        guard query.limitCount == nil, query.offsetCount == nil else {
            throw DatabaseError.misuse("\(operation) cannot take a query with a limit or an offset: select the keys first, then \(operation) by key")
        }
    }

    private func keyList<T: Record>(_ type: T.Type, _ ids: some Sequence<some Encodable & Sendable>) throws -> (String, [Value]) {
        let key = try singleKey(type)
        let values = try ids.map { try encodeKey($0, T.self) }
        guard values.count <= dialect.maxBoundValues else {
            throw DatabaseError.misuse("\(values.count) keys are more than \(dialect.engineName) binds in one statement (\(dialect.maxBoundValues))")
        }
        return (key, values)
    }

    func fetchOne<V: Decodable>(_ type: V.Type, text: String, values: [Value]) throws -> V? {
        try withStatement(text: text, values: values) { statement, _ in
            guard try statement.step() else { return nil }
            return try decodeCell(V.self, statement, 0)
        }
    }

    func execute(text: String, values: [Value]) throws -> Int {
        try withStatement(text: text, values: values) { statement, _ in
            while try statement.step() {}
            return statement.changes
        }
    }

    /// One cell, decoded as the `Decodable` fetches decode a single column.
    func decodeCell<V: Decodable>(_ type: V.Type, _ statement: any DriverStatement, _ index: Int) throws -> V {
        let columns = statement.columns
        return try withExtendedLifetime(columns) {
            try ValueDecoding.decode(V.self, from: try statement.value(at: index), ColumnContext(columns: columns, index: index), coding.decoding)
        }
    }
}

extension Database {
    /// The SELECT a query runs on this store's engine, with placeholders where
    /// its values are bound: for documentation and debugging.
    ///
    /// ```swift
    /// try db.sqlText(of: Reminder.where { $0.title.contains("milk") })
    /// // SQLite:     SELECT "id", "title", ... FROM "reminders" WHERE (instr("title", ?1) > 0) ORDER BY "id" ASC NULLS LAST
    /// // PostgreSQL: SELECT "id", "title", ... FROM "reminders" WHERE (strpos("title", $1) > 0) ORDER BY "id" ASC NULLS LAST
    /// ```
    public func sqlText<T>(of query: Query<T>) throws -> String {
        try renderSelect(query).0
    }
}

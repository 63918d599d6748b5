/// A column named in a statement: a conflict target, or a column to update.
/// Every typed column (`$0.title`) is one.
public protocol QueryColumnReference: Sendable {
    /// The column's syntax tree.
    var node: QueryNode { get }
}

extension QueryExpression: QueryColumnReference {}

extension Database {
    /// Inserts a record, or, where it conflicts with a stored row on the
    /// columns of `target` (exactly those of a primary key or unique
    /// constraint), updates that row's `updating` columns from the record.
    /// Returns the row as stored.
    ///
    /// ```swift
    /// // One tag per title: a second "home" updates the stored tag's colour.
    /// let tag = try db.upsert(Tag(title: "home", color: 3), onConflict: { [$0.title] }, updating: { [$0.color] })
    /// ```
    ///
    /// `updating` nil updates every column but the target's and the primary
    /// key's. A target that matches no unique constraint is a `syntax` error
    /// on every engine.
    @discardableResult
    public func upsert<T: Record & ColumnMapped>(
        _ record: T, onConflict target: (T.Columns) -> [any QueryColumnReference],
        updating: ((T.Columns) -> [any QueryColumnReference])? = nil
    ) throws -> T {
        let columns = try encodeForInsert(record)
        let targetNames = try names(target(T.columns), T.self)
        guard !targetNames.isEmpty else { throw DatabaseError.misuse("upsert(_:onConflict:) needs at least one conflict column") }
        let updated = try updating.map { try names($0(T.columns), T.self) }
            ?? columns.names.filter { !targetNames.contains($0) && !T.primaryKey.contains($0) }
        guard !updated.isEmpty else {
            throw DatabaseError.misuse("upsert(_:onConflict:updating:) updates no column: use insert(_:ignoringConflictOn:) to keep the stored row")
        }
        for name in updated where !columns.names.contains(name) {
            throw DatabaseError.misuse("upsert(_:onConflict:updating:) updates \(name), which the record does not insert")
        }
        return try upsertRow(T.self, columns, target: targetNames, updating: updated)
    }

    /// Inserts a record unless it conflicts with a stored row on the columns of
    /// `target` (exactly those of a primary key or unique constraint). Returns
    /// the record as stored, or nil when the stored row was kept.
    ///
    /// ```swift
    /// try db.insert(ReminderTag(reminderID: 1, tagID: 2), ignoringConflictOn: { [$0.reminderID, $0.tagID] })
    /// ```
    @discardableResult
    public func insert<T: Record & ColumnMapped>(
        _ record: T, ignoringConflictOn target: (T.Columns) -> [any QueryColumnReference]
    ) throws -> T? {
        let columns = try encodeForInsert(record)
        let targetNames = try names(target(T.columns), T.self)
        guard !targetNames.isEmpty else { throw DatabaseError.misuse("insert(_:ignoringConflictOn:) needs at least one conflict column") }
        return try upsertRow(T.self, columns, target: targetNames, onConflict: .keep)
    }

    /// Inserts the rows of a selection decoded into `Target` (its outputs named
    /// after `Target`'s columns) and returns how many.
    ///
    /// ```swift
    /// try db.insert(Reminder.where { $0.isCompleted }.select(into: ArchivedReminder.self) { ($0.id, $0.title) })
    /// ```
    ///
    /// Caveat: `Target` is the table written; its generated keys are not
    /// advanced past keys the selection gives explicitly.
    @discardableResult
    public func insert<T, Target: Record & ColumnMapped>(_ selection: Selection<T, Target>) throws -> Int {
        let names = mappedColumnNames(Target.self)
        guard selection.outputs.count == names.count else {
            throw DatabaseError.misuse("select(into: \(Target.self).self) has \(selection.outputs.count) outputs for its \(names.count) columns \(names)")
        }
        let renderer = try queryRenderer(rootTable: T.tableName)
        renderer.mappedNames = { [unowned self] in self.mappedColumnNames($0) }
        renderer.text += "INSERT INTO "
        renderer.identifier(Target.tableName)
        renderer.text += " (" + names.map { dialect.quote(identifier: $0) }.joined(separator: ", ") + ") "
        try renderer.renderSelection(selection, ordered: true)
        let statement = try renderer.statement()
        return try execute(text: statement.text, values: statement.values)
    }

    /// Sets columns of every record the query selects, and returns the records
    /// as stored afterwards, by primary key.
    ///
    /// - Throws: a `misuse` error for a query with a limit or an offset.
    ///
    /// Caveat: on an engine without `UPDATE … RETURNING` (MariaDB; see
    /// ``Capabilities/updateReturning``) the rows are locked, updated and read
    /// back by primary key, and assigning to a primary key is a `misuse` error.
    public func updateAndFetchAll<T>(_ query: Query<T>, set assignments: (T.Columns) -> [QueryAssignment]) throws -> [T] {
        let assignments = assignments(T.columns)
        guard dialect.capabilities.updateReturning else { return try lockedUpdateAndFetchAll(query, assignments) }
        let renderer = try renderUpdate(query, assignments)
        return try returnedRecords(T.self, renderer)
    }

    /// `updateAndFetchAll` without `UPDATE … RETURNING`: the selected rows'
    /// keys, locked (`SELECT … FOR UPDATE`), then the UPDATE, then the rows by key.
    private func lockedUpdateAndFetchAll<T>(_ query: Query<T>, _ assignments: [QueryAssignment]) throws -> [T] {
        let keys = T.primaryKey
        for assignment in assignments where !assignment.key.isEmpty {
            let name = try columnName(QueryNode.QueryColumn(key: assignment.key, source: 0), in: T.self)
            guard !keys.contains(name) else {
                throw DatabaseError.misuse("updateAndFetchAll assigns to the primary key \(name), which \(dialect.engineName) cannot read rows back after (it has no UPDATE … RETURNING)")
            }
        }
        let update = try renderUpdate(query, assignments)
        let select = try queryRenderer(rootTable: T.tableName)
        select.text += "SELECT " + keys.map { dialect.quote(identifier: $0) }.joined(separator: ", ") + " FROM "
        select.identifier(T.tableName)
        try select.renderWhere(query.filters)
        select.text += " FOR UPDATE"
        let selectStatement = try select.statement()
        let locked = try withStatement(text: selectStatement.text, values: selectStatement.values) { statement, _ in
            var rows: [[Value]] = []
            while try statement.step() { rows.append(try keys.indices.map { try statement.value(at: $0) }) }
            return rows
        }
        let updateStatement = try update.statement()
        _ = try execute(text: updateStatement.text, values: updateStatement.values)
        guard !locked.isEmpty else { return [] }
        // The rows by key, a bounded number of keys per statement.
        let names = mappedColumnNames(T.self)
        let keyIndexes = try keys.map { key in
            guard let index = names.firstIndex(of: key) else {
                throw DatabaseError.misuse("\(T.self).primaryKey names \(key), which is not one of its columns \(names)")
            }
            return index
        }
        let perStatement = max(1, 1_000 / keys.count)
        var results: [(T, [Value])] = []
        var start = 0
        while start < locked.count {
            let chunk = locked[start..<min(start + perStatement, locked.count)]
            start += chunk.count
            var text = "SELECT " + names.map { dialect.quote(identifier: $0) }.joined(separator: ", ") + " FROM " + dialect.quote(identifier: T.tableName) + " WHERE "
            var position = 0
            text += chunk.map { _ in
                "(" + keys.map { key in
                    position += 1
                    return dialect.quote(identifier: key) + " = " + dialect.placeholder(position)
                }.joined(separator: " AND ") + ")"
            }.joined(separator: " OR ")
            try mappedRows(T.self, text: text, values: chunk.flatMap { $0 }, limit: .all) { reader in
                let key = try keyIndexes.map { try reader.source.value(at: $0) }
                results.append((try reader.record(T.self), key))
            }
        }
        return results.sorted { Value.keyPrecedes($0.1, $1.1) }.map(\.0)
    }

    /// Deletes every record the query selects, and returns them as they were, by primary key.
    ///
    /// - Throws: a `misuse` error for a query with a limit or an offset.
    public func deleteAndFetchAll<T>(_ query: Query<T>) throws -> [T] {
        let renderer = try renderDelete(query)
        return try returnedRecords(T.self, renderer)
    }

    // MARK: Parts

    /// The column names of typed columns of `T`.
    private func names<T: ColumnMapped>(_ references: [any QueryColumnReference], _ type: T.Type) throws -> [String] {
        try references.map { reference in
            guard case .column(let column) = reference.node.kind else {
                throw DatabaseError.misuse("a column of \(T.self) is needed here, not a computed expression")
            }
            return try columnName(column, in: T.self)
        }
    }

    /// Runs an UPDATE or DELETE with `RETURNING` the mapped columns, and the records it returned by primary key.
    private func returnedRecords<T: Record & ColumnMapped>(_ type: T.Type, _ renderer: QueryRenderer) throws -> [T] {
        let names = mappedColumnNames(T.self)
        renderer.text += " RETURNING " + names.map { dialect.quote(identifier: $0) }.joined(separator: ", ")
        let keyIndexes = try T.primaryKey.map { key in
            guard let index = names.firstIndex(of: key) else {
                throw DatabaseError.misuse("\(T.self).primaryKey names \(key), which is not one of its columns \(names)")
            }
            return index
        }
        var results: [(T, [Value])] = []
        let statement = try renderer.statement()
        try mappedRows(T.self, text: statement.text, values: statement.values, limit: .all) { reader in
            let key = try keyIndexes.map { try reader.source.value(at: $0) }
            results.append((try reader.record(T.self), key))
        }
        // RETURNING follows no ORDER BY: the primary key orders them on every engine.
        return results.sorted { Value.keyPrecedes($0.1, $1.1) }.map(\.0)
    }
}

extension Value {
    /// The order of primary keys: integers by value, text by code point, others by their bytes or description.
    static func keyPrecedes(_ a: [Value], _ b: [Value]) -> Bool {
        for (x, y) in zip(a, b) where x != y {
            switch (x, y) {
            case (.integer(let i), .integer(let j)): return i < j
            case (.text(let s), .text(let t)): return s.utf8.lexicographicallyPrecedes(t.utf8)
            case (.blob(let s), .blob(let t)): return s.lexicographicallyPrecedes(t)
            default: return String(describing: x).utf8.lexicographicallyPrecedes(String(describing: y).utf8)
            }
        }
        return false
    }
}

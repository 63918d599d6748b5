extension Database {
    /// Every record the query selects, each with its children, in the query's order.
    public func fetchAll<P, C>(_ query: IncludingAll<P, C>) throws -> [(P, [C])] {
        try requireUnpaged(query.children, "including(all:)")
        let parentKey = try singleKey(P.self)
        let childKey = try columnName(query.foreignKey, in: C.self)
        let parents = try keyedRecords(query.parents, key: parentKey)
        guard !parents.isEmpty else { return [] }
        var children = query.children
        children.filters.append(Self.keyIn(childKey, keysOf: query.parents, key: parentKey))
        var byParent: [Value: [C]] = [:]
        for (child, key) in try keyedRecords(children, key: childKey) { byParent[key, default: []].append(child) }
        return parents.map { parent, key in (parent, byParent[key] ?? []) }
    }

    /// Every record the query selects, each with the record its column names or nil, in the query's order.
    public func fetchAll<T, O>(_ query: IncludingOptional<T, O>) throws -> [(T, O?)] {
        let (records, others) = try recordsWithOthers(query.records, O.self, query.foreignKey)
        return records.map { record, key in (record, others[key]) }
    }

    /// Every record the query selects that names a record of the other type, with it, in the query's order.
    public func fetchAll<T, O>(_ query: IncludingRequired<T, O>) throws -> [(T, O)] {
        var records = query.records
        let otherKey = try singleKey(O.self)
        let key = try columnName(query.foreignKey, in: T.self)
        // Left out by the query, so a limit counts only records that have one.
        records.filters.append(Self.keyIn(key, keysOf: Query<O>(), key: otherKey))
        let (found, others) = try recordsWithOthers(records, O.self, query.foreignKey)
        // A record deleted between the two reads of a read access cannot happen: both run in one transaction.
        return found.compactMap { record, key in others[key].map { (record, $0) } }
    }

    /// Every record the query selects, each with the targets the link table joins it to, in the query's order.
    public func fetchAll<T, L, G>(_ query: IncludingThrough<T, L, G>) throws -> [(T, [G])] {
        try loadThrough(query, alsoReading: nil).map { ($0.record, $0.targets) }
    }

    /// Every record the query selects, each with its children, and each child
    /// with the targets the link table joins it to, in the queries' orders.
    public func fetchAll<P, C, L, G>(_ query: IncludingAllThrough<P, C, L, G>) throws -> [(P, [(C, [G])])] {
        try requireUnpaged(query.children.children, "including(all:)")
        let parentKey = try singleKey(P.self)
        let childKey = try columnName(query.children.foreignKey, in: C.self)
        let parents = try keyedRecords(query.children.parents, key: parentKey)
        guard !parents.isEmpty else { return [] }
        var children = query.children.children
        children.filters.append(Self.keyIn(childKey, keysOf: query.children.parents, key: parentKey))
        let through = IncludingThrough<C, L, G>(records: children, targets: query.targets, rootKey: query.rootKey, targetKey: query.targetKey)
        var byParent: [Value: [(C, [G])]] = [:]
        for child in try loadThrough(through, alsoReading: childKey) { byParent[child.extra, default: []].append((child.record, child.targets)) }
        return parents.map { parent, key in (parent, byParent[key] ?? []) }
    }

    /// Records with their targets through a link table, and the value of one more of the records' columns.
    private func loadThrough<T, L, G>(
        _ query: IncludingThrough<T, L, G>, alsoReading column: String?
    ) throws -> [(record: T, targets: [G], extra: Value)] {
        try requireUnpaged(query.targets, "including(all:through:)")
        let rootKey = try singleKey(T.self), targetKey = try singleKey(G.self)
        let linkRoot = try columnName(query.rootKey, in: L.self), linkTarget = try columnName(query.targetKey, in: L.self)
        let records = try keyedRecords(query.records, key: rootKey, alsoReading: column)
        guard !records.isEmpty else { return [] }
        var theirLinks = Query<L>()
        theirLinks.filters.append(Self.keyIn(linkRoot, keysOf: query.records, key: rootKey))
        // The links of these records: (root key, target key) pairs.
        let renderer = try queryRenderer(rootTable: L.tableName)
        renderer.text += "SELECT "
        renderer.identifier(linkRoot)
        renderer.text += ", "
        renderer.identifier(linkTarget)
        renderer.text += " FROM "
        renderer.identifier(L.tableName)
        try renderer.renderWhere(theirLinks.filters)
        var links: [Value: [Value]] = [:]
        let statement = try renderer.statement()
        try withStatement(text: statement.text, values: statement.values) { statement, _ in
            while try statement.step() {
                let (root, target) = (try statement.value(at: 0), try statement.value(at: 1))
                guard root != .null, target != .null else { continue }
                if !(links[root]?.contains(target) ?? false) { links[root, default: []].append(target) }
            }
        }
        // The targets any of them links to, in the targets' order.
        var targets = query.targets
        targets.filters.append(Self.keyIn(targetKey, keysOf: theirLinks, key: linkTarget))
        var position: [Value: Int] = [:]
        let found = try keyedRecords(targets, key: targetKey)
        for (index, (_, key)) in found.enumerated() { position[key] = index }
        return records.map { record, key, extra in
            let indexes = (links[key] ?? []).compactMap { position[$0] }.sorted()
            return (record, indexes.map { found[$0].0 }, extra)
        }
    }

    // MARK: Parts

    /// The records a query selects, each with the value of its column `key`.
    private func keyedRecords<T>(_ query: Query<T>, key: String) throws -> [(T, Value)] {
        try keyedRecords(query, key: key, alsoReading: nil).map { ($0.0, $0.1) }
    }

    /// The records a query selects, each with the values of its column `key` and of `column` (NULL without one).
    private func keyedRecords<T>(_ query: Query<T>, key: String, alsoReading column: String?) throws -> [(T, Value, Value)] {
        let names = mappedColumnNames(T.self)
        func index(_ name: String) throws -> Int {
            guard let index = names.firstIndex(of: name) else {
                throw DatabaseError.misuse("\(T.self) has no column \(name) among its columns \(names)")
            }
            return index
        }
        let keyIndex = try index(key), extraIndex = try column.map(index)
        let (text, values) = try renderSelect(query)
        var results: [(T, Value, Value)] = []
        try mappedRows(T.self, text: text, values: values, limit: .all) { reader in
            let keyValue = try reader.source.value(at: keyIndex)
            let extra = try extraIndex.map { try reader.source.value(at: $0) } ?? .null
            results.append((try reader.record(T.self), keyValue, extra))
        }
        return results
    }

    /// Records with the records of `O` their column `foreignKey` names, by that column's value.
    private func recordsWithOthers<T, O: Record & ColumnMapped>(
        _ records: Query<T>, _ other: O.Type, _ foreignKey: QueryNode.QueryColumn
    ) throws -> ([(T, Value)], [Value: O]) {
        let otherKey = try singleKey(O.self)
        let key = try columnName(foreignKey, in: T.self)
        let found = try keyedRecords(records, key: key)
        guard !found.isEmpty else { return ([], [:]) }
        var others = Query<O>()
        others.filters.append(Self.keyIn(otherKey, keysOf: records, key: key))
        var byKey: [Value: O] = [:]
        for (record, value) in try keyedRecords(others, key: otherKey) { byKey[value] = record }
        return (found, byKey)
    }

    /// `column IN (SELECT key FROM query's table WHERE its filters [ORDER BY and page])`.
    private static func keyIn<T>(_ column: String, keysOf query: Query<T>, key: String) -> QueryNode {
        QueryNode(.inSubquery(.columnNamed(column), QueryNode.Subquery { renderer in
            try renderKeys(renderer, of: query, key: key)
        }, negated: false), type: .bool)
    }

    /// `(SELECT key FROM table WHERE filters)`, with the query's order and page when it has one.
    private static func renderKeys<T>(_ renderer: QueryRenderer, of query: Query<T>, key: String) throws {
        let selection = Selection<T, Value>(query: query, outputs: [.columnNamed(key)], reading: .cells { _, _ in .null })
        try renderer.renderSubquery(selection)
    }

    /// The column name of a typed column of `T`.
    func columnName<T: ColumnMapped>(_ column: QueryNode.QueryColumn, in type: T.Type) throws -> String {
        guard !column.key.isEmpty, column.source == 0 else {
            throw DatabaseError.misuse("a column of \(T.self) is needed here, not a computed expression or another table's column")
        }
        return column.isColumnName || coding.keyStrategy.isDefault ? column.key : coding.keyStrategy.columnName(for: column.key)
    }

    private func requireUnpaged<T>(_ query: Query<T>, _ operation: String) throws {
        guard query.limitCount == nil, query.offsetCount == nil else {
            throw DatabaseError.misuse("\(operation) cannot limit the related records: a limit would count all records' together")
        }
    }
}

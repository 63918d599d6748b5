import Foundation

extension Database {
    /// Every pair the join selects, in its order.
    public func fetchAll<T, U>(_ join: Join<T, U>) throws -> [(T, U)] {
        var results: [(T, U)] = []
        try joinedRows(T.self, U.self, join.parts) { first, second in
            guard let second else { return }
            results.append((first, second))
        }
        return results
    }

    /// Every record of the first table with each match in the second, or nil, in the join's order.
    public func fetchAll<T, U>(_ join: LeftJoin<T, U>) throws -> [(T, U?)] {
        var results: [(T, U?)] = []
        try joinedRows(T.self, U.self, join.parts) { results.append(($0, $1)) }
        return results
    }

    /// Every triple the join selects, in its order.
    public func fetchAll<T, U, V>(_ join: Join3<T, U, V>) throws -> [(T, U, V)] {
        let renderer = try queryRenderer()
        renderer.qualifiesColumns = true
        let names = [mappedColumnNames(T.self), mappedColumnNames(U.self), mappedColumnNames(V.self)]
        renderer.text += "SELECT "
        for (source, columns) in zip([0, 1, QuerySource.joinedThird.index], names) {
            for (index, name) in columns.enumerated() {
                if source > 0 || index > 0 { renderer.text += ", " }
                renderer.column(QueryNode.QueryColumn(key: name, source: source, isColumnName: true))
            }
        }
        try renderJoinBody(renderer, T.self, U.self, join.parts, ordered: true)
        let statement = try renderer.statement()
        return try withStatement(text: statement.text, values: statement.values) { statement, _ in
            let sets = names.map(ColumnSet.init)
            let plans = [DecodePlan(columns: sets[0], options: coding.decoding, type: T.self),
                         DecodePlan(columns: sets[1], options: coding.decoding, type: U.self),
                         DecodePlan(columns: sets[2], options: coding.decoding, type: V.self)]
            let offsets = [0, names[0].count, names[0].count + names[1].count]
            let rows = (0..<3).map { ShiftedRowSource(base: statement, offset: offsets[$0], columns: sets[$0]) }
            func record<R: ColumnMapped>(_ type: R.Type, _ part: Int) throws -> R {
                var reader = ColumnReader(source: rows[part], plan: plans[part], mapping: plans[part].mapping)
                return try reader.record(R.self)
            }
            var results: [(T, U, V)] = []
            while try statement.step() {
                results.append((try record(T.self, 0), try record(U.self, 1), try record(V.self, 2)))
            }
            return results
        }
    }

    /// How many triples the join selects.
    public func fetchCount<T, U, V>(_ join: Join3<T, U, V>) throws -> Int {
        try joinCount(T.self, U.self, join.parts)
    }

    /// How many pairs the join selects.
    public func fetchCount<T, U>(_ join: Join<T, U>) throws -> Int {
        try joinCount(T.self, U.self, join.parts)
    }

    /// How many pairs (or unmatched first records) the left join selects.
    public func fetchCount<T, U>(_ join: LeftJoin<T, U>) throws -> Int {
        try joinCount(T.self, U.self, join.parts)
    }

    private func joinCount<T: Record & ColumnMapped, U: Record & ColumnMapped>(_ first: T.Type, _ second: U.Type, _ parts: JoinParts) throws -> Int {
        let renderer = try queryRenderer()
        renderer.qualifiesColumns = true
        renderer.text += "SELECT count(*) FROM (SELECT 1"
        try renderJoinBody(renderer, T.self, U.self, parts, ordered: false)
        renderer.text += ") AS " + dialect.quote(identifier: "page")
        let statement = try renderer.statement()
        return try fetchOne(Int.self, text: statement.text, values: statement.values) ?? 0
    }

    /// FROM, JOIN, WHERE, GROUP BY and HAVING (of a selection), ORDER BY (when `ordered`) and the page of a join.
    func renderJoinBody<T: Record & ColumnMapped, U: Record & ColumnMapped>(
        _ renderer: QueryRenderer, _ first: T.Type, _ second: U.Type, _ parts: JoinParts, ordered: Bool,
        grouping: (groups: [QueryNode], having: [QueryNode], aggregated: Bool)? = nil
    ) throws {
        renderer.text += " FROM "
        renderer.identifier(T.tableName)
        renderer.text += " AS "
        renderer.identifier(QueryRenderer.alias(0))
        renderer.text += parts.isLeft ? " LEFT JOIN " : " JOIN "
        renderer.identifier(U.tableName)
        renderer.text += " AS "
        renderer.identifier(QueryRenderer.alias(1))
        renderer.text += " ON "
        try renderer.renderCondition(parts.on)
        if let third = parts.third {
            renderer.text += " JOIN "
            renderer.identifier(third.table)
            renderer.text += " AS "
            renderer.identifier(QueryRenderer.alias(QuerySource.joinedThird.index))
            renderer.text += " ON "
            try renderer.renderCondition(third.on)
        }
        try renderer.renderWhere(parts.filters)
        if let grouping { try renderer.renderGrouping(grouping.groups, having: grouping.having) }
        if ordered {
            var tieBreak = T.primaryKey.map { QueryNode.columnNamed($0, source: 0) } + U.primaryKey.map { QueryNode.columnNamed($0, source: 1) }
            tieBreak += (parts.third?.primaryKey ?? []).map { QueryNode.columnNamed($0, source: QuerySource.joinedThird.index) }
            // Grouped rows end their order with the group keys; one aggregated row needs none.
            if let grouping, grouping.aggregated || !grouping.groups.isEmpty { tieBreak = grouping.groups }
            try renderOrder(renderer, parts.orderings, tieBreak: tieBreak)
        }
        try renderer.renderPage(limit: parts.limitCount, offset: parts.offsetCount)
    }

    /// Runs a join and hands each row's two records to `body`; the second is nil
    /// when its primary key is NULL (a left join's unmatched record).
    private func joinedRows<T: Record & ColumnMapped, U: Record & ColumnMapped>(
        _ first: T.Type, _ second: U.Type, _ parts: JoinParts, _ body: (T, U?) throws -> Void
    ) throws {
        let renderer = try queryRenderer()
        renderer.qualifiesColumns = true
        let firstNames = mappedColumnNames(T.self)
        let secondNames = mappedColumnNames(U.self)
        renderer.text += "SELECT "
        for (source, names) in [(0, firstNames), (1, secondNames)] {
            for (index, name) in names.enumerated() {
                if source > 0 || index > 0 { renderer.text += ", " }
                renderer.column(QueryNode.QueryColumn(key: name, source: source, isColumnName: true))
            }
        }
        try renderJoinBody(renderer, T.self, U.self, parts, ordered: true)
        let keyIndexes = try U.primaryKey.map { key in
            guard let index = secondNames.firstIndex(of: key) else {
                throw DatabaseError.misuse("\(U.self).primaryKey names \(key), which is not one of its columns \(secondNames)")
            }
            return firstNames.count + index
        }
        let statement = try renderer.statement()
        try withStatement(text: statement.text, values: statement.values) { statement, _ in
            let firstColumns = ColumnSet(firstNames), secondColumns = ColumnSet(secondNames)
            let firstPlan = DecodePlan(columns: firstColumns, options: coding.decoding, type: T.self)
            let secondPlan = DecodePlan(columns: secondColumns, options: coding.decoding, type: U.self)
            let firstRow = ShiftedRowSource(base: statement, offset: 0, columns: firstColumns)
            let secondRow = ShiftedRowSource(base: statement, offset: firstNames.count, columns: secondColumns)
            while try statement.step() {
                var reader = ColumnReader(source: firstRow, plan: firstPlan, mapping: firstPlan.mapping)
                let record = try reader.record(T.self)
                var other: U?
                if !keyIndexes.allSatisfy({ statement.isNull(at: $0) }) {
                    var reader = ColumnReader(source: secondRow, plan: secondPlan, mapping: secondPlan.mapping)
                    other = try reader.record(U.self)
                }
                try body(record, other)
            }
        }
    }
}

/// The columns of one table in a joined row: `columns` are that table's, at
/// `offset` in the row. An object, made once per statement.
final class ShiftedRowSource: RowSource {
    let base: any DriverStatement
    let offset: Int
    let columns: ColumnSet

    init(base: any DriverStatement, offset: Int, columns: ColumnSet) {
        self.base = base
        self.offset = offset
        self.columns = columns
    }

    func value(at index: Int) throws -> Value { try base.value(at: offset + index) }
    func isNull(at index: Int) -> Bool { base.isNull(at: offset + index) }
    func integer(at index: Int) -> Int64? { base.integer(at: offset + index) }
    func double(at index: Int) -> Double? { base.double(at: offset + index) }
    func bool(at index: Int) -> Bool? { base.bool(at: offset + index) }
    var storesBooleansAsIntegers: Bool { base.storesBooleansAsIntegers }
    func date(at index: Int) -> Date? { base.date(at: offset + index) }
    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? { base.unsafeTextBytes(at: offset + index) }
}

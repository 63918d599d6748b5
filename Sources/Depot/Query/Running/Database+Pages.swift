import Foundation

extension Database {
    /// The first page of a query, or the page after `cursor`: at most `limit`
    /// records in the query's order, by the values of its ordering terms
    /// (keyset pagination), not by an offset.
    ///
    /// ```swift
    /// let byDue = Reminder.where { !$0.isCompleted }.order { [$0.dueDate.ascending(nulls: .last), $0.title] }
    /// var page = try db.fetchPage(byDue, limit: 50)
    /// while let next = page.next {
    ///     page = try db.fetchPage(byDue, after: next, limit: 50)
    /// }
    /// ```
    ///
    /// Each page costs what the first does (an index on the ordering columns
    /// serves it), and a row inserted or deleted between pages neither
    /// repeats a row nor skips one that was there throughout. The order is
    /// made total with the primary key, as every record query's is; NULLs go
    /// where the order puts them and text compares by code point, on every engine.
    ///
    /// - Throws: a `misuse` ``DatabaseError`` for a query with its own limit
    ///   or offset, a limit below 1, or a cursor made for another order.
    public func fetchPage<T>(_ query: Query<T>, after cursor: PageCursor? = nil, limit: Int) throws -> Page<T> {
        let (records, cursors, more) = try page(query, from: cursor, backward: false, limit: limit)
        return Page(items: records, next: more ? cursors.last : nil, previous: cursor == nil ? nil : cursors.first)
    }

    /// The page before `cursor`: at most `limit` records in the query's order,
    /// the last of them just before the cursor's row.
    ///
    /// - Throws: as ``fetchPage(_:after:limit:)``.
    public func fetchPage<T>(_ query: Query<T>, before cursor: PageCursor, limit: Int) throws -> Page<T> {
        let (records, cursors, more) = try page(query, from: cursor, backward: true, limit: limit)
        return Page(items: records.reversed(), next: cursors.first, previous: more ? cursors.last : nil)
    }

    /// Up to `limit` records strictly after (or, `backward`, before) the
    /// cursor in the query's order (before: nearest first), each record's
    /// cursor, and whether more rows follow them.
    private func page<T>(_ query: Query<T>, from cursor: PageCursor?, backward: Bool, limit: Int) throws -> ([T], [PageCursor], Bool) {
        guard query.limitCount == nil, query.offsetCount == nil else {
            throw DatabaseError.misuse("fetchPage takes a query without a limit or an offset: the page's limit is its own")
        }
        guard limit >= 1 else { throw DatabaseError.misuse("a page's limit is at least 1 (\(limit))") }
        let renderer = try queryRenderer(rootTable: T.tableName)
        let terms = renderer.totalOrder(query.orderings, tieBreak: T.primaryKey.map { QueryNode.columnNamed($0) })
        let order = try orderMark(T.self, terms)
        var filters = query.filters
        if let cursor {
            guard cursor.order == order, cursor.values.count == terms.count else {
                throw DatabaseError(.misuse, "this page cursor was made for another order of \(T.tableName): start again from the first page",
                                    table: T.tableName)
            }
            filters.append(Self.keyset(after: cursor.values, terms.map { backward ? $0.reversed : $0 }))
        }
        let names = mappedColumnNames(T.self)
        renderer.text += "SELECT "
        for (index, name) in names.enumerated() {
            if index > 0 { renderer.text += ", " }
            renderer.identifier(name)
        }
        for (index, term) in terms.enumerated() {
            renderer.text += ", "
            try renderer.render(term.node)
            renderer.text += " AS "
            renderer.identifier("depot_page_\(index)")
        }
        renderer.text += " FROM "
        renderer.identifier(T.tableName)
        try renderer.renderWhere(filters)
        renderer.text += " ORDER BY "
        for (index, term) in terms.enumerated() {
            if index > 0 { renderer.text += ", " }
            try renderer.renderOrdering(backward ? term.reversed : term)
        }
        try renderer.renderPage(limit: limit + 1, offset: nil)
        var records: [T] = []
        var cursors: [PageCursor] = []
        var more = false
        let statement = try renderer.statement()
        try withStatement(text: statement.text, values: statement.values) { statement, _ in
            guard try statement.step() else { return }
            let plan = self.plan(for: statement, T.self)
            repeat {
                guard records.count < limit else {
                    more = true
                    while try statement.step() {}
                    break
                }
                records.append(try RowDecoder.decode(T.self, from: statement, plan: plan))
                cursors.append(PageCursor(order: order, values: try terms.indices.map { try statement.value(at: names.count + $0) }))
            } while try statement.step()
        }
        return (records, cursors, more)
    }

    /// A mark of an order: its rendered terms and their bound values, hashed
    /// (FNV-1a, the same in every process), with the table's name.
    private func orderMark<T: Record>(_ type: T.Type, _ terms: [QueryOrdering]) throws -> String {
        let renderer = try queryRenderer(rootTable: T.tableName)
        for term in terms {
            try renderer.renderOrdering(term)
            renderer.text += ";"
        }
        let statement = try renderer.statement()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (statement.text + "\u{1}" + statement.values.map { PageCursor.tagged($0).joined(separator: "\u{2}") }.joined(separator: "\u{1}")).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return T.tableName + ":" + String(hash, radix: 16)
    }

    /// The rows strictly after the row whose terms hold `values`, in the order
    /// of `terms`: for each term, the rows equal on every term before it and
    /// after it on this one, with NULLs where the term places them.
    static func keyset(after values: [Value], _ terms: [QueryOrdering]) -> QueryNode {
        var alternatives: [QueryNode] = []
        var equalSoFar: [QueryNode] = []
        for (term, value) in zip(terms, values) {
            let bound = QueryNode(.value(BoundValue(value)), type: term.node.type)
            let isNull = QueryNode(.isNull(term.node, negated: false), type: .bool)
            let isNotNull = QueryNode(.isNull(term.node, negated: true), type: .bool)
            let after: QueryNode?
            if value.isNull {
                after = term.nulls == .first ? isNotNull : nil
            } else {
                let beyond = QueryNode(.compare(term.node, term.descending ? .less : .greater, bound), type: .bool)
                after = term.nulls == .last ? QueryNode(.or([beyond, isNull]), type: .bool) : beyond
            }
            if let after { alternatives.append(QueryNode(.and(equalSoFar + [after]), type: .bool)) }
            equalSoFar.append(value.isNull ? isNull : QueryNode(.compare(term.node, .equal, bound), type: .bool))
        }
        return alternatives.isEmpty ? QueryNode(.constant(false), type: .bool) : QueryNode(.or(alternatives), type: .bool)
    }
}

extension QueryOrdering {
    /// The opposite order: the other direction, NULLs at the other end.
    var reversed: QueryOrdering {
        QueryOrdering(node: node, descending: !descending, nulls: nulls == .first ? .last : .first)
    }
}

/// The clauses of a SELECT around its expressions: WHERE, GROUP BY and
/// HAVING, ORDER BY (always a total order), the page, and subqueries.
extension QueryRenderer {
    func renderOrdering(_ ordering: QueryOrdering) throws {
        let expression = try renderedBinary(ordering.node, ordering: true)
        text.append(dialect.ordering(expression, descending: ordering.descending, nullsFirst: ordering.nulls == .first))
    }

    func renderWhere(_ filters: [QueryNode]) throws {
        guard !filters.isEmpty else { return }
        text += " WHERE "
        try renderCondition(filters.count == 1 ? filters[0] : QueryNode(.and(filters), type: .bool))
    }

    func renderPage(limit: Int?, offset: Int?) throws {
        if let limit {
            guard limit >= 0 else { throw DatabaseError.misuse("a query's limit cannot be negative (\(limit))") }
            text += " LIMIT "
            bind(.integer(Int64(limit)))
        }
        if let offset {
            guard offset >= 0 else { throw DatabaseError.misuse("a query's offset cannot be negative (\(offset))") }
            if limit == nil {
                // Bound before the text is written: with the text cached, only the value is collected.
                let placeholder = bindingPlaceholder(.integer(Int64(offset)))
                text.append(" " + dialect.offsetWithoutLimit(placeholder))
            } else {
                text += " OFFSET "
                bind(.integer(Int64(offset)))
            }
        }
    }

    /// The terms, then the tie-break terms not already ordered by (ascending, NULLs last).
    func totalOrder(_ orderings: [QueryOrdering], tieBreak: [QueryNode]) -> [QueryOrdering] {
        var terms = orderings
        func resolved(_ node: QueryNode) -> String? {
            guard case .column(let column) = node.kind else { return nil }
            return "\(column.source).\(name(of: column))"
        }
        let ordered = Set(orderings.compactMap { resolved($0.node) })
        for node in tieBreak {
            if let name = resolved(node), ordered.contains(name) { continue }
            terms.append(QueryOrdering(node: node, descending: false, nulls: .last))
        }
        return terms
    }

    /// ORDER BY the terms, then the tie-break terms not already ordered by.
    func renderOrder(_ orderings: [QueryOrdering], tieBreak: [QueryNode]) throws {
        guard text.isEnabled else {
            // Collecting values: the terms may hold some; the tie-break holds none.
            for ordering in orderings { try render(ordering.node) }
            return
        }
        let terms = totalOrder(orderings, tieBreak: tieBreak)
        guard !terms.isEmpty else { return }
        text += " ORDER BY "
        for (index, term) in terms.enumerated() {
            if index > 0 { text += ", " }
            try renderOrdering(term)
        }
    }

    /// A selection's SELECT; with `ordered` false (a subquery of IN), no ORDER BY unless it has a page.
    ///
    /// A selected value that can fail (integer arithmetic) is computed only
    /// for the rows the query returns: with a page, the rows are found first,
    /// in a subquery, and the values computed over them. An engine otherwise
    /// computes them for rows the page leaves out, or not, by its plan:
    /// PostgreSQL computes a row's outputs before a sort and before an OFFSET
    /// skips it, SQLite after an OFFSET when it reads in order, so `10 / rank`
    /// over a page failed on one and not on the other, and on PostgreSQL by its
    /// table's statistics.
    ///
    /// Groups are another matter: every group's values are computed (the
    /// groups are found in a subquery, and the page taken from it), as
    /// PostgreSQL and SQLite compute them where MariaDB skips the groups an
    /// OFFSET leaves out.
    func renderSelection<T, V>(_ selection: Selection<T, V>, ordered: Bool) throws {
        let paged = selection.query.limitCount != nil || selection.query.offsetCount != nil
        // A total order: the group keys, or the primary key when rows are not aggregated.
        let aggregated = !selection.groups.isEmpty || selection.outputs.contains { $0.hasAggregate }
        let tieBreak: [QueryNode] = !selection.groups.isEmpty ? selection.groups
            : aggregated ? [] : T.primaryKey.map { QueryNode.columnNamed($0) }
        if paged, aggregated, selection.outputs.contains(where: { $0.canFail }) {
            return try renderEveryGroup(selection, tieBreak: tieBreak)
        }
        text += "SELECT "
        for (index, output) in selection.outputs.enumerated() {
            if index > 0 { text += ", " }
            try render(output)
            if case .mapped(let type) = selection.reading, let names = mappedNames?(type), index < names.count {
                text += " AS "
                identifier(names[index])
            }
        }
        text += " FROM "
        let computesAfterPage = paged && !aggregated && selection.outputs.contains { $0.canFail }
        if computesAfterPage {
            // The page's rows under their table's name, so every column reference holds.
            text += "(SELECT * FROM "
            identifier(T.tableName)
        } else {
            identifier(T.tableName)
        }
        try renderWhere(selection.query.filters)
        try renderGrouping(selection.groups, having: selection.having)
        if ordered || paged {
            try renderOrder(selection.query.orderings, tieBreak: tieBreak)
        }
        try renderPage(limit: selection.query.limitCount, offset: selection.query.offsetCount)
        if computesAfterPage {
            text += ") AS "
            identifier(T.tableName)
            // The page's order again: a subquery's order is not the query's.
            try renderOrder(selection.query.orderings, tieBreak: tieBreak)
        }
    }

    /// An aggregated selection with a page whose outputs can fail: the groups,
    /// with their outputs and the terms they are ordered by, in a subquery
    /// (`depot_page`, whose columns are `depot_c0`... and `depot_o0`...), and
    /// the page taken from it, so every group's outputs are computed.
    private func renderEveryGroup<T, V>(_ selection: Selection<T, V>, tieBreak: [QueryNode]) throws {
        var names: [String]?
        if case .mapped(let type) = selection.reading { names = mappedNames?(type) }
        try renderEveryGroup(outputs: selection.outputs, names: names, terms: totalOrder(selection.query.orderings, tieBreak: tieBreak),
                             limit: selection.query.limitCount, offset: selection.query.offsetCount) {
            text += " FROM "
            identifier(T.tableName)
            try renderWhere(selection.query.filters)
            try renderGrouping(selection.groups, having: selection.having)
        }
    }

    /// Every group's `outputs` (named `names` where given), found by `body`
    /// (its FROM, WHERE, GROUP BY and HAVING), then the page of them in the
    /// order of `terms`: see ``renderSelection(_:ordered:)``.
    func renderEveryGroup(outputs: [QueryNode], names: [String]?, terms: [QueryOrdering], limit: Int?, offset: Int?,
                          body: () throws -> Void) throws {
        text += "SELECT "
        for index in outputs.indices {
            if index > 0 { text += ", " }
            identifier(Self.pageAlias)
            text += "."
            identifier("depot_c\(index)")
            if let names, index < names.count {
                text += " AS "
                identifier(names[index])
            }
        }
        text += " FROM (SELECT "
        for (index, output) in outputs.enumerated() {
            if index > 0 { text += ", " }
            try render(output)
            text += " AS "
            identifier("depot_c\(index)")
        }
        for (index, term) in terms.enumerated() {
            text += ", "
            // As the plain query orders by it (PostgreSQL finds it among the groups then).
            try renderBinary(term.node, ordering: true)
            text += " AS "
            identifier("depot_o\(index)")
        }
        try body()
        text += ") AS "
        identifier(Self.pageAlias)
        if !terms.isEmpty {
            text += " ORDER BY "
            for (index, term) in terms.enumerated() {
                if index > 0 { text += ", " }
                let mark = text.mark()
                identifier(Self.pageAlias)
                text += "."
                identifier("depot_o\(index)")
                let piece = text.cut(from: mark)
                text.append(dialect.ordering(term.node.type == .text ? dialect.binaryCollated(piece, ordering: true) : piece,
                                             descending: term.descending, nullsFirst: term.nulls == .first))
            }
        }
        try renderPage(limit: limit, offset: offset)
    }

    /// GROUP BY and HAVING, when there are groups or conditions.
    func renderGrouping(_ groups: [QueryNode], having: [QueryNode]) throws {
        if !groups.isEmpty {
            text += " GROUP BY "
            for (index, group) in groups.enumerated() {
                if index > 0 { text += ", " }
                // Text groups by code point, as it compares: not under the column's collation.
                try renderBinary(group, ordering: false)
            }
        }
        if !having.isEmpty {
            text += " HAVING "
            try renderCondition(having.count == 1 ? having[0] : QueryNode(.and(having), type: .bool))
        }
    }

    /// A subquery, in parentheses, its columns its own table's.
    func renderSubquery<T, V>(_ selection: Selection<T, V>) throws {
        let qualified = qualifiesColumns
        qualifiesColumns = false
        defer { qualifiesColumns = qualified }
        text += "("
        let paged = selection.query.limitCount != nil || selection.query.offsetCount != nil
        let wrapped = paged && dialect.wrapsPagedSubqueries
        if wrapped { text += "SELECT * FROM (" }
        try renderSelection(selection, ordered: false)
        if wrapped {
            text += ") AS "
            identifier("depot_page")
        }
        text += ")"
    }
}

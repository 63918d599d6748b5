/// What a join returns instead of records: expressions over both tables'
/// columns, optionally grouped, such as each list with how many open
/// reminders it has.
///
/// ```swift
/// let counts = try db.fetchAll(RemindersList.all
///     .leftJoin(Reminder.self) { list, reminder in reminder.listID.eq(list.id) && !reminder.isCompleted }
///     .select { list, reminder in (list.id, reminder.id.count()) }
///     .group { list, _ in list.id })
/// // [(Int64, Int)]: 0 for a list without open reminders
/// ```
///
/// The order is total: after your terms come the group keys, or, without
/// grouping or aggregates, every table's primary key.
public struct JoinSelection<Root: Record & ColumnMapped, Other: Record & ColumnMapped, Output>: Sendable {
    var parts: JoinParts
    var outputs: [QueryNode]
    var groups: [QueryNode] = []
    var having: [QueryNode] = []
    let reading: SelectionReading<Output>

    /// Groups the rows by an expression: one output row per distinct value.
    public func group(by key: (Root.Columns, Other.Columns) -> QueryExpression<some QueryComparable>) -> JoinSelection {
        var selection = self
        selection.groups.append(key(Root.columns, Other.Columns(source: .joined)).node)
        return selection
    }

    /// Keeps the groups for which `predicate` (over aggregates) is true.
    public func having(_ predicate: (Root.Columns, Other.Columns) -> QueryExpression<some QueryBool>) -> JoinSelection {
        var selection = self
        selection.having.append(predicate(Root.columns, Other.Columns(source: .joined)).node)
        return selection
    }

    /// Orders the output rows by these terms, before the group keys or the primary keys.
    public func order(_ terms: (Root.Columns, Other.Columns) -> [any QueryOrderingTerm]) -> JoinSelection {
        var selection = self
        selection.parts = parts.ordered(by: terms(Root.columns, Other.Columns(source: .joined)).map(\.queryOrdering))
        return selection
    }

    /// At most `count` output rows, after skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> JoinSelection {
        var selection = self
        selection.parts = parts.limited(to: count, offset: offset)
        return selection
    }
}

extension Join {
    /// Expressions over both tables' columns per pair, read as a tuple.
    public func select<each V: QueryValue>(
        _ outputs: (Root.Columns, Other.Columns) -> (repeat QueryExpression<each V>)
    ) -> JoinSelection<Root, Other, (repeat each V)> {
        JoinSelection<Root, Other, (repeat each V)>(parts: parts, outputs: queryNodes(outputs, Root.columns, Other.Columns(source: .joined)),
                                                    reading: tupleReading(repeat (each V).self))
    }
}

extension LeftJoin {
    /// Expressions over both tables' columns per row, read as a tuple; the
    /// second table's columns are NULL for an unmatched record, so
    /// `count()` of its key counts 0 for it.
    public func select<each V: QueryValue>(
        _ outputs: (Root.Columns, Other.Columns) -> (repeat QueryExpression<each V>)
    ) -> JoinSelection<Root, Other, (repeat each V)> {
        JoinSelection<Root, Other, (repeat each V)>(parts: parts, outputs: queryNodes(outputs, Root.columns, Other.Columns(source: .joined)),
                                                    reading: tupleReading(repeat (each V).self))
    }
}

extension Database {
    /// Every row of a join's selection, in its order.
    public func fetchAll<T, U, Output>(_ selection: JoinSelection<T, U, Output>) throws -> [Output] {
        guard case .cells(let read) = selection.reading else {
            throw DatabaseError.misuse("a join's selection reads cells")
        }
        let renderer = try queryRenderer()
        renderer.qualifiesColumns = true
        let aggregated = selection.outputs.contains { $0.hasAggregate }
        let paged = selection.parts.limitCount != nil || selection.parts.offsetCount != nil
        if let columns = pageColumns(selection, aggregated: aggregated, renderer: renderer) {
            try renderPageFirst(renderer, selection, columns: columns.read, terms: columns.terms)
        } else if paged, aggregated || !selection.groups.isEmpty, selection.outputs.contains(where: { $0.canFail }) {
            // Every group's outputs, then the page (as a single table's groups: QueryRenderer.renderSelection).
            var whole = selection.parts
            (whole.limitCount, whole.offsetCount) = (nil, nil)
            let terms = renderer.totalOrder(selection.parts.orderings, tieBreak: selection.groups)
            try renderer.renderEveryGroup(outputs: selection.outputs, names: nil, terms: terms,
                                          limit: selection.parts.limitCount, offset: selection.parts.offsetCount) {
                try renderJoinBody(renderer, T.self, U.self, whole, ordered: false, grouping: (selection.groups, selection.having, aggregated))
            }
        } else {
            renderer.text += "SELECT "
            for (index, output) in selection.outputs.enumerated() {
                if index > 0 { renderer.text += ", " }
                try renderer.render(output)
            }
            try renderJoinBody(renderer, T.self, U.self, selection.parts, ordered: true,
                               grouping: (selection.groups, selection.having, aggregated))
        }
        let statement = try renderer.statement()
        return try withStatement(text: statement.text, values: statement.values) { statement, _ in
            var results: [Output] = []
            while try statement.step() { results.append(try read(self, statement)) }
            return results
        }
    }
}

extension Database {
    /// For a page of a join's selection whose outputs can fail, the columns
    /// they and the order read, and the order's terms; nil otherwise, or when
    /// an output reads a subquery.
    ///
    /// The outputs are then computed over the page's rows alone (found first,
    /// their columns read in a subquery), as a single table's selection is
    /// (``QueryRenderer/renderSelection(_:ordered:)``): PostgreSQL computed
    /// them for the rows an OFFSET skipped, SQLite did not.
    fileprivate func pageColumns<T, U, Output>(_ selection: JoinSelection<T, U, Output>, aggregated: Bool, renderer: QueryRenderer)
        -> (read: [QueryNode.QueryColumn], terms: [QueryOrdering])? {
        let parts = selection.parts
        guard parts.limitCount != nil || parts.offsetCount != nil, !aggregated, selection.groups.isEmpty,
              selection.outputs.contains(where: { $0.canFail }) else { return nil }
        // The order renderJoinBody gives the rows, ended by both keys.
        let tieBreak = T.primaryKey.map { QueryNode.columnNamed($0, source: 0) } + U.primaryKey.map { QueryNode.columnNamed($0, source: 1) }
        let terms = renderer.totalOrder(parts.orderings, tieBreak: tieBreak)
        var read: [QueryNode.QueryColumn] = []
        for node in selection.outputs + terms.map(\.node) {
            guard let columns = node.columnsRead else { return nil }
            for column in columns where !read.contains(column) { read.append(column) }
        }
        return (read, terms)
    }

    /// `SELECT outputs FROM (SELECT columns ... ORDER BY ... LIMIT ...) AS depot_page ORDER BY ...`.
    fileprivate func renderPageFirst<T, U, Output>(_ renderer: QueryRenderer, _ selection: JoinSelection<T, U, Output>,
                                                    columns: [QueryNode.QueryColumn], terms: [QueryOrdering]) throws {
        let names = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, "depot_k\($0)") })
        renderer.text += "SELECT "
        renderer.pageColumns = names
        for (index, output) in selection.outputs.enumerated() {
            if index > 0 { renderer.text += ", " }
            try renderer.render(output)
        }
        renderer.pageColumns = nil
        renderer.text += " FROM (SELECT "
        for (index, column) in columns.enumerated() {
            if index > 0 { renderer.text += ", " }
            renderer.column(column)
            renderer.text += " AS "
            renderer.identifier("depot_k\(index)")
        }
        try renderJoinBody(renderer, T.self, U.self, selection.parts, ordered: true, grouping: (selection.groups, selection.having, false))
        renderer.text += ") AS "
        renderer.identifier(QueryRenderer.pageAlias)
        renderer.pageColumns = names
        defer { renderer.pageColumns = nil }
        // The page's order again: a subquery's order is not the query's.
        try renderer.renderOrder(terms, tieBreak: [])
    }
}

/// The nodes of the tuple of expressions `body` makes of two tables' columns.
func queryNodes<A, B, each V>(_ body: (A, B) -> (repeat QueryExpression<each V>), _ a: A, _ b: B) -> [QueryNode] {
    let tuple = body(a, b)
    var nodes: [QueryNode] = []
    for expression in repeat each tuple { nodes.append(expression.node) }
    return nodes
}

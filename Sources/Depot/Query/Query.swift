/// A query of one record type's table: a filter, an order and a page, built
/// from the type's typed columns and rendered by the store's dialect.
///
/// ```swift
/// let page = Reminder
///     .where { !$0.isCompleted && $0.title.contains("milk", caseInsensitive: true) }
///     .order { [$0.dueDate.ascending(), $0.priority.descending()] }
///     .limit(20)
/// let reminders = try db.fetchAll(page)
/// let count = try db.fetchCount(page)
/// ```
///
/// Every query means the same on every engine:
/// - the order is total: the primary key ends it, so pages never overlap;
/// - NULLs go where the ordering says (last unless told otherwise);
/// - text compares and orders by code point; `folded` compares A–Z case-insensitively;
/// - every value is bound, never spliced into the SQL.
///
/// Caveat: a query is a value; building it runs your closures at once on the
/// type's columns, and nothing touches the database until a `Database` runs it.
public struct Query<Root: Record & ColumnMapped>: Sendable {
    var filters: [QueryNode] = []
    var orderings: [QueryOrdering] = []
    var limitCount: Int?
    var offsetCount: Int?

    /// Every row of the table.
    public init() {}

    /// Keeps the rows for which `predicate` is true (not false, not NULL).
    /// Several `where`s must all hold.
    public func `where`(_ predicate: (Root.Columns) -> QueryExpression<some QueryBool>) -> Query {
        var query = self
        query.filters.append(predicate(Root.columns).node)
        return query
    }

    /// Orders by these terms, after any earlier `order`; the primary key ends the order.
    public func order(_ terms: (Root.Columns) -> [any QueryOrderingTerm]) -> Query {
        var query = self
        query.orderings += terms(Root.columns).map(\.queryOrdering)
        return query
    }

    /// Orders by this term, after any earlier `order`; the primary key ends the order.
    public func order<Term: QueryOrderingTerm>(_ term: (Root.Columns) -> Term) -> Query {
        var query = self
        query.orderings.append(term(Root.columns).queryOrdering)
        return query
    }

    /// At most `count` rows, after skipping `offset`.
    ///
    /// - Throws: nothing here; a negative count or offset is a `misuse` error when the query runs.
    public func limit(_ count: Int, offset: Int? = nil) -> Query {
        var query = self
        query.limitCount = count
        if let offset { query.offsetCount = offset }
        return query
    }

    /// Skips the first `count` rows.
    public func offset(_ count: Int) -> Query {
        var query = self
        query.offsetCount = count
        return query
    }
}

extension Record where Self: ColumnMapped {
    /// Every row of the table, as a ``Query`` to refine.
    public static var all: Query<Self> { Query() }

    /// The rows for which `predicate` is true.
    ///
    /// ```swift
    /// let flagged = try db.fetchAll(Reminder.where { $0.isFlagged })
    /// ```
    public static func `where`(_ predicate: (Columns) -> QueryExpression<some QueryBool>) -> Query<Self> {
        Query().where(predicate)
    }

    /// Whether a row of this table satisfies `predicate`, which usually names
    /// the outer query's columns: `EXISTS (SELECT 1 ...)`.
    ///
    /// ```swift
    /// let tagged = Reminder.where { reminder in ReminderTag.exists { $0.reminderID.eq(reminder.id) } }
    /// ```
    ///
    /// Caveat: one level deep: an `exists` inside another names its own table, not the outer subquery's.
    public static func exists(where predicate: (Columns) -> QueryExpression<some QueryBool>) -> QueryPredicate {
        QueryPredicate(.exists(table: tableName, filters: [predicate(Columns(source: .correlated)).node], negated: false), type: .bool)
    }

    /// Whether no row of this table satisfies `predicate`: `NOT EXISTS (SELECT 1 ...)`.
    public static func notExists(where predicate: (Columns) -> QueryExpression<some QueryBool>) -> QueryPredicate {
        QueryPredicate(.exists(table: tableName, filters: [predicate(Columns(source: .correlated)).node], negated: true), type: .bool)
    }

    /// Every row, in this order (then by primary key).
    public static func order(_ terms: (Columns) -> [any QueryOrderingTerm]) -> Query<Self> {
        Query().order(terms)
    }

    /// Every row, in this order (then by primary key).
    public static func order<Term: QueryOrderingTerm>(_ term: (Columns) -> Term) -> Query<Self> {
        Query().order(term)
    }
}

/// A new value for one column in ``Database/update(_:set:)``.
public struct QueryAssignment: Sendable {
    /// The column's coding key; empty when the target was not a column.
    let key: String
    let value: QueryNode
}

extension QueryExpression where Value: QueryValue {
    /// Sets this column to `value`.
    ///
    /// ```swift
    /// try db.update(Reminder.where { $0.listID.eq(id) }) { [$0.isFlagged.to(true)] }
    /// ```
    public func to(_ value: Value) -> QueryAssignment {
        assignment(.value(value))
    }

    /// Sets this column to the value of an expression of the same row.
    public func to(_ expression: QueryExpression<Value>) -> QueryAssignment {
        assignment(expression.node)
    }

    func assignment(_ value: QueryNode) -> QueryAssignment {
        guard case .column(let column) = node.kind, column.source == 0 else { return QueryAssignment(key: "", value: value) }
        return QueryAssignment(key: column.key, value: value)
    }
}

extension QueryExpression where Value: QueryOptional {
    /// Sets this optional column to the value of a non-optional expression of the same row.
    public func to(_ expression: QueryExpression<Value.Wrapped>) -> QueryAssignment {
        assignment(expression.node)
    }
}

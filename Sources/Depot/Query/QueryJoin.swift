/// Two tables' records side by side, matched by a condition: an inner join,
/// whose rows are the pairs for which the condition is true.
///
/// ```swift
/// let due = try db.fetchAll(Reminder.where { !$0.isCompleted }
///     .join(RemindersList.self) { reminder, list in reminder.listID.eq(list.id) }
///     .order { reminder, list in [list.title.ascending(), reminder.dueDate.ascending()] })
/// for (reminder, list) in due { ... }
/// ```
///
/// The order is total: after your terms come the first table's primary key,
/// then the second's.
public struct Join<Root: Record & ColumnMapped, Other: Record & ColumnMapped>: Sendable {
    var parts: JoinParts

    /// Keeps the pairs for which `predicate` is true.
    public func `where`(_ predicate: (Root.Columns, Other.Columns) -> QueryExpression<some QueryBool>) -> Join {
        Join(parts: parts.filtered(by: predicate(Root.columns, Other.Columns(source: .joined)).node))
    }

    /// Orders by these terms, after any earlier ones; the primary keys end the order.
    public func order(_ terms: (Root.Columns, Other.Columns) -> [any QueryOrderingTerm]) -> Join {
        Join(parts: parts.ordered(by: terms(Root.columns, Other.Columns(source: .joined)).map(\.queryOrdering)))
    }

    /// At most `count` pairs, after skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> Join {
        Join(parts: parts.limited(to: count, offset: offset))
    }
}

/// Every record of the first table with the records of the second that match
/// it, or with nil when none does: a left join.
///
/// ```swift
/// let listsAndCounts = try db.fetchAll(RemindersList.all
///     .leftJoin(Reminder.self) { list, reminder in reminder.listID.eq(list.id) })
/// // [(RemindersList, Reminder?)]
/// ```
///
/// The second table's columns, in `where` and `order`, are NULL for a first
/// record without a match: comparisons with them are unknown, so filter such
/// records with ``withoutMatch()``. Caveat: the second record is nil exactly
/// when its primary key is NULL in the joined row.
public struct LeftJoin<Root: Record & ColumnMapped, Other: Record & ColumnMapped>: Sendable {
    var parts: JoinParts

    /// Keeps the pairs for which `predicate` is true.
    public func `where`(_ predicate: (Root.Columns, Other.Columns) -> QueryExpression<some QueryBool>) -> LeftJoin {
        LeftJoin(parts: parts.filtered(by: predicate(Root.columns, Other.Columns(source: .joined)).node))
    }

    /// Keeps the first table's records that nothing matched.
    public func withoutMatch() -> LeftJoin {
        LeftJoin(parts: parts.filtered(by: QueryNode(.and(Other.primaryKey.map {
            QueryNode(.isNull(.columnNamed($0, source: 1), negated: false), type: .bool)
        }), type: .bool)))
    }

    /// Orders by these terms, after any earlier ones; the primary keys end the
    /// order (NULLs of an unmatched record last).
    public func order(_ terms: (Root.Columns, Other.Columns) -> [any QueryOrderingTerm]) -> LeftJoin {
        LeftJoin(parts: parts.ordered(by: terms(Root.columns, Other.Columns(source: .joined)).map(\.queryOrdering)))
    }

    /// At most `count` pairs, after skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> LeftJoin {
        LeftJoin(parts: parts.limited(to: count, offset: offset))
    }
}

extension QuerySource {
    /// The second table of a join.
    public static let joined = QuerySource(index: 1)
    /// The third table of a join (`t3`: `t2` is an `exists` subquery's).
    public static let joinedThird = QuerySource(index: 3)
}

/// Three tables' records side by side: a join of two joined again, whose rows
/// are the triples for which both conditions are true.
///
/// ```swift
/// let tagged = try db.fetchAll(ReminderTag.all
///     .join(Reminder.self) { link, reminder in link.reminderID.eq(reminder.id) }
///     .join(Tag.self) { link, _, tag in link.tagID.eq(tag.id) }
///     .order { _, reminder, tag in [tag.title, reminder.title] })
/// // [(ReminderTag, Reminder, Tag)]
/// ```
///
/// A table may appear more than once (a self-join): each place has its own
/// alias. The order is total: after your terms come the three primary keys.
public struct Join3<First: Record & ColumnMapped, Second: Record & ColumnMapped, Third: Record & ColumnMapped>: Sendable {
    var parts: JoinParts

    /// Keeps the triples for which `predicate` is true.
    public func `where`(_ predicate: (First.Columns, Second.Columns, Third.Columns) -> QueryExpression<some QueryBool>) -> Join3 {
        Join3(parts: parts.filtered(by: predicate(First.columns, Second.Columns(source: .joined), Third.Columns(source: .joinedThird)).node))
    }

    /// Orders by these terms, after any earlier ones; the primary keys end the order.
    public func order(_ terms: (First.Columns, Second.Columns, Third.Columns) -> [any QueryOrderingTerm]) -> Join3 {
        Join3(parts: parts.ordered(by: terms(First.columns, Second.Columns(source: .joined), Third.Columns(source: .joinedThird)).map(\.queryOrdering)))
    }

    /// At most `count` triples, after skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> Join3 {
        Join3(parts: parts.limited(to: count, offset: offset))
    }
}

extension Join {
    /// The triples of this join's pairs and `third`'s records for which `condition` holds (an inner join).
    public func join<Third>(_ third: Third.Type, on condition: (Root.Columns, Other.Columns, Third.Columns) -> QueryExpression<some QueryBool>) -> Join3<Root, Other, Third> {
        var parts = self.parts
        parts.third = JoinParts.ThirdTable(table: Third.tableName, primaryKey: Third.primaryKey,
                                           on: condition(Root.columns, Other.Columns(source: .joined), Third.Columns(source: .joinedThird)).node)
        return Join3(parts: parts)
    }
}

/// What both kinds of join hold: the first table's query, the condition and
/// the join's own filters, order and page.
struct JoinParts: Sendable {
    var on: QueryNode
    var isLeft: Bool
    var filters: [QueryNode]
    var orderings: [QueryOrdering]
    var limitCount: Int?
    var offsetCount: Int?
    /// A third table, inner-joined after the second.
    var third: ThirdTable?

    struct ThirdTable: Sendable {
        let table: String
        let primaryKey: [String]
        let on: QueryNode
    }

    func filtered(by filter: QueryNode) -> JoinParts {
        var parts = self
        parts.filters.append(filter)
        return parts
    }

    func ordered(by terms: [QueryOrdering]) -> JoinParts {
        var parts = self
        parts.orderings += terms
        return parts
    }

    func limited(to count: Int, offset: Int?) -> JoinParts {
        var parts = self
        parts.limitCount = count
        if let offset { parts.offsetCount = offset }
        return parts
    }
}

extension Query {
    /// The pairs of this query's records and `other`'s records for which `condition` holds.
    ///
    /// This query's filters and order carry over; its limit and offset apply to the pairs.
    public func join<Other>(_ other: Other.Type, on condition: (Root.Columns, Other.Columns) -> QueryExpression<some QueryBool>) -> Join<Root, Other> {
        Join(parts: joinParts(condition(Root.columns, Other.Columns(source: .joined)).node, isLeft: false))
    }

    /// Each of this query's records with `other`'s records that match it, or with nil.
    ///
    /// This query's filters and order carry over; its limit and offset apply to the pairs.
    public func leftJoin<Other>(_ other: Other.Type, on condition: (Root.Columns, Other.Columns) -> QueryExpression<some QueryBool>) -> LeftJoin<Root, Other> {
        LeftJoin(parts: joinParts(condition(Root.columns, Other.Columns(source: .joined)).node, isLeft: true))
    }

    private func joinParts(_ on: QueryNode, isLeft: Bool) -> JoinParts {
        JoinParts(on: on, isLeft: isLeft, filters: filters, orderings: orderings, limitCount: limitCount, offsetCount: offsetCount)
    }
}

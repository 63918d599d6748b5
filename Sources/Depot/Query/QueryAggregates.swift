/// Numbers: `sum()` and `average()`.
public protocol QueryNumeric: QueryComparable {}

extension Int: QueryNumeric {}
extension Int64: QueryNumeric {}
extension Int32: QueryNumeric {}
extension Int16: QueryNumeric {}
extension Int8: QueryNumeric {}
extension UInt32: QueryNumeric {}
extension UInt16: QueryNumeric {}
extension UInt8: QueryNumeric {}
extension Double: QueryNumeric {}
extension Float: QueryNumeric {}
extension Optional: QueryNumeric where Wrapped: QueryNumeric {}

extension QueryExpression where Value: QueryValue {
    /// `count(x)`: how many rows have a value that is not NULL.
    public func count() -> QueryExpression<Int> {
        QueryExpression<Int>(.aggregate(.count, node, filter: nil), type: .integer)
    }
}

extension QueryExpression where Value: QueryComparable {
    /// The smallest value (text by code point); NULL when there is none.
    public func min() -> QueryExpression<Value.Nullable> {
        QueryExpression<Value.Nullable>(.aggregate(.min, node, filter: nil), type: node.type)
    }

    /// The largest value (text by code point); NULL when there is none.
    public func max() -> QueryExpression<Value.Nullable> {
        QueryExpression<Value.Nullable>(.aggregate(.max, node, filter: nil), type: node.type)
    }
}

extension QueryExpression where Value: QueryNumeric {
    /// The sum; NULL when there are no values. Integers sum exactly: an overflow
    /// is an error on every engine, never a wrapped or rounded result.
    public func sum() -> QueryExpression<Value.Nullable> {
        QueryExpression<Value.Nullable>(.aggregate(.sum, node, filter: nil), type: node.type)
    }

    /// The mean, as a `Double`: the values summed as doubles, then divided by
    /// their count; NULL when there are no values. Exact sums (integers whose
    /// sums stay within 2^53) give the same mean on every engine; engines may
    /// add other values in another order and differ in the last bits.
    public func average() -> QueryExpression<Double?> {
        QueryExpression<Double?>(.aggregate(.average, node, filter: nil), type: .double)
    }
}

/// Aggregates that belong to no one column.
public enum Aggregates {
    /// `count(*)`: how many rows.
    public static func countAll() -> QueryExpression<Int> {
        QueryExpression<Int>(.aggregate(.count, nil, filter: nil), type: .integer)
    }

    /// How many rows satisfy `predicate` (`count(*) FILTER (WHERE ...)`).
    public static func count(where predicate: QueryExpression<some QueryBool>) -> QueryExpression<Int> {
        QueryExpression<Int>(.aggregate(.count, nil, filter: predicate.node), type: .integer)
    }
}

/// What a query returns instead of whole records: any number of expressions
/// per row, as one value, a tuple or a `@Columns` type, optionally grouped.
///
/// ```swift
/// let openPerList = try db.fetchAll(Reminder.where { !$0.isCompleted }
///     .select { ($0.listID, Aggregates.countAll()) }
///     .group { $0.listID })
/// ```
///
/// The order is total: after the query's own order come the group keys, or,
/// without grouping or aggregates, the primary key.
public struct Selection<Root: Record & ColumnMapped, Output>: Sendable {
    var query: Query<Root>
    var outputs: [QueryNode]
    var groups: [QueryNode] = []
    var having: [QueryNode] = []
    /// How a row becomes an output: each one selection kind decides, so one
    /// `fetchAll` serves them all (and the compiler has one overload to try).
    let reading: SelectionReading<Output>

    /// Groups the rows by an expression: one output row per distinct value.
    public func group(by key: (Root.Columns) -> QueryExpression<some QueryComparable>) -> Selection {
        var selection = self
        selection.groups.append(key(Root.columns).node)
        return selection
    }

    /// Orders the output rows by these terms, before the group keys or the primary key.
    public func order(_ terms: (Root.Columns) -> [any QueryOrderingTerm]) -> Selection {
        var selection = self
        selection.query = query.order(terms)
        return selection
    }

    /// Orders the output rows by this term, before the group keys or the primary key.
    public func order<Term: QueryOrderingTerm>(_ term: (Root.Columns) -> Term) -> Selection {
        let ordering = term(Root.columns).queryOrdering
        return order { _ in [ordering] }
    }

    /// At most `count` output rows, after skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> Selection {
        var selection = self
        selection.query = query.limit(count, offset: offset)
        return selection
    }

    /// Keeps the groups for which `predicate` (over aggregates) is true.
    public func having(_ predicate: (Root.Columns) -> QueryExpression<some QueryBool>) -> Selection {
        var selection = self
        selection.having.append(predicate(Root.columns).node)
        return selection
    }
}

extension Query {
    /// One expression per row instead of the record.
    public func select<V: QueryValue>(_ output: (Root.Columns) -> QueryExpression<V>) -> Selection<Root, V> {
        Selection(query: self, outputs: [output(Root.columns).node], reading: .cells { db, statement in try db.decodeCell(V.self, statement, 0) })
    }

}

extension QueryNode {
    /// Whether the node holds an aggregate.
    var hasAggregate: Bool {
        switch kind {
        case .aggregate: true
        case .column, .value, .constant, .parameter: false
        case .compare(let a, _, let b), .isNotDistinct(let a, let b, _): a.hasAggregate || b.hasAggregate
        case .isNull(let a, _), .not(let a), .textMatch(let a, _, _, _), .length(let a), .folded(let a): a.hasAggregate
        case .inList(let a, let list, _): a.hasAggregate || list.contains { $0.hasAggregate }
        case .inSubquery(let a, _, _), .search(let a, _): a.hasAggregate
        case .exists: false
        case .and(let parts), .or(let parts), .coalesce(let parts), .caseWhen(let parts, _): parts.contains { $0.hasAggregate }
        case .arithmetic(let a, _, let b), .concatenate(let a, let b), .nullIf(let a, let b): a.hasAggregate || b.hasAggregate
        case .substring(let a, _, _), .json(let a, _, _): a.hasAggregate
        }
    }
}

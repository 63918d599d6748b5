import Foundation

extension QueryNode {
    static func value<V: QueryValue>(_ value: V) -> QueryNode {
        QueryNode(.value(value), type: V.queryType)
    }
}

/// A predicate: a `Bool` or `Bool?` expression, such as a comparison or a Boolean column.
public typealias QueryPredicate = QueryExpression<Bool>

// MARK: Equality and membership: every value type

extension QueryExpression where Value: QueryValue {
    /// Unavailable: `==` would compare in Swift. Write `.eq(_:)`.
    @available(*, unavailable, message: "in a query, write .eq(value), as in $0.title.eq(\"Milk\") (eq(nil) is IS NULL)")
    public static func == (lhs: Self, rhs: Value) -> QueryPredicate { lhs.eq(rhs) }
    /// Unavailable: `!=` would compare in Swift. Write `.neq(_:)`.
    @available(*, unavailable, message: "in a query, write .neq(value), as in $0.title.neq(\"Milk\") (neq(nil) is IS NOT NULL)")
    public static func != (lhs: Self, rhs: Value) -> QueryPredicate { lhs.neq(rhs) }
    /// Unavailable: `==` would compare in Swift. Write `.eq(_:)`.
    @available(*, unavailable, message: "in a query, write .eq(other), as in $0.listID.eq(list.id)")
    public static func == (lhs: Self, rhs: Self) -> QueryPredicate { lhs.eq(rhs) }
    /// Unavailable: `!=` would compare in Swift. Write `.neq(_:)`.
    @available(*, unavailable, message: "in a query, write .neq(other), as in $0.listID.neq(list.id)")
    public static func != (lhs: Self, rhs: Self) -> QueryPredicate { lhs.neq(rhs) }

    /// `self = value`: true, false, or NULL (unknown) when either side is NULL.
    public func eq(_ value: Value) -> QueryPredicate { compare(.equal, .value(value)) }
    /// `self <> value`: NULL when either side is NULL, so it does not find NULLs.
    public func neq(_ value: Value) -> QueryPredicate { compare(.notEqual, .value(value)) }
    /// `self = other`, both expressions.
    public func eq(_ other: QueryExpression<Value>) -> QueryPredicate { compare(.equal, other.node) }
    /// `self <> other`, both expressions.
    public func neq(_ other: QueryExpression<Value>) -> QueryPredicate { compare(.notEqual, other.node) }

    /// Equal, with NULL equal to NULL: never unknown.
    public func isNotDistinct(from value: Value) -> QueryPredicate {
        QueryPredicate(.isNotDistinct(node, .value(value), negated: false), type: .bool)
    }

    /// Not equal, with NULL equal to NULL: never unknown.
    public func isDistinct(from value: Value) -> QueryPredicate {
        QueryPredicate(.isNotDistinct(node, .value(value), negated: true), type: .bool)
    }

    /// `self IN (values)`. An empty list is false for every row.
    public func `in`(_ values: some Sequence<Value>) -> QueryPredicate {
        QueryPredicate(.inList(node, values.map { .value($0) }, negated: false), type: .bool)
    }

    /// `self NOT IN (values)`. An empty list is true for every row whose value is not NULL.
    public func notIn(_ values: some Sequence<Value>) -> QueryPredicate {
        QueryPredicate(.inList(node, values.map { .value($0) }, negated: true), type: .bool)
    }

    /// `self IN (SELECT ...)`: whether the value is among the selection's values.
    ///
    /// ```swift
    /// Reminder.where { $0.listID.in(RemindersList.where { $0.title.hasPrefix("Work") }.select { $0.id }) }
    /// ```
    public func `in`<T>(_ selection: Selection<T, Value>) -> QueryPredicate {
        QueryPredicate(.inSubquery(node, QueryNode.Subquery { try $0.renderSubquery(selection) }, negated: false), type: .bool)
    }

    /// `self NOT IN (SELECT ...)`. Caveat: unknown (so no row) when the selection
    /// holds a NULL, as SQL says; select non-NULL values.
    public func notIn<T>(_ selection: Selection<T, Value>) -> QueryPredicate {
        QueryPredicate(.inSubquery(node, QueryNode.Subquery { try $0.renderSubquery(selection) }, negated: true), type: .bool)
    }

    /// `self IN (SELECT ...)` over a selection of optional values (a primary key
    /// declared `Int64?`, for one).
    public func `in`<T>(_ selection: Selection<T, Value?>) -> QueryPredicate {
        QueryPredicate(.inSubquery(node, QueryNode.Subquery { try $0.renderSubquery(selection) }, negated: false), type: .bool)
    }

    /// `self NOT IN (SELECT ...)` over a selection of optional values: unknown for every row when it holds a NULL.
    public func notIn<T>(_ selection: Selection<T, Value?>) -> QueryPredicate {
        QueryPredicate(.inSubquery(node, QueryNode.Subquery { try $0.renderSubquery(selection) }, negated: true), type: .bool)
    }

    /// `self = other`, where `other` is the optional column of the same type (a foreign key).
    public func eq(_ other: QueryExpression<Value?>) -> QueryPredicate { compare(.equal, other.node) }
    /// `self <> other`, where `other` is the optional column of the same type.
    public func neq(_ other: QueryExpression<Value?>) -> QueryPredicate { compare(.notEqual, other.node) }

    func compare(_ op: QueryNode.ComparisonOperator, _ other: QueryNode) -> QueryPredicate {
        QueryPredicate(.compare(node, op, other), type: .bool)
    }
}

extension QueryExpression where Value: QueryOptional {
    /// `self = other`, where `other` is the non-optional column of the same type
    /// (a foreign key compared with a primary key).
    public func eq(_ other: QueryExpression<Value.Wrapped>) -> QueryPredicate { compare(.equal, other.node) }
    /// `self <> other`, where `other` is the non-optional column of the same type.
    public func neq(_ other: QueryExpression<Value.Wrapped>) -> QueryPredicate { compare(.notEqual, other.node) }

    /// `self NOT IN (SELECT ...)` over a selection of non-optional values.
    public func notIn<T>(_ selection: Selection<T, Value.Wrapped>) -> QueryPredicate {
        QueryPredicate(.inSubquery(node, QueryNode.Subquery { try $0.renderSubquery(selection) }, negated: true), type: .bool)
    }

    /// `self IN (SELECT ...)` over a selection of non-optional values.
    public func `in`<T>(_ selection: Selection<T, Value.Wrapped>) -> QueryPredicate {
        QueryPredicate(.inSubquery(node, QueryNode.Subquery { try $0.renderSubquery(selection) }, negated: false), type: .bool)
    }

    /// `self = value`; `eq(nil)` is `self IS NULL`, never the `= NULL` that matches nothing.
    public func eq(_ value: Value) -> QueryPredicate { value.isNone ? isNull() : compare(.equal, .value(value)) }
    /// `self <> value` (not NULL rows only); `neq(nil)` is `self IS NOT NULL`.
    public func neq(_ value: Value) -> QueryPredicate { value.isNone ? isNotNull() : compare(.notEqual, .value(value)) }

    /// `self IS NULL`.
    public func isNull() -> QueryPredicate { QueryPredicate(.isNull(node, negated: false), type: .bool) }
    /// `self IS NOT NULL`.
    public func isNotNull() -> QueryPredicate { QueryPredicate(.isNull(node, negated: true), type: .bool) }
}

// MARK: Order: numbers, text by code point, booleans, dates

extension QueryExpression where Value: QueryComparable {
    /// Less than. Text compares by Unicode code point on every engine, whatever the collation.
    public static func < (lhs: Self, rhs: Value) -> QueryPredicate { lhs.compare(.less, .value(rhs)) }
    /// Less than or equal.
    public static func <= (lhs: Self, rhs: Value) -> QueryPredicate { lhs.compare(.lessOrEqual, .value(rhs)) }
    /// Greater than.
    public static func > (lhs: Self, rhs: Value) -> QueryPredicate { lhs.compare(.greater, .value(rhs)) }
    /// Greater than or equal.
    public static func >= (lhs: Self, rhs: Value) -> QueryPredicate { lhs.compare(.greaterOrEqual, .value(rhs)) }
    /// Less than another expression.
    public static func < (lhs: Self, rhs: Self) -> QueryPredicate { lhs.compare(.less, rhs.node) }
    /// Less than or equal to another expression.
    public static func <= (lhs: Self, rhs: Self) -> QueryPredicate { lhs.compare(.lessOrEqual, rhs.node) }
    /// Greater than another expression.
    public static func > (lhs: Self, rhs: Self) -> QueryPredicate { lhs.compare(.greater, rhs.node) }
    /// Greater than or equal to another expression.
    public static func >= (lhs: Self, rhs: Self) -> QueryPredicate { lhs.compare(.greaterOrEqual, rhs.node) }

    /// `lower <= self AND self <= upper`.
    public func between(_ lower: Value, and upper: Value) -> QueryPredicate {
        self >= lower && self <= upper
    }
}

extension QueryExpression where Value: QueryOptional, Value.Wrapped: QueryComparable {
    /// Less than a non-optional expression (unknown where this is NULL).
    public static func < (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> QueryPredicate { lhs.compare(.less, rhs.node) }
    /// Less than or equal to a non-optional expression.
    public static func <= (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> QueryPredicate { lhs.compare(.lessOrEqual, rhs.node) }
    /// Greater than a non-optional expression.
    public static func > (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> QueryPredicate { lhs.compare(.greater, rhs.node) }
    /// Greater than or equal to a non-optional expression.
    public static func >= (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> QueryPredicate { lhs.compare(.greaterOrEqual, rhs.node) }
}

// MARK: Logic

extension QueryExpression where Value: QueryBool {
    /// Both: SQL's three-valued AND.
    public static func && (lhs: Self, rhs: QueryExpression<some QueryBool>) -> QueryPredicate {
        QueryPredicate(.and(lhs.node.conjuncts + rhs.node.conjuncts), type: .bool)
    }

    /// Either: SQL's three-valued OR.
    public static func || (lhs: Self, rhs: QueryExpression<some QueryBool>) -> QueryPredicate {
        QueryPredicate(.or(lhs.node.disjuncts + rhs.node.disjuncts), type: .bool)
    }

    /// Not: NOT of unknown (NULL) is unknown, so `!x` does not find rows where `x` is NULL.
    public static prefix func ! (operand: Self) -> QueryPredicate {
        QueryPredicate(.not(operand.node), type: .bool)
    }
}

extension QueryNode {
    var conjuncts: [QueryNode] {
        if case .and(let parts) = kind { return parts }
        return [self]
    }

    var disjuncts: [QueryNode] {
        if case .or(let parts) = kind { return parts }
        return [self]
    }
}

extension QueryPredicate {
    /// True for every row.
    public static var always: QueryPredicate { QueryPredicate(.constant(true), type: .bool) }
    /// False for every row.
    public static var never: QueryPredicate { QueryPredicate(.constant(false), type: .bool) }
}

// MARK: Text

extension QueryExpression where Value: QueryText {
    /// Whether the text contains `needle` literally: `%`, `_` and `\` are plain
    /// characters. Case-sensitive, or ASCII-case-insensitive (A–Z only: `É`
    /// and `é` stay different, on every engine).
    public func contains(_ needle: String, caseInsensitive: Bool = false) -> QueryPredicate {
        QueryPredicate(.textMatch(node, .contains, needle: needle, caseInsensitive: caseInsensitive), type: .bool)
    }

    /// Whether the text starts with `prefix`, literally; see ``contains(_:caseInsensitive:)``.
    public func hasPrefix(_ prefix: String, caseInsensitive: Bool = false) -> QueryPredicate {
        QueryPredicate(.textMatch(node, .prefix, needle: prefix, caseInsensitive: caseInsensitive), type: .bool)
    }

    /// Whether the text ends with `suffix`, literally; see ``contains(_:caseInsensitive:)``.
    public func hasSuffix(_ suffix: String, caseInsensitive: Bool = false) -> QueryPredicate {
        QueryPredicate(.textMatch(node, .suffix, needle: suffix, caseInsensitive: caseInsensitive), type: .bool)
    }

    /// The text with A–Z lowered and every other character kept, on every
    /// engine: compare or order by it for ASCII-case-insensitive results.
    public var folded: QueryExpression<Value> {
        QueryExpression(.folded(node), type: .text)
    }

    /// The number of Unicode code points (not bytes, and not Swift's `Character`s:
    /// `e` followed by a combining accent counts 2).
    public var length: QueryExpression<Int?> {
        QueryExpression<Int?>(.length(node), type: .integer)
    }
}

// MARK: Dates

/// `Date` and `Date?`: calendar-day tests.
public protocol QueryDate: QueryComparable {}
extension Date: QueryDate {}
extension Optional: QueryDate where Wrapped == Date {}

extension QueryExpression where Value: QueryDate {
    /// Whether the instant falls on the calendar day that contains `date` in
    /// `timeZone` (from its midnight, included, to the next, excluded; 23 or 25
    /// hours on a daylight-saving change).
    ///
    /// The day's bounds are computed in Swift and bound as instants, so the
    /// answer never depends on the database's or the session's time zone.
    public func isInDay(containing date: Date, in timeZone: TimeZone) -> QueryPredicate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let start = calendar.startOfDay(for: date)
        let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
        return QueryPredicate(.and([
            QueryNode(.compare(node, .greaterOrEqual, .value(start)), type: .bool),
            QueryNode(.compare(node, .less, .value(end)), type: .bool),
        ]), type: .bool)
    }
}

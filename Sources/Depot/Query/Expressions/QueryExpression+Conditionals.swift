// MARK: coalesce and NULLIF

extension QueryExpression where Value: QueryOptional {
    /// The value, or `fallback` where it is NULL: `COALESCE(self, fallback)`.
    ///
    /// ```swift
    /// Reminder.all.order { ($0.dueDate ?? farFuture).ascending() }
    /// ```
    public static func ?? (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> QueryExpression<Value.Wrapped> {
        QueryExpression<Value.Wrapped>(.coalesce(lhs.node.coalesced + [rhs.node]), type: lhs.node.type)
    }

    /// The value, or `fallback` where it is NULL.
    public static func ?? (lhs: Self, rhs: Value.Wrapped) -> QueryExpression<Value.Wrapped> {
        QueryExpression<Value.Wrapped>(.coalesce(lhs.node.coalesced + [.value(rhs)]), type: lhs.node.type)
    }

    /// The value, or the other where it is NULL; NULL when both are.
    public static func ?? (lhs: Self, rhs: Self) -> Self {
        Self(.coalesce(lhs.node.coalesced + [rhs.node]), type: lhs.node.type)
    }
}

extension QueryNode {
    /// The operands of a COALESCE, so `a ?? b ?? c` renders one.
    var coalesced: [QueryNode] {
        if case .coalesce(let parts) = kind { return parts }
        return [self]
    }
}

extension QueryExpression where Value: QueryValue {
    /// NULL where the value equals `value` (text by code point, dates as
    /// instants), the value otherwise: `NULLIF(self, value)`.
    ///
    /// ```swift
    /// RemindersList.all.select { $0.notes.nullIf("") }   // empty notes read as nil
    /// ```
    public func nullIf(_ value: Value) -> QueryExpression<Value.Nullable> {
        QueryExpression<Value.Nullable>(.nullIf(node, .value(value)), type: node.type)
    }

    /// NULL where the value equals `other`'s, the value otherwise.
    public func nullIf(_ other: QueryExpression<Value>) -> QueryExpression<Value.Nullable> {
        QueryExpression<Value.Nullable>(.nullIf(node, other.node), type: node.type)
    }
}

// MARK: CASE

/// `CASE WHEN … THEN … END`: the result of the first condition that is true.
///
/// ```swift
/// let label = Case.when($0.priority.eq(3), then: "high")
///     .when($0.priority.eq(2), then: "medium")
///     .else("low")                      // QueryExpression<String>
/// let maybe = Case.when($0.isFlagged, then: 1).end()   // QueryExpression<Int?>: NULL otherwise
/// ```
///
/// A condition that is NULL (unknown) is not true: its result is skipped.
public enum Case {
    /// The first branch: `result` where `condition` is true.
    public static func when<V: QueryValue>(_ condition: QueryExpression<some QueryBool>, then result: V) -> CaseExpression<V> {
        CaseExpression(parts: [condition.node, .value(result)])
    }

    /// The first branch: the expression `result` where `condition` is true.
    public static func when<V: QueryValue>(_ condition: QueryExpression<some QueryBool>, then result: QueryExpression<V>) -> CaseExpression<V> {
        CaseExpression(parts: [condition.node, result.node])
    }
}

/// A ``Case`` being built: add branches with `when`, finish with `else` or `end`.
public struct CaseExpression<Value: QueryValue>: Sendable {
    var parts: [QueryNode]

    /// Another branch, tried when the earlier ones' conditions were not true.
    public func when(_ condition: QueryExpression<some QueryBool>, then result: Value) -> CaseExpression {
        CaseExpression(parts: parts + [condition.node, .value(result)])
    }

    /// Another branch whose result is an expression.
    public func when(_ condition: QueryExpression<some QueryBool>, then result: QueryExpression<Value>) -> CaseExpression {
        CaseExpression(parts: parts + [condition.node, result.node])
    }

    /// The result where no condition is true.
    public func `else`(_ result: Value) -> QueryExpression<Value> {
        QueryExpression(.caseWhen(parts + [.value(result)], hasElse: true), type: Value.queryType)
    }

    /// The expression's value where no condition is true.
    public func `else`(_ result: QueryExpression<Value>) -> QueryExpression<Value> {
        QueryExpression(.caseWhen(parts + [result.node], hasElse: true), type: Value.queryType)
    }

    /// NULL where no condition is true.
    public func end() -> QueryExpression<Value.Nullable> {
        QueryExpression<Value.Nullable>(.caseWhen(parts, hasElse: false), type: Value.queryType)
    }
}

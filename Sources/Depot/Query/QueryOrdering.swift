/// Where NULLs go in an ordering. Always written out, so both engines agree
/// (SQLite puts NULLs first in ascending order, PostgreSQL last).
public enum NullsPlacement: Sendable {
    /// NULLs before every value.
    case first
    /// NULLs after every value: the default.
    case last
}

/// One term of a query's order: an expression, a direction and NULLs' place.
///
/// ```swift
/// Reminder.all.order { [$0.dueDate.ascending(), $0.title.folded.ascending()] }
/// ```
///
/// Text orders by Unicode code point on every engine (`B` before `a`, `É`
/// after `z`); order by `folded` for ASCII-case-insensitive order.
public struct QueryOrdering: Sendable {
    let node: QueryNode
    let descending: Bool
    let nulls: NullsPlacement
}

extension QueryExpression where Value: QueryComparable {
    /// Smallest first; NULLs last unless you say otherwise.
    public func ascending(nulls: NullsPlacement = .last) -> QueryOrdering {
        QueryOrdering(node: node, descending: false, nulls: nulls)
    }

    /// Largest first; NULLs last unless you say otherwise.
    public func descending(nulls: NullsPlacement = .last) -> QueryOrdering {
        QueryOrdering(node: node, descending: true, nulls: nulls)
    }
}

/// Where NULLs go in an ordering. Always written out, so both engines agree
/// (SQLite puts NULLs first in ascending order, PostgreSQL last).
public enum NullsPlacement: Sendable {
    /// NULLs before every value.
    case first
    /// NULLs after every value: the default.
    case last
}

/// What a query's `order` takes: a ``QueryOrdering``, or a bare expression,
/// which orders ascending with NULLs last.
///
/// ```swift
/// Reminder.order { [$0.dueDate, $0.title.descending()] }   // dueDate ascending, then title descending
/// ```
public protocol QueryOrderingTerm: Sendable {
    /// The term as an ordering.
    var queryOrdering: QueryOrdering { get }
}

/// A bare expression in `order` means ascending, NULLs last.
extension QueryExpression: QueryOrderingTerm where Value: QueryComparable {
    /// ``ascending(nulls:)`` with NULLs last.
    public var queryOrdering: QueryOrdering { ascending() }
}

/// One term of a query's order: an expression, a direction and NULLs' place.
///
/// ```swift
/// Reminder.all.order { [$0.dueDate.ascending(), $0.title.folded.ascending()] }
/// ```
///
/// Text orders by Unicode code point on every engine (`B` before `a`, `É`
/// after `z`); order by `folded` for ASCII-case-insensitive order.
public struct QueryOrdering: QueryOrderingTerm {
    let node: QueryNode
    let descending: Bool
    let nulls: NullsPlacement

    /// Itself.
    public var queryOrdering: QueryOrdering { self }
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

import Foundation

/// One node of a query's syntax tree: structure only, rendered late by the
/// store's dialect, so each dialect can spell each meaning its own way.
public struct QueryNode: Sendable {
    /// Leaves are stored inline; only the cases that hold other nodes are boxed,
    /// so building a record type's columns allocates nothing per column.
    enum Kind: Sendable {
        /// A column of one of the query's tables.
        case column(QueryColumn)
        /// A bound value, encoded with the store's strategies when rendered.
        case value(any QueryValue)
        case constant(Bool)
        indirect case compare(QueryNode, ComparisonOperator, QueryNode)
        indirect case isNull(QueryNode, negated: Bool)
        indirect case isNotDistinct(QueryNode, QueryNode, negated: Bool)
        indirect case inList(QueryNode, [QueryNode], negated: Bool)
        case and([QueryNode])
        case or([QueryNode])
        indirect case not(QueryNode)
        indirect case textMatch(QueryNode, TextMatch, needle: String, caseInsensitive: Bool)
        indirect case length(QueryNode)
        indirect case folded(QueryNode)
        indirect case aggregate(Aggregate, QueryNode?, filter: QueryNode?)
        indirect case inSubquery(QueryNode, Subquery, negated: Bool)
        /// `EXISTS (SELECT 1 FROM table WHERE filters)`, whose filters may name the outer query's columns.
        case exists(table: String, filters: [QueryNode], negated: Bool)
        /// Checked 64-bit integer arithmetic: an overflow or a zero divisor is an error.
        indirect case arithmetic(QueryNode, ArithmeticOperator, QueryNode)
        /// Text joined: NULL when either side is.
        indirect case concatenate(QueryNode, QueryNode)
        /// The first operand that is not NULL.
        case coalesce([QueryNode])
        /// NULL when the operands are equal (text by code point), the first otherwise.
        indirect case nullIf(QueryNode, QueryNode)
        /// `CASE WHEN c1 THEN r1 ... [ELSE e] END`: conditions and results alternate,
        /// then the ELSE result when `hasElse`.
        case caseWhen([QueryNode], hasElse: Bool)
        /// `count` code points from the 0-based code point `offset` (both bound).
        indirect case substring(QueryNode, offset: Int, count: Int)
        /// The scalar of this kind at the path in a JSON document; NULL otherwise (the path is bound).
        indirect case json(QueryNode, [JSONPathComponent], JSONScalarKind)
        /// The value a declared query's parameter at this position takes when it runs.
        case parameter(Int)
        /// Whether the record with this key matches a full-text query, or its rank.
        indirect case search(QueryNode, SearchNode)
    }

    /// A full-text query of a search index, as a predicate or a rank.
    struct SearchNode: Sendable {
        let table: String
        let query: SearchQuery
        /// The fields' weights, or the error of an index that cannot be used.
        let weights: Result<[Int], DatabaseError>
        /// Whether the node is the rank (an integer) rather than the predicate.
        let isRank: Bool
    }

    /// A selection of another (or the same) table, rendered in place.
    struct Subquery: Sendable {
        let render: @Sendable (QueryRenderer) throws -> Void
    }

    let kind: Kind
    /// The kind of value the node yields, when known.
    let type: QueryType?

    init(_ kind: Kind, type: QueryType?) {
        self.kind = kind
        self.type = type
    }

    /// A column reference: a coding key (the key strategy names it) or, for
    /// primary keys, a column name; `source` is the table's place in a join (0 for the first).
    struct QueryColumn: Sendable, Hashable {
        let key: String
        let source: Int
        var isColumnName = false
    }

    /// Whether the node computes a value from others (arithmetic, CASE, coalesce...).
    var isComputed: Bool {
        switch kind {
        case .arithmetic, .concatenate, .coalesce, .nullIf, .caseWhen, .substring, .json: true
        default: false
        }
    }

    static func columnNamed(_ name: String, source: Int = 0) -> QueryNode {
        QueryNode(.column(QueryColumn(key: name, source: source, isColumnName: true)), type: nil)
    }

    enum ComparisonOperator: String, Sendable {
        case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

        var isOrdering: Bool { self != .equal && self != .notEqual }
    }

    enum TextMatch: Sendable, Hashable {
        case contains, prefix, suffix
    }

    enum Aggregate: String, Sendable, Hashable {
        case count, sum, min, max, average
    }
}

/// A typed SQL expression: a column, a bound value, or an operation on them.
///
/// Columns come from the record type's `@Columns` mapping; every operator has
/// one meaning on every engine:
///
/// ```swift
/// let due = try db.fetchAll(Reminder.where { !$0.isCompleted && $0.dueDate < tomorrow }
///     .order { $0.dueDate.ascending() })
/// ```
///
/// Equality is spelled `eq` and `neq`, not `==`: SQL's comparisons are
/// three-valued (a comparison with NULL is neither true nor false), and a row
/// passes a filter only when it is true. Use `isNull()` to find NULLs.
public struct QueryExpression<Value>: Sendable {
    /// The expression's syntax tree.
    public let node: QueryNode

    init(_ kind: QueryNode.Kind, type: QueryType?) {
        node = QueryNode(kind, type: type)
    }

    init(node: QueryNode) {
        self.node = node
    }
}

extension QueryExpression {
    /// The column with this coding key, of a type queries cannot compare (a
    /// nested Codable value stored as JSON). The `@Columns` macro makes these.
    public init(column key: String, source: QuerySource) {
        node = QueryNode(.column(.init(key: key, source: source.index)), type: nil)
    }
}

extension QueryExpression where Value: QueryValue {
    /// A value bound into the query, as an expression: for the side of an
    /// operator that is no column.
    ///
    /// ```swift
    /// Note.all.select { _ in QueryExpression<Int>(Int.max) + 1 }   // an overflow error on every engine
    /// ```
    public init(_ value: Value) {
        node = .value(value)
    }

    /// The column with this coding key. The `@Columns` macro makes these.
    public init(column key: String, source: QuerySource) {
        node = QueryNode(.column(.init(key: key, source: source.index)), type: Value.queryType)
    }
}

/// Which table of a query a set of columns belongs to: the first, or a joined one.
public struct QuerySource: Sendable, Hashable {
    let index: Int
    /// The query's first table.
    public static let root = QuerySource(index: 0)
    /// The table of an `exists` subquery.
    public static let correlated = QuerySource(index: 2)
}

/// A record type's typed columns, as the `@Columns` macro generates them.
public protocol QueryColumns: Sendable {
    /// The columns of the table at `source` in a query.
    init(source: QuerySource)
}

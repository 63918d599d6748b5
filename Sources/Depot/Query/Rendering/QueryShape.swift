/// A query's shape: its structure without its values. Queries of one shape
/// render the same SQL, so a connection renders each shape once and afterwards
/// only collects the values to bind.
///
/// The key finds a cached shape by the record type, a 64-bit hash of the
/// structure and the number of nodes; the cached ``RenderedShape`` then
/// compares its structure with the query's, node for node, so two shapes are
/// the same only when they are. Queries holding a subquery are not cached.
struct QueryShapeKey: Hashable {
    let type: ObjectIdentifier
    let hash: UInt64
    let nodes: Int

    /// The key of a record query, or nil when it cannot be cached.
    init?<T>(_ query: Query<T>, operation: UInt8) {
        var hasher = ShapeHasher()
        hasher.mix(UInt64(operation))
        hasher.mix(UInt64(query.filters.count))
        for filter in query.filters where !filter.feedShape(&hasher) { return nil }
        hasher.mix(UInt64(query.orderings.count))
        for ordering in query.orderings {
            guard ordering.node.feedShape(&hasher) else { return nil }
            hasher.mix(ordering.descending, ordering.nulls == .first)
        }
        hasher.mix(query.limitCount != nil, query.offsetCount != nil)
        type = ObjectIdentifier(T.self)
        hash = hasher.state
        nodes = hasher.nodes
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}

/// The SQL rendered for one shape, with the shape it was rendered for.
struct RenderedShape {
    let filters: [QueryNode]
    let orderings: [QueryOrdering]
    let hasLimit: Bool
    let hasOffset: Bool
    let sql: String

    init<T>(_ query: Query<T>, sql: String) {
        filters = query.filters
        orderings = query.orderings
        hasLimit = query.limitCount != nil
        hasOffset = query.offsetCount != nil
        self.sql = sql
    }

    /// Whether `query` has exactly this shape (its values aside).
    func matches<T>(_ query: Query<T>) -> Bool {
        guard hasLimit == (query.limitCount != nil), hasOffset == (query.offsetCount != nil),
              filters.count == query.filters.count, orderings.count == query.orderings.count else { return false }
        for (a, b) in zip(filters, query.filters) where !a.hasSameShape(as: b) { return false }
        for (a, b) in zip(orderings, query.orderings) {
            guard a.descending == b.descending, a.nulls == b.nulls, a.node.hasSameShape(as: b.node) else { return false }
        }
        return true
    }
}

extension QueryNode {
    /// Whether two nodes render the same SQL: the same structure, columns,
    /// operators and types, whatever their bound values.
    func hasSameShape(as other: QueryNode) -> Bool {
        guard type == other.type else { return false }
        switch (kind, other.kind) {
        case (.column(let a), .column(let b)):
            return a == b
        case (.value, .value):
            return true
        case (.constant(let a), .constant(let b)):
            return a == b
        case (.compare(let l1, let op1, let r1), .compare(let l2, let op2, let r2)):
            return op1 == op2 && l1.hasSameShape(as: l2) && r1.hasSameShape(as: r2)
        case (.isNull(let a, let n1), .isNull(let b, let n2)):
            return n1 == n2 && a.hasSameShape(as: b)
        case (.isNotDistinct(let l1, let r1, let n1), .isNotDistinct(let l2, let r2, let n2)):
            return n1 == n2 && l1.hasSameShape(as: l2) && r1.hasSameShape(as: r2)
        case (.inList(let a, let list1, let n1), .inList(let b, let list2, let n2)):
            return n1 == n2 && list1.count == list2.count && a.hasSameShape(as: b)
                && zip(list1, list2).allSatisfy { $0.hasSameShape(as: $1) }
        case (.and(let p1), .and(let p2)), (.or(let p1), .or(let p2)):
            return p1.count == p2.count && zip(p1, p2).allSatisfy { $0.hasSameShape(as: $1) }
        case (.not(let a), .not(let b)), (.length(let a), .length(let b)), (.folded(let a), .folded(let b)):
            return a.hasSameShape(as: b)
        case (.textMatch(let a, let m1, let needle1, let c1), .textMatch(let b, let m2, let needle2, let c2)):
            // The needle is bound; only whether it is empty changes the SQL.
            return m1 == m2 && c1 == c2 && needle1.isEmpty == needle2.isEmpty && a.hasSameShape(as: b)
        case (.aggregate(let g1, let o1, let f1), .aggregate(let g2, let o2, let f2)):
            return g1 == g2 && Self.sameShape(o1, o2) && Self.sameShape(f1, f2)
        case (.exists(let t1, let f1, let n1), .exists(let t2, let f2, let n2)):
            return t1 == t2 && n1 == n2 && f1.count == f2.count && zip(f1, f2).allSatisfy { $0.hasSameShape(as: $1) }
        case (.arithmetic(let l1, let op1, let r1), .arithmetic(let l2, let op2, let r2)):
            return op1 == op2 && l1.hasSameShape(as: l2) && r1.hasSameShape(as: r2)
        case (.concatenate(let l1, let r1), .concatenate(let l2, let r2)), (.nullIf(let l1, let r1), .nullIf(let l2, let r2)):
            return l1.hasSameShape(as: l2) && r1.hasSameShape(as: r2)
        case (.coalesce(let p1), .coalesce(let p2)):
            return p1.count == p2.count && zip(p1, p2).allSatisfy { $0.hasSameShape(as: $1) }
        case (.caseWhen(let p1, let e1), .caseWhen(let p2, let e2)):
            return e1 == e2 && p1.count == p2.count && zip(p1, p2).allSatisfy { $0.hasSameShape(as: $1) }
        case (.substring(let a, _, _), .substring(let b, _, _)):
            // The offset and count are bound.
            return a.hasSameShape(as: b)
        case (.json(let a, _, let kindA), .json(let b, _, let kindB)):
            // The path is bound (and checked again each time values are collected).
            return kindA == kindB && a.hasSameShape(as: b)
        default:
            // Subqueries are never cached; different kinds differ.
            return false
        }
    }

    private static func sameShape(_ a: QueryNode?, _ b: QueryNode?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.hasSameShape(as: b)
        default: false
        }
    }
}

/// A cheap, well-mixing hash of a query's structure, and a count of its nodes:
/// `Hasher`'s SipHash costs more than the rest of a cached lookup.
struct ShapeHasher {
    private(set) var state: UInt64 = 0x243F_6A88_85A3_08D3
    private(set) var nodes = 0

    /// Mixes one token in; each step is a bijection of the state.
    @inline(__always)
    mutating func mix(_ word: UInt64) {
        state = (state ^ word) &* 0x9E37_79B9_7F4A_7C15
        state ^= state >> 31
    }

    mutating func mix(_ a: Bool, _ b: Bool) {
        mix((a ? 1 : 0) | (b ? 2 : 0))
    }

    mutating func mix(_ text: String) {
        var chunk: UInt64 = 0
        var shift: UInt64 = 0
        for byte in text.utf8 {
            chunk |= UInt64(byte) << shift
            shift += 8
            if shift == 64 {
                mix(chunk)
                (chunk, shift) = (0, 0)
            }
        }
        // The length ends the text, so "ab" + "c" and "a" + "bc" differ.
        mix(chunk)
        mix(UInt64(text.utf8.count))
    }

    mutating func node(_ tag: UInt64, _ type: QueryType?) {
        nodes += 1
        mix(tag << 8 | UInt64(type.map(Self.code) ?? 0))
    }

    private static func code(_ type: QueryType) -> UInt8 {
        switch type {
        case .integer: 1
        case .double: 2
        case .text: 3
        case .bool: 4
        case .date: 5
        case .uuid: 6
        case .blob: 7
        case .decimal: 8
        }
    }
}

extension QueryNode {
    /// Feeds the node's structure (never its values) to `hasher`; false for a
    /// node whose SQL cannot be cached (a subquery).
    func feedShape(_ hasher: inout ShapeHasher) -> Bool {
        switch kind {
        case .column(let column):
            hasher.node(1, type)
            hasher.mix(UInt64(column.source) << 1 | (column.isColumnName ? 1 : 0))
            hasher.mix(column.key)
        case .value:
            hasher.node(2, type)
        case .constant(let truth):
            hasher.node(3, type)
            hasher.mix(truth, false)
        case .compare(let lhs, let op, let rhs):
            hasher.node(4, type)
            hasher.mix(op.shapeCode)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .isNull(let operand, let negated):
            hasher.node(5, type)
            hasher.mix(negated, false)
            return operand.feedShape(&hasher)
        case .isNotDistinct(let lhs, let rhs, let negated):
            hasher.node(6, type)
            hasher.mix(negated, false)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .inList(let operand, let list, let negated):
            hasher.node(7, type)
            hasher.mix(negated, false)
            hasher.mix(UInt64(list.count))
            return operand.feedShape(&hasher) && list.allSatisfy { $0.feedShape(&hasher) }
        case .and(let parts), .or(let parts):
            if case .and = kind { hasher.node(8, type) } else { hasher.node(9, type) }
            hasher.mix(UInt64(parts.count))
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .not(let operand):
            hasher.node(10, type)
            return operand.feedShape(&hasher)
        case .textMatch(let operand, let match, let needle, let caseInsensitive):
            // The needle is bound; only whether it is empty changes the SQL.
            hasher.node(11, type)
            hasher.mix(UInt64(match.shapeCode) << 2 | (needle.isEmpty ? 1 : 0) | (caseInsensitive ? 2 : 0))
            return operand.feedShape(&hasher)
        case .length(let operand):
            hasher.node(12, type)
            return operand.feedShape(&hasher)
        case .folded(let operand):
            hasher.node(13, type)
            return operand.feedShape(&hasher)
        case .aggregate(let aggregate, let operand, let filter):
            hasher.node(14, type)
            hasher.mix(UInt64(aggregate.shapeCode) << 2 | (operand != nil ? 1 : 0) | (filter != nil ? 2 : 0))
            return (operand?.feedShape(&hasher) ?? true) && (filter?.feedShape(&hasher) ?? true)
        case .inSubquery, .parameter, .search:
            // A parameter's value comes only through its declared query.
            return false
        case .exists(let table, let filters, let negated):
            hasher.node(15, type)
            hasher.mix(table)
            hasher.mix(negated, false)
            hasher.mix(UInt64(filters.count))
            return filters.allSatisfy { $0.feedShape(&hasher) }
        case .arithmetic(let lhs, let op, let rhs):
            hasher.node(16, type)
            hasher.mix(op.shapeCode)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .concatenate(let lhs, let rhs):
            hasher.node(17, type)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .coalesce(let parts):
            hasher.node(18, type)
            hasher.mix(UInt64(parts.count))
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .nullIf(let lhs, let rhs):
            hasher.node(19, type)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .caseWhen(let parts, let hasElse):
            hasher.node(20, type)
            hasher.mix(hasElse, false)
            hasher.mix(UInt64(parts.count))
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .substring(let operand, _, _):
            hasher.node(21, type)
            return operand.feedShape(&hasher)
        case .json(let operand, _, let kind):
            hasher.node(22, type)
            hasher.mix(kind == .text ? 1 : kind == .integer ? 2 : kind == .double ? 3 : 4)
            return operand.feedShape(&hasher)
        }
        return true
    }
}

extension QueryNode.ComparisonOperator {
    var shapeCode: UInt64 {
        switch self {
        case .equal: 1
        case .notEqual: 2
        case .less: 3
        case .lessOrEqual: 4
        case .greater: 5
        case .greaterOrEqual: 6
        }
    }
}

extension ArithmeticOperator {
    var shapeCode: UInt64 {
        switch self {
        case .add: 1
        case .subtract: 2
        case .multiply: 3
        case .divide: 4
        case .remainder: 5
        }
    }
}

extension QueryNode.TextMatch {
    var shapeCode: UInt8 {
        switch self {
        case .contains: 1
        case .prefix: 2
        case .suffix: 3
        }
    }
}

extension QueryNode.Aggregate {
    var shapeCode: UInt8 {
        switch self {
        case .count: 1
        case .sum: 2
        case .min: 3
        case .max: 4
        case .average: 5
        }
    }
}

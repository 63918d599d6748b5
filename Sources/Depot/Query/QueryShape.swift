/// A query's shape: its structure without its values. Queries of one shape
/// render the same SQL, so a connection renders each shape once and afterwards
/// only collects the values to bind.
///
/// The key is the record type, a 64-bit hash of the structure and the number
/// of nodes: two shapes collide only if both agree, about one chance in 2^64
/// per pair of the at most 512 shapes a connection keeps. Queries holding a
/// subquery are not cached.
struct QueryShapeKey: Hashable {
    let type: ObjectIdentifier
    let hash: Int
    let nodes: Int

    /// The key of a record query, or nil when it cannot be cached.
    init?<T>(_ query: Query<T>, operation: UInt8) {
        var hasher = Hasher()
        guard Self.feed(query, operation, &hasher) else { return nil }
        type = ObjectIdentifier(T.self)
        hash = hasher.finalize()
        nodes = query.filters.reduce(query.orderings.count) { $0 + $1.nodeCount }
    }

    private static func feed<T>(_ query: Query<T>, _ operation: UInt8, _ hasher: inout Hasher) -> Bool {
        hasher.combine(operation)
        hasher.combine(query.filters.count)
        for filter in query.filters where !filter.feedShape(&hasher) { return false }
        hasher.combine(query.orderings.count)
        for ordering in query.orderings {
            guard ordering.node.feedShape(&hasher) else { return false }
            hasher.combine(ordering.descending)
            hasher.combine(ordering.nulls == .first)
        }
        hasher.combine(query.limitCount != nil)
        hasher.combine(query.offsetCount != nil)
        return true
    }
}

extension QueryNode {
    /// How many nodes the tree holds.
    var nodeCount: Int {
        switch kind {
        case .column, .value, .constant, .inSubquery: 1
        case .exists(_, let filters, _): filters.reduce(1) { $0 + $1.nodeCount }
        case .compare(let a, _, let b), .isNotDistinct(let a, let b, _): 1 + a.nodeCount + b.nodeCount
        case .isNull(let a, _), .not(let a), .textMatch(let a, _, _, _), .length(let a), .folded(let a): 1 + a.nodeCount
        case .inList(let a, let list, _): 1 + a.nodeCount + list.count
        case .and(let parts), .or(let parts): parts.reduce(1) { $0 + $1.nodeCount }
        case .aggregate(_, let a, let f): 1 + (a?.nodeCount ?? 0) + (f?.nodeCount ?? 0)
        }
    }

    /// Feeds the node's structure (never its values) to `hasher`; false for a
    /// node whose SQL cannot be cached (a subquery).
    func feedShape(_ hasher: inout Hasher) -> Bool {
        hasher.combine(type)
        switch kind {
        case .column(let column):
            hasher.combine(1 as UInt8)
            hasher.combine(column)
        case .value:
            hasher.combine(2 as UInt8)
        case .constant(let truth):
            hasher.combine(3 as UInt8)
            hasher.combine(truth)
        case .compare(let lhs, let op, let rhs):
            hasher.combine(4 as UInt8)
            hasher.combine(op.rawValue)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .isNull(let operand, let negated):
            hasher.combine(5 as UInt8)
            hasher.combine(negated)
            return operand.feedShape(&hasher)
        case .isNotDistinct(let lhs, let rhs, let negated):
            hasher.combine(6 as UInt8)
            hasher.combine(negated)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .inList(let operand, let list, let negated):
            hasher.combine(7 as UInt8)
            hasher.combine(negated)
            hasher.combine(list.count)
            return operand.feedShape(&hasher) && list.allSatisfy { $0.feedShape(&hasher) }
        case .and(let parts), .or(let parts):
            if case .and = kind { hasher.combine(8 as UInt8) } else { hasher.combine(9 as UInt8) }
            hasher.combine(parts.count)
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .not(let operand):
            hasher.combine(10 as UInt8)
            return operand.feedShape(&hasher)
        case .textMatch(let operand, let match, let needle, let caseInsensitive):
            // The needle is bound; only whether it is empty changes the SQL.
            hasher.combine(11 as UInt8)
            hasher.combine(match)
            hasher.combine(needle.isEmpty)
            hasher.combine(caseInsensitive)
            return operand.feedShape(&hasher)
        case .length(let operand):
            hasher.combine(12 as UInt8)
            return operand.feedShape(&hasher)
        case .folded(let operand):
            hasher.combine(13 as UInt8)
            return operand.feedShape(&hasher)
        case .aggregate(let aggregate, let operand, let filter):
            hasher.combine(14 as UInt8)
            hasher.combine(aggregate)
            hasher.combine(operand != nil)
            hasher.combine(filter != nil)
            return (operand?.feedShape(&hasher) ?? true) && (filter?.feedShape(&hasher) ?? true)
        case .inSubquery:
            return false
        case .exists(let table, let filters, let negated):
            hasher.combine(15 as UInt8)
            hasher.combine(table)
            hasher.combine(negated)
            hasher.combine(filters.count)
            return filters.allSatisfy { $0.feedShape(&hasher) }
        }
        return true
    }
}

/// What a node is before any row is read, when the query alone decides it:
/// the constants an engine's planner may fold.
///
/// PostgreSQL replaces a strict operator beside a NULL it knows at planning
/// time by NULL without computing the other operand, so an overflow there is
/// never raised; SQLite computes both. The renderer folds those operators
/// (arithmetic and comparisons) itself, so every engine gives NULL; and so
/// an AND with a false part, or an OR with a true one (a constant, or a
/// Boolean value bound into the query). What the renderer folds depends on
/// these values, so their kind (NULL, true, false) is part of a query's
/// shape, which a connection renders once.
///
/// A declared query's parameter is not known when the query is rendered, but
/// PostgreSQL folds a NULL one just the same when it plans a run with the
/// values bound (a custom plan), and computes the other side when it plans
/// once for any value (a generic plan). Where that other side can fail, the
/// renderer asks for the parameter first (``QueryNode/isNullDecidedWhenRun``).
enum KnownValue: Equatable {
    case null
    case truth(Bool)
}

/// `Optional.none` behind an existential, without knowing the wrapped type.
private protocol OptionalNoneTest {
    var isNone: Bool { get }
}

extension Optional: OptionalNoneTest {
    fileprivate var isNone: Bool { self == nil }
}

extension QueryNode {
    /// The node's value when no row can change it; nil when it depends on rows.
    var known: KnownValue? {
        switch kind {
        case .constant(let truth):
            return .truth(truth)
        case .value(let value):
            return Self.known(value, type: type)
        case .inList(_, let list, let negated):
            return list.isEmpty ? .truth(negated) : nil
        case .and(let parts):
            let values = parts.map(\.known)
            if values.contains(.truth(false)) { return .truth(false) }
            return values.allSatisfy { $0 == .truth(true) } ? .truth(true) : nil
        case .or(let parts):
            let values = parts.map(\.known)
            if values.contains(.truth(true)) { return .truth(true) }
            return values.allSatisfy { $0 == .truth(false) } ? .truth(false) : nil
        case .not(let operand):
            switch operand.known {
            case .truth(let truth): return .truth(!truth)
            case .null: return .null
            case nil: return nil
            }
        case .arithmetic(let lhs, _, let rhs), .compare(let lhs, _, let rhs):
            return lhs.known == .null || rhs.known == .null ? .null : nil
        case .coalesce(let operands):
            return operands.allSatisfy { $0.known == .null } ? .null : nil
        case .nullIf(let operand, _):
            return operand.known == .null ? .null : nil
        case .caseWhen(let parts, let hasElse):
            let pairs = hasElse ? parts.count - 1 : parts.count
            for index in stride(from: 0, to: pairs - 1, by: 2) {
                switch parts[index].known {
                case .truth(true): return parts[index + 1].known
                case .truth(false), .null: continue
                case nil: return nil
                }
            }
            return hasElse ? parts.last?.known : .null
        default:
            return nil
        }
    }
}

extension QueryNode {
    /// What a bound value decides: NULL for nil, the truth of a Boolean. The
    /// shape of every query run asks it of each value, so it costs no dynamic
    /// cast for a value that is neither optional nor a Boolean (an optional's
    /// `Nullable` is itself).
    static func known(_ value: any QueryValue, type: QueryType?) -> KnownValue? {
        func opened<V: QueryValue>(_ value: V) -> KnownValue? {
            if V.Nullable.self == V.self, (value as? any OptionalNoneTest)?.isNone == true { return .null }
            if type == .bool, let truth = value as? Bool { return .truth(truth) }
            return nil
        }
        return opened(value)
    }

    /// True when no row changes the node's value (no column, aggregate or
    /// subquery reads one), so an engine that plans a run with its values
    /// bound folds it, though the renderer does not know it (a declared query's
    /// parameter; `NULLIF` of two values).
    var isRowIndependent: Bool {
        allNodes { node in
            switch node.kind {
            case .column, .aggregate, .exists, .inSubquery, .search: return false
            default: return true
            }
        }
    }

    /// A row-independent operand whose NULL, unknown here, an engine may fold
    /// an operator beside: the renderer asks for it first where the other
    /// operand can fail.
    var isNullDecidedWhenRun: Bool { known == nil && isRowIndependent && mayBeNull }

    /// A row-independent Boolean, unknown here, that an engine may fold an AND
    /// or OR by: the renderer asks for it first where another part can fail.
    var isTruthDecidedWhenRun: Bool { known == nil && type == .bool && isRowIndependent }

    /// Whether the node may be NULL: false only when no value of its operands
    /// makes it NULL (a value that is not nil, a constant, a NULL test, or
    /// operators on those).
    var mayBeNull: Bool {
        switch kind {
        case .value: return known == .null
        case .constant, .isNull, .isNotDistinct, .exists: return false
        case .compare(let lhs, _, let rhs), .arithmetic(let lhs, _, let rhs), .concatenate(let lhs, let rhs):
            return lhs.mayBeNull || rhs.mayBeNull
        case .not(let operand), .length(let operand), .folded(let operand), .substring(let operand, _, _),
             .textMatch(let operand, _, _, _):
            return operand.mayBeNull
        case .and(let parts), .or(let parts):
            return parts.contains { $0.mayBeNull }
        case .inList(let operand, let list, _):
            return operand.mayBeNull || list.contains { $0.mayBeNull }
        case .coalesce(let parts):
            return parts.allSatisfy { $0.mayBeNull }
        default:
            return true
        }
    }

    /// True when computing the node can raise an error on some values: it holds
    /// integer arithmetic (an overflow, a division by zero).
    var canFail: Bool {
        !allNodes { node in
            if case .arithmetic = node.kind { return false }
            return true
        }
    }

    /// The columns the node reads, each once, in the order met; nil when it
    /// holds a subquery or a search (which read columns their own way).
    var columnsRead: [QueryColumn]? {
        var columns: [QueryColumn] = []
        let plain = allNodes { node in
            switch node.kind {
            case .column(let column):
                if !columns.contains(column) { columns.append(column) }
                return true
            case .exists, .inSubquery, .search: return false
            default: return true
            }
        }
        return plain ? columns : nil
    }

    /// Whether `test` holds for this node and every node below it (stopping at the first that fails).
    func allNodes(_ test: (QueryNode) -> Bool) -> Bool {
        guard test(self) else { return false }
        switch kind {
        case .column, .value, .constant, .parameter, .exists:
            return true
        case .compare(let lhs, _, let rhs), .isNotDistinct(let lhs, let rhs, _), .arithmetic(let lhs, _, let rhs),
             .concatenate(let lhs, let rhs), .nullIf(let lhs, let rhs):
            return lhs.allNodes(test) && rhs.allNodes(test)
        case .isNull(let operand, _), .not(let operand), .textMatch(let operand, _, _, _), .length(let operand),
             .folded(let operand), .substring(let operand, _, _), .json(let operand, _, _), .search(let operand, _),
             .inSubquery(let operand, _, _):
            return operand.allNodes(test)
        case .inList(let operand, let list, _):
            return operand.allNodes(test) && list.allSatisfy { $0.allNodes(test) }
        case .and(let parts), .or(let parts), .coalesce(let parts), .caseWhen(let parts, _):
            return parts.allSatisfy { $0.allNodes(test) }
        case .aggregate(_, let operand, let filter):
            return (operand?.allNodes(test) ?? true) && (filter?.allNodes(test) ?? true)
        }
    }
}

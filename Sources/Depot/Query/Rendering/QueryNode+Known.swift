/// What a node is before any row is read, when the query alone decides it:
/// the constants an engine's planner may fold.
///
/// PostgreSQL replaces a strict operator beside a NULL it knows at planning
/// time by NULL without computing the other operand, so an overflow there is
/// never raised; SQLite computes both. The renderer folds those operators
/// (arithmetic and comparisons) itself, so every engine gives NULL.
///
/// Caveat: a declared query's parameter is not known when the query is
/// rendered. PostgreSQL may still fold a NULL one (a custom plan binds it as
/// a constant), where SQLite computes the other side.
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
            return (value as? any OptionalNoneTest)?.isNone == true ? .null : nil
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

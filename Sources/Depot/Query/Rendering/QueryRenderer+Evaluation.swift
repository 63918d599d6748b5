/// The order in which an engine computes what can fail (integer arithmetic:
/// an overflow, a zero divisor), pinned so every engine and every plan fails
/// on the same queries: beside a NULL or a Boolean the query decides, and in
/// AND and OR. See the README's operator table, and ``KnownValue``.
extension QueryRenderer {
    /// Renders a condition: a node of which only the truth counts (see ``rendersCondition``).
    func renderCondition(_ node: QueryNode) throws {
        let saved = rendersCondition
        rendersCondition = true
        defer { rendersCondition = saved }
        try render(node)
    }

    /// Renders a strict operator (`body`) on `lhs` and `rhs`, NULL without
    /// computing it when an operand no row changes (a declared query's
    /// parameter, `NULLIF` of two values) is NULL and the other can fail.
    ///
    /// PostgreSQL folds such an operator to NULL when it plans a run with the
    /// values bound, and computes the failing side when it plans once for any
    /// value; SQLite and MariaDB compute it. Asking for the parameter first
    /// (`CASE WHEN p IS NULL THEN NULL ELSE ... END`) gives every engine and
    /// every plan the meaning of a NULL the query decides (``KnownValue``).
    /// Only then: an operand that cannot fail keeps its plain form, and an
    /// index on `column = parameter` stays usable.
    ///
    /// The test casts the operand to its own type, so PostgreSQL knows the
    /// parameter's type there; an operand of another type than a number, a
    /// text or a Boolean (which a failing integer operand is not compared
    /// with) keeps the plain form.
    func guardingParameters(_ lhs: QueryNode, _ rhs: QueryNode, _ body: () throws -> Void) throws {
        let decided = lhs.isNullDecidedWhenRun && rhs.canFail ? lhs : rhs.isNullDecidedWhenRun && lhs.canFail ? rhs : nil
        let type: ColumnType?
        switch decided?.type {
        case .integer: type = .integer
        case .double: type = .double
        case .text: type = .text
        case .bool: type = .bool
        default: type = nil
        }
        guard let decided, let type else { return try body() }
        text += "CASE WHEN CAST("
        try render(decided)
        text += " AS \(dialect.castTypeName(type))) IS NULL THEN NULL ELSE "
        try body()
        text += " END"
    }

    /// Renders AND or OR so that every engine computes the same parts of it,
    /// whatever order its planner prefers: a part that can fail (integer
    /// arithmetic: an overflow, a zero divisor) is computed only when the
    /// parts before it, in this order, leave the result open.
    ///
    /// 1. Parts that can fail and that no row changes (a declared query's
    ///    parameter times two): PostgreSQL computes them when it plans a run
    ///    with its values bound, wherever they stand, so every engine does first.
    /// 2. Parts that cannot fail, all together, in the engine's own order (an
    ///    index on `id = 5` keeps its use; a false one decides an AND).
    /// 3. Parts that can fail and read a row, left to right, as Swift's `&&`
    ///    and `||` do: `a != 0 && 10 / a > 1` and `10 / a > 1 && a != 0` are both
    ///    false for a row whose `a` is 0, on every engine, and neither fails.
    ///
    /// In a condition (a WHERE, ON, HAVING or FILTER, a CASE's WHEN) a NULL
    /// part decides an AND as false does: the row is left out either way, and
    /// both engines stop there (SQLite jumps on the first part not true,
    /// PostgreSQL's filter stops on it). Elsewhere (a selected Boolean, under
    /// NOT) NULL AND x is NULL or false by x, so x is computed.
    ///
    /// PostgreSQL orders the parts of a WHERE clause by their cost and SQLite
    /// computes them as written, so `10 / a > 1 AND a <> 0` failed on one and
    /// not on the other. A CASE, which both compute in order, keeps this one.
    /// The parts that cannot fail also stay outside it, joined by AND, where an
    /// index can serve them; they are computed twice, and outside a condition
    /// the parts that can fail are too.
    func renderConnective(_ parts: [QueryNode], isAnd: Bool) throws {
        let separator = isAnd ? " AND " : " OR "
        func join(_ nodes: some Collection<QueryNode>) throws {
            text += "("
            for (index, part) in nodes.enumerated() {
                if index > 0 { text += separator }
                try render(part)
            }
            text += ")"
        }
        let failing = parts.filter(\.canFail)
        guard parts.count > 1, !failing.isEmpty else { return try join(parts) }
        let safe = parts.filter { !$0.canFail }
        // The steps in order: one part, or the parts that cannot fail together.
        var steps = failing.filter(\.isRowIndependent).map { [$0] }
        if !safe.isEmpty { steps.append(safe) }
        steps += failing.filter { !$0.isRowIndependent }.map { [$0] }
        let decisive = dialect.booleanLiteral(!isAnd)
        text += "("
        if isAnd {
            for part in safe {
                try render(part)
                text += " AND "
            }
        }
        if rendersCondition {
            // Only truth counts: a step not true ends an AND, a true one an OR;
            // each step is computed once, in the CASE (`CASE WHEN a THEN b ELSE FALSE END`).
            if isAnd {
                for step in steps.dropLast() {
                    text += "CASE WHEN "
                    try join(step)
                    text += " THEN "
                }
                try join(steps[steps.count - 1])
                for _ in steps.dropLast() { text += " ELSE \(decisive) END" }
            } else {
                text += "CASE"
                for step in steps.dropLast() {
                    text += " WHEN "
                    try join(step)
                    text += " THEN \(decisive)"
                }
                text += " ELSE "
                try join(steps[steps.count - 1])
                text += " END"
            }
        } else {
            // NULL and false differ: a step ends it only when false (AND) or true (OR).
            // `=`, not IS FALSE: the dialect spells the Boolean; the cast tells PostgreSQL a lone parameter's type.
            let bool = dialect.castTypeName(.bool)
            text += "CASE"
            for step in steps.dropLast() {
                text += " WHEN CAST("
                try join(step)
                text += " AS \(bool)) = \(decisive) THEN \(decisive)"
            }
            text += " ELSE "
            try join(steps.joined())
            text += " END"
        }
        text += ")"
    }
}

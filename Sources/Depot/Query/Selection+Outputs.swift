// Selections of any number of outputs: tuples through parameter packs, and
// rows decoded into a `@Columns` type.

/// How a selection's row becomes its output. (Unchecked: a metatype is immutable.)
enum SelectionReading<Output>: Sendable {
    /// Cell by cell, from the statement.
    case cells(@Sendable (Database, any DriverStatement) throws -> Output)
    /// Through a `@Columns` type's mapping (`Output` itself), the outputs named after its columns.
    case mapped(any ColumnMapped.Type)
}

extension Query {
    /// Several expressions per row instead of the record, read as a tuple.
    ///
    /// ```swift
    /// let rows = try db.fetchAll(Reminder.all.select { ($0.id, $0.title, $0.priority * 10) })
    /// // [(Int64, String, Int?)]
    /// ```
    public func select<each V: QueryValue>(
        _ outputs: (Root.Columns) -> (repeat QueryExpression<each V>)
    ) -> Selection<Root, (repeat each V)> {
        Selection(query: self, outputs: queryNodes(outputs, Root.columns), reading: tupleReading(repeat (each V).self))
    }

    /// Expressions per row decoded into a `@Columns` type: the first output is
    /// its first stored property, and so on; each is named after its property's column.
    ///
    /// ```swift
    /// @Columns struct ListSummary: Codable { var listID: Int64; var open: Int }
    /// let summaries = try db.fetchAll(Reminder.where { !$0.isCompleted }
    ///     .select(into: ListSummary.self) { ($0.listID, Aggregates.countAll()) }
    ///     .group { $0.listID })
    /// ```
    ///
    /// Caveat: the outputs' types are checked when rows are read, not when the
    /// code compiles: an output that does not decode as its property is a
    /// `decoding` error naming the column. A different number of outputs than
    /// properties is a `misuse` error when the selection runs.
    public func select<Target: ColumnMapped, each V: QueryValue>(
        into target: Target.Type,
        _ outputs: (Root.Columns) -> (repeat QueryExpression<each V>)
    ) -> Selection<Root, Target> {
        Selection(query: self, outputs: queryNodes(outputs, Root.columns), reading: .mapped(Target.self))
    }
}

/// The nodes of the tuple of expressions `body` makes of a table's columns.
/// (The closure is called here: a pack tuple passed on as an argument crashes Swift 6.3's SILGen.)
func queryNodes<A, each V>(_ body: (A) -> (repeat QueryExpression<each V>), _ a: A) -> [QueryNode] {
    let tuple = body(a)
    var nodes: [QueryNode] = []
    for expression in repeat each tuple { nodes.append(expression.node) }
    return nodes
}

/// Reads a row's cells in order as a tuple of these types.
func tupleReading<each V: QueryValue>(_ types: repeat (each V).Type) -> SelectionReading<(repeat each V)> {
    .cells { db, statement in
        var index = 0
        func next<C: QueryValue>(_ type: C.Type) throws -> C {
            defer { index += 1 }
            return try db.decodeCell(C.self, statement, index)
        }
        return (repeat try next((each V).self))
    }
}

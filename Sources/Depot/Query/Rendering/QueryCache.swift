/// What the query builder keeps on each connection: the SQL of each query
/// shape it rendered, the start of each record type's SELECT, and the renderer
/// that collects a cached shape's values.
final class QueryCache: ConnectionCache {
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    /// The SQL of each query shape the builder rendered on this connection.
    @exclusivity(unchecked) var rendered: [QueryShapeKey: RenderedShape] = [:]
    /// The start of a query builder's SELECT (`SELECT "a", "b" FROM "t"`), by record type.
    @exclusivity(unchecked) var selectPrefixes: [ObjectIdentifier: String] = [:]
    /// The renderer that collects a cached query shape's values.
    @exclusivity(unchecked) var valuesRenderer: QueryRenderer?
    /// Each declared query's SQL, constant values and parameter slots, by its identity.
    @exclusivity(unchecked) var declared: [ObjectIdentifier: DeclaredRendering] = [:]
    /// The declared query run last, found without hashing when it runs again.
    @exclusivity(unchecked) var lastDeclared: (key: ObjectIdentifier, rendering: DeclaredRendering)?

    init() {}

    /// The SQL stays right: it names columns, not their types.
    func schemaMayHaveChanged() {}
}

/// A declared query rendered on one connection: its SQL, the values bound
/// with the parameters' places left NULL, and where each parameter goes; both
/// in the order the placeholders take them, so a run only fills the slots.
struct DeclaredRendering {
    /// Keeps the identity alive, so its `ObjectIdentifier` is never reused while cached.
    let owner: AnyObject
    let text: String
    let values: [Value]
    /// Each parameter's places among `values` (a value a statement takes twice has two).
    let slots: [DeclaredSlot]

    /// `values` and `slots` (whose `value` is an index in bind order) put in
    /// the order the placeholders take the values in.
    init(owner: AnyObject, text: String, values: [Value], slots: [(value: Int, parameter: Int)], order: [Int]?) {
        self.owner = owner
        self.text = text
        self.values = values.inTextOrder(order)
        let positions = order ?? Array(values.indices)
        var inTextOrder: [DeclaredSlot] = []
        for (position, value) in positions.enumerated() {
            for slot in slots where slot.value == value {
                inTextOrder.append(DeclaredSlot(position: position, parameter: slot.parameter))
            }
        }
        self.slots = inTextOrder
    }
}

/// Where a declared query's parameter goes among the values a run binds.
@usableFromInline
struct DeclaredSlot: Sendable {
    /// The place among the bound values, in the order the placeholders take them.
    @usableFromInline let position: Int
    /// The parameter's position in the declaration.
    @usableFromInline let parameter: Int
}

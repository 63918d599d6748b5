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

    init() {}

    /// The SQL stays right: it names columns, not their types.
    func schemaMayHaveChanged() {}
}

/// A declared query rendered on one connection: its SQL, the values bound with
/// the parameters' places left NULL (in bind order), where each parameter
/// goes, and the order the placeholders take the values in.
struct DeclaredRendering {
    /// Keeps the identity alive, so its `ObjectIdentifier` is never reused while cached.
    let owner: AnyObject
    let text: String
    let values: [Value]
    let slots: [(value: Int, parameter: Int)]
    let order: [Int]?
}

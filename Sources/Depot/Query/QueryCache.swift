/// What the query builder keeps on each connection: the SQL of each query
/// shape it rendered, the start of each record type's SELECT, and the renderer
/// that collects a cached shape's values.
final class QueryCache: ConnectionCache {
    /// The SQL of each query shape the builder rendered on this connection.
    var rendered: [QueryShapeKey: RenderedShape] = [:]
    /// The start of a query builder's SELECT (`SELECT "a", "b" FROM "t"`), by record type.
    var selectPrefixes: [ObjectIdentifier: String] = [:]
    /// The renderer that collects a cached query shape's values.
    var valuesRenderer: QueryRenderer?

    init() {}

    /// The SQL stays right: it names columns, not their types.
    func schemaMayHaveChanged() {}
}

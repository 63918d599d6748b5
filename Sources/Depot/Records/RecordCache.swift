/// What the record operations keep on each connection: the SQL they render
/// once per record type, and which columns have key generators.
/// Touched on its connection's queue only, one access at a time.
final class RecordCache: ConnectionCache {
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    /// Rendered INSERT statements, by record type, columns, row count and RETURNING.
    @exclusivity(unchecked) var insertSQL: [ObjectIdentifier: [(names: [String], rows: Int, returning: Bool, text: String)]] = [:]
    /// The rendered SELECT of `find(_:id:)`, by record type.
    @exclusivity(unchecked) var findSQL: [ObjectIdentifier: String] = [:]
    /// The last type `find` ran for, and its SQL: lookups in a loop compare
    /// an identifier instead of hashing it.
    @exclusivity(unchecked) var lastFind: (type: ObjectIdentifier, text: String)?
    /// The one-value array `find` binds, reused: when no one kept the last
    /// call's copy, writing the new key into it allocates nothing.
    @exclusivity(unchecked) var findKey: [Value] = [.null]
    /// Whether each column has a key generator to advance after explicit keys.
    @exclusivity(unchecked) var keyGenerators: [ColumnKey: Bool] = [:]

    /// Record types none of whose primary-key columns has a key generator.
    @exclusivity(unchecked) var keysWithoutGenerators: Set<ObjectIdentifier> = []

    struct ColumnKey: Hashable {
        let table: String
        let column: String
    }

    init() {}

    /// A schema change may add or drop a column's generator.
    func schemaMayHaveChanged() {
        keyGenerators.removeAll()
        keysWithoutGenerators.removeAll()
    }
}

/// A query declared once, with parameters whose values come when it runs:
/// each connection renders it once, and every run only binds its values.
///
/// ```swift
/// extension Reminder {
///     static let byList = DeclaredQuery { (listID: QueryExpression<Int64>) in
///         Reminder.where { $0.listID.eq(listID) && !$0.isCompleted }.order { $0.position }
///     }
/// }
/// let open = try db.fetchAll(Reminder.byList, 42)
/// ```
///
/// A built query costs a shape hash and comparison on each run; a declared one
/// costs a dictionary lookup by identity, as little as the same SQL written by hand.
///
/// Caveat: declare it once (a `static let`), not per call: each declaration is
/// a new identity that every connection renders and caches again. A parameter
/// used in another query is a `misuse` error when that query runs.
public struct DeclaredQuery<Root: Record & ColumnMapped, each Parameter: QueryValue>: Sendable {
    let query: Query<Root>
    let identity: DeclaredQueryIdentity

    /// Declares the query `build` returns for parameters standing for the values given at each run.
    public init(_ build: (repeat QueryExpression<each Parameter>) -> Query<Root>) {
        var position = 0
        func parameter<V: QueryValue>(_ type: V.Type) -> QueryExpression<V> {
            defer { position += 1 }
            return QueryExpression<V>(node: QueryNode(.parameter(position), type: V.queryType))
        }
        query = build(repeat parameter((each Parameter).self))
        identity = DeclaredQueryIdentity()
    }
}

/// The identity a connection finds a declared query's SQL by.
final class DeclaredQueryIdentity: Sendable {}

extension Database {
    /// Every record the declared query selects for these parameter values, in its order.
    public func fetchAll<T, each P: QueryValue>(_ declared: DeclaredQuery<T, repeat each P>, _ parameters: repeat each P) throws -> [T] {
        let (text, values) = try declaredStatement(declared, repeat each parameters)
        var results: [T] = []
        try mappedRows(T.self, text: text, values: values, limit: .all) { reader in
            results.append(try reader.record(T.self))
        }
        return results
    }

    /// The one record the declared query selects for these parameter values, or nil.
    ///
    /// - Throws: a `tooManyRows` ``DatabaseError`` when it selects more than one.
    public func fetchOne<T, each P: QueryValue>(_ declared: DeclaredQuery<T, repeat each P>, _ parameters: repeat each P) throws -> T? {
        let (text, values) = try declaredStatement(declared, repeat each parameters)
        var result: T?
        try mappedRows(T.self, text: text, values: values, limit: .one) { reader in
            result = try reader.record(T.self)
        }
        return result
    }

    /// The SQL of a declared query, rendered once per connection, and its values with the parameters in place.
    private func declaredStatement<T, each P: QueryValue>(
        _ declared: DeclaredQuery<T, repeat each P>, _ parameters: repeat each P
    ) throws -> (String, [Value]) {
        let key = ObjectIdentifier(declared.identity)
        let rendering: DeclaredRendering
        if let cached = queryCache.declared[key] {
            rendering = cached
        } else {
            let renderer = try queryRenderer(rootTable: T.tableName)
            renderer.parameterSlots = []
            try renderRecordSelect(renderer, declared.query)
            let (text, order) = try renderer.text.statement(for: renderer.dialect, valueCount: renderer.values.count)
            rendering = DeclaredRendering(owner: declared.identity, text: text, values: renderer.values,
                                          slots: renderer.parameterSlots ?? [], order: order)
            // Declarations are meant to be static; a program that makes them per call must not grow this without end.
            if queryCache.declared.count >= 512 { queryCache.declared.removeAll(keepingCapacity: true) }
            queryCache.declared[key] = rendering
        }
        var values = rendering.values
        guard !rendering.slots.isEmpty else { return (rendering.text, values.inTextOrder(rendering.order)) }
        var encoded: [Value] = []
        do {
            for parameter in repeat each parameters { encoded.append(try QueryRenderer.encode(parameter, coding.encoding)) }
        } catch let error as EncodingError {
            throw DatabaseError(encoding: error, table: T.tableName)
        }
        for slot in rendering.slots { values[slot.value] = encoded[slot.parameter] }
        return (rendering.text, values.inTextOrder(rendering.order))
    }
}

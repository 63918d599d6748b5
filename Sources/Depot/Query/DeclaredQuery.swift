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
/// A parameter means what the same value written into the query means. A nil
/// one beside arithmetic makes the operator NULL without computing the
/// arithmetic (`rank * factor > threshold` with a nil threshold matches no
/// row, and never overflows); a false one decides an AND, and a true one an
/// OR, without computing the other side. So on every engine, however
/// PostgreSQL plans the run.
///
/// Caveat: declare it once (a `static let`), not per call: each declaration is
/// a new identity that every connection renders and caches again. A parameter
/// used in another query is a `misuse` error when that query runs.
public struct DeclaredQuery<Root: Record & ColumnMapped, each Parameter: QueryValue>: Sendable {
    @usableFromInline let query: Query<Root>
    @usableFromInline let identity: DeclaredQueryIdentity

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
@usableFromInline
final class DeclaredQueryIdentity: Sendable {
    init() {}
}

/// The values a declared query's run binds: its constants, with each
/// parameter's value written into its places as the parameters come, in order.
@usableFromInline
struct DeclaredParameters {
    @usableFromInline let options: EncodingOptions
    @usableFromInline var values: [Value]
    @usableFromInline let slots: [DeclaredSlot]
    /// The position of the next parameter.
    @usableFromInline var next = 0

    init(options: EncodingOptions, rendering: DeclaredRendering) {
        self.options = options
        values = rendering.values
        slots = rendering.slots
    }

    /// Encodes the next parameter's value into its places. Inlined, so a key
    /// type no strategy changes (`Int64`, `String`...) needs no runtime type test.
    @inlinable
    mutating func append<V: QueryValue>(_ value: V) throws {
        place(try Value.plainKey(value) ?? Self.encode(value, options))
    }

    /// Any other value, through the encoder's strategies.
    @usableFromInline
    static func encode<V: QueryValue>(_ value: V, _ options: EncodingOptions) throws -> Value {
        try QueryRenderer.encode(value, options)
    }

    @usableFromInline
    mutating func place(_ value: Value) {
        for slot in slots where slot.parameter == next { values[slot.position] = value }
        next += 1
    }
}

// The runs of a declared query are inlined into the caller's module, so they
// are compiled for its record and parameter types: unspecialized, each run
// made the runtime build the metadata of `DeclaredQuery<T, repeat each P>`
// through its variadic cache (about 850 instructions a run, more than the
// lookup's own statement path). Only the parameters' encoding, the rows and
// a cache lookup by identity remain per run.
extension Database {
    /// Every record the declared query selects for these parameter values, in its order.
    @inlinable
    public func fetchAll<T, each P: QueryValue>(_ declared: DeclaredQuery<T, repeat each P>, _ parameters: repeat each P) throws -> [T] {
        let (text, values) = try declaredStatement(declared.identity, T.self, declared.query) { encoder in
            for parameter in repeat each parameters { try encoder.append(parameter) }
        }
        var results: [T] = []
        try mappedRows(T.self, text: text, values: values, limit: .all) { reader in
            results.append(try reader.record(T.self))
        }
        return results
    }

    /// The one record the declared query selects for these parameter values, or nil.
    ///
    /// - Throws: a `tooManyRows` ``DatabaseError`` when it selects more than one.
    @inlinable
    public func fetchOne<T, each P: QueryValue>(_ declared: DeclaredQuery<T, repeat each P>, _ parameters: repeat each P) throws -> T? {
        let (text, values) = try declaredStatement(declared.identity, T.self, declared.query) { encoder in
            for parameter in repeat each parameters { try encoder.append(parameter) }
        }
        var result: T?
        try mappedRows(T.self, text: text, values: values, limit: .one) { reader in
            result = try reader.record(T.self)
        }
        return result
    }

    /// The SQL of a declared query, rendered once per connection (`query` is
    /// evaluated then only), and its values with the parameters in place.
    @usableFromInline
    func declaredStatement<T: Record & ColumnMapped>(
        _ identity: DeclaredQueryIdentity, _ type: T.Type, _ query: @autoclosure () -> Query<T>,
        parameters: (inout DeclaredParameters) throws -> Void
    ) throws -> (String, [Value]) {
        let key = ObjectIdentifier(identity)
        let rendering: DeclaredRendering
        if let last = queryCache.lastDeclared, last.key == key {
            rendering = last.rendering
        } else if let cached = queryCache.declared[key] {
            rendering = cached
            queryCache.lastDeclared = (key, cached)
        } else {
            let renderer = try queryRenderer(rootTable: T.tableName)
            renderer.parameterSlots = []
            try renderRecordSelect(renderer, query())
            let (text, order) = try renderer.text.statement(for: renderer.dialect, valueCount: renderer.values.count)
            rendering = DeclaredRendering(owner: identity, text: text, values: renderer.values,
                                          slots: renderer.parameterSlots ?? [], order: order)
            // Declarations are meant to be static; a program that makes them per call must not grow this without end.
            if queryCache.declared.count >= 512 { queryCache.declared.removeAll(keepingCapacity: true) }
            queryCache.declared[key] = rendering
            queryCache.lastDeclared = (key, rendering)
        }
        guard !rendering.slots.isEmpty else { return (rendering.text, rendering.values) }
        var encoder = DeclaredParameters(options: coding.encoding, rendering: rendering)
        do {
            try parameters(&encoder)
        } catch let error as EncodingError {
            throw DatabaseError(encoding: error, table: T.tableName)
        }
        return (rendering.text, encoder.values)
    }
}

import Foundation

/// Reads a ``ColumnMapped`` type's properties from the current row, one column
/// after another, by position.
///
/// Only code that the ``Columns()`` macro generates calls it. Each call reads the
/// column of the next key in ``ColumnMapped/columnKeys`` (its position in the
/// row is worked out once per statement) and converts it with the same rules as
/// `RowDecoder`: the same values and the same errors.
public struct ColumnReader {
    let source: any RowSource
    /// The plan owns the column positions and outlives every reader made from it.
    unowned(unsafe) let plan: DecodePlan
    let mapping: ColumnMapping
    var position = 0

    init(source: any RowSource, plan: DecodePlan, mapping: ColumnMapping) {
        self.source = source
        self.plan = plan
        self.mapping = mapping
    }

    /// The next key's value and context; throws `keyNotFound` when the row has no such column.
    @inline(__always)
    private mutating func next() throws -> (Value, ColumnContext) {
        let (index, key) = try nextIndex()
        guard let index else { throw plan.keyNotFound(key) }
        return (try source.value(at: index), plan.context(index, keyName: key))
    }

    /// The next key's value for an optional property: nil for NULL, and for a
    /// missing column when the strategy allows it.
    @inline(__always)
    private mutating func nextIfPresent() throws -> (Value, ColumnContext)? {
        let (index, key) = try nextIndex()
        guard let index else {
            if plan.options.missingColumns.throws { throw plan.keyNotFound(key) }
            return nil
        }
        let value = try source.value(at: index)
        if case .null = value { return nil }
        return (value, plan.context(index, keyName: key))
    }

    @inline(__always)
    private mutating func nextIndex() throws -> (Int?, String) {
        let position = self.position
        guard position < mapping.indexes.count else {
            let message = "the generated column mapping read more properties than its columnKeys list (\(mapping.indexes.count))"
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: message,
                                                    underlyingError: ColumnFailure(message: message)))
        }
        self.position = position + 1
        let index = mapping.indexes[position]
        return (index < 0 ? nil : index, mapping.keys[position])
    }

    /// Reads a `Bool`.
    public mutating func decode(_ type: Bool.Type) throws -> Bool { let (v, c) = try next(); return try ValueDecoding.bool(v, c) }
    /// Reads a `String`.
    public mutating func decode(_ type: String.Type) throws -> String { let (v, c) = try next(); return try ValueDecoding.string(v, c) }
    /// Reads a `Double`.
    public mutating func decode(_ type: Double.Type) throws -> Double { let (v, c) = try next(); return try ValueDecoding.double(v, c) }
    /// Reads a `Float`.
    public mutating func decode(_ type: Float.Type) throws -> Float { let (v, c) = try next(); return try ValueDecoding.float(v, c) }
    /// Reads an `Int`.
    public mutating func decode(_ type: Int.Type) throws -> Int { let (v, c) = try next(); return try ValueDecoding.integer(Int.self, v, c) }
    /// Reads an `Int32`.
    public mutating func decode(_ type: Int32.Type) throws -> Int32 { let (v, c) = try next(); return try ValueDecoding.integer(Int32.self, v, c) }
    /// Reads an `Int64`.
    public mutating func decode(_ type: Int64.Type) throws -> Int64 { let (v, c) = try next(); return try ValueDecoding.integer(Int64.self, v, c) }
    /// Reads a `Date`, with the store's date strategy.
    public mutating func decode(_ type: Date.Type) throws -> Date { let (v, c) = try next(); return try ValueDecoding.date(v, c, plan.options) }
    /// Reads any other `Decodable` type, as `RowDecoder` reads a property of that type.
    public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, c) = try next()
        return try ValueDecoding.decode(type, from: v, c, plan.options)
    }

    /// Reads an optional `Bool`: nil for NULL.
    public mutating func decode(_ type: Bool?.Type) throws -> Bool? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.bool(v, c)
    }
    /// Reads an optional `String`: nil for NULL.
    public mutating func decode(_ type: String?.Type) throws -> String? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.string(v, c)
    }
    /// Reads an optional `Double`: nil for NULL.
    public mutating func decode(_ type: Double?.Type) throws -> Double? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.double(v, c)
    }
    /// Reads an optional `Int`: nil for NULL.
    public mutating func decode(_ type: Int?.Type) throws -> Int? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.integer(Int.self, v, c)
    }
    /// Reads an optional `Int64`: nil for NULL.
    public mutating func decode(_ type: Int64?.Type) throws -> Int64? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.integer(Int64.self, v, c)
    }
    /// Reads an optional `Date`: nil for NULL.
    public mutating func decode(_ type: Date?.Type) throws -> Date? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.date(v, c, plan.options)
    }
    /// Reads any other optional `Decodable` type: nil for NULL.
    public mutating func decode<T: Decodable>(_ type: T?.Type) throws -> T? {
        guard let (v, c) = try nextIfPresent() else { return nil }
        return try ValueDecoding.decode(T.self, from: v, c, plan.options)
    }
}

/// Where each of a ``ColumnMapped`` type's keys sits in one statement's columns.
final class ColumnMapping {
    let keys: [String]
    /// Column positions by key order; -1 for a key with no column.
    let indexes: [Int]
    let type: any ColumnMapped.Type

    init(type: any ColumnMapped.Type, plan: DecodePlan) {
        self.type = type
        keys = type.columnKeys
        indexes = keys.map { plan.columnIndex(forKey: $0) ?? -1 }
    }
}

extension ColumnMapped {
    /// Decodes the current row of `source` as `T`, which is `Self`.
    static func decodeMapped<T>(_ target: T.Type, from source: some RowSource, plan: DecodePlan, mapping: ColumnMapping) throws -> T {
        var reader = ColumnReader(source: source, plan: plan, mapping: mapping)
        let value = try Self(columns: &reader)
        if Self.self == T.self {
            // The identity check makes the cast a no-op conversion from Self to Self.
            return unsafeBitCast(value, to: T.self)
        }
        guard let typed = value as? T else {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "the column mapping of \(Self.self) cannot produce \(T.self)"))
        }
        return typed
    }
}

import Foundation

/// Writes a ``ColumnMapped`` type's properties as the values of one row, one
/// column after another.
///
/// Only code that the ``Columns()`` macro generates calls it. Each call stores
/// the next key's value with the same rules as `RowEncoder`: the same values and
/// the same errors. A nil optional is written as NULL, never skipped.
public struct ColumnWriter {
    let names: ColumnNames
    let options: EncodingOptions
    var values: [Value] = []
    /// Whether the record is written through the generated mapping; false when
    /// the store turned it off, and the record then encodes through Codable.
    @usableFromInline
    let usesGeneratedMapping: Bool
    /// The record as Codable encoded it, when the mapping is off.
    var codableColumns: EncodedColumns?

    init(names: ColumnNames, options: EncodingOptions, usesGeneratedMapping: Bool = true) {
        self.names = names
        self.options = options
        self.usesGeneratedMapping = usesGeneratedMapping
        values.reserveCapacity(names.keys.count)
    }

    /// Encodes the record through its Codable conformance, as `RowEncoder` does.
    @usableFromInline
    mutating func encodeThroughCodable<T: Encodable>(_ record: T) throws {
        codableColumns = try EncodedColumns.encode(record, options: options, keyStrategy: names.keyStrategy, deduplicating: false)
    }

    /// Moves the row written into `row`: the generated mapping's values under
    /// their column names, or what Codable encoded. Ready for the next record
    /// afterwards, writing into the buffer `row` held (the two buffers take
    /// turns, so a batch allocates none per row).
    mutating func take(into row: inout EncodedColumns, for type: Any.Type) throws {
        if let codable = codableColumns {
            codableColumns = nil
            row = codable
            return
        }
        guard values.count == names.keys.count else {
            let written = values.count
            values.removeAll(keepingCapacity: true)
            throw EncodingError.invalidValue(written, .init(
                codingPath: [],
                debugDescription: "the generated column mapping of \(type) wrote \(written) values for \(names.keys.count) columnKeys"))
        }
        row.names = names.columns
        swap(&row.values, &values)
        values.removeAll(keepingCapacity: true)
        if names.hasRepeats { row.removeDuplicateNames() }
    }

    /// The coding path of the value being written, for errors.
    private var codingPath: [any CodingKey] {
        values.count < names.keys.count ? [NamedKey(stringValue: names.keys[values.count])] : []
    }

    private var column: String? {
        values.count < names.columns.count ? names.columns[values.count] : nil
    }

    /// Writes a `Bool`.
    public mutating func encode(_ value: Bool) throws { values.append(.bool(value)) }
    /// Writes a `String`.
    public mutating func encode(_ value: String) throws { values.append(.text(value)) }
    /// Writes a `Double`; NaN is refused.
    public mutating func encode(_ value: Double) throws { values.append(try ValueEncoder.double(value, codingPath: codingPath)) }
    /// Writes an `Int`.
    public mutating func encode(_ value: Int) throws { values.append(.integer(Int64(value))) }
    /// Writes an `Int32`.
    public mutating func encode(_ value: Int32) throws { values.append(.integer(Int64(value))) }
    /// Writes an `Int64`.
    public mutating func encode(_ value: Int64) throws { values.append(.integer(value)) }
    /// Writes a `Date`, with the store's date strategy.
    public mutating func encode(_ value: Date) throws {
        values.append(try ValueEncoder.date(value, options: options, codingPath: codingPath))
    }
    /// Writes any other `Encodable` value, as `RowEncoder` writes a property of that type.
    public mutating func encode<T: Encodable>(_ value: T) throws {
        values.append(try ValueEncoder.encode(value, options: options, column: column, codingPath: codingPath))
    }

    /// Writes an optional `Bool`: NULL for nil.
    public mutating func encode(_ value: Bool?) throws { if let value { try encode(value) } else { values.append(.null) } }
    /// Writes an optional `String`: NULL for nil.
    public mutating func encode(_ value: String?) throws { if let value { try encode(value) } else { values.append(.null) } }
    /// Writes an optional `Double`: NULL for nil.
    public mutating func encode(_ value: Double?) throws { if let value { try encode(value) } else { values.append(.null) } }
    /// Writes an optional `Int`: NULL for nil.
    public mutating func encode(_ value: Int?) throws { if let value { try encode(value) } else { values.append(.null) } }
    /// Writes an optional `Int64`: NULL for nil.
    public mutating func encode(_ value: Int64?) throws { if let value { try encode(value) } else { values.append(.null) } }
    /// Writes an optional `Date`: NULL for nil.
    public mutating func encode(_ value: Date?) throws { if let value { try encode(value) } else { values.append(.null) } }
    /// Writes any other optional `Encodable` value: NULL for nil.
    public mutating func encode<T: Encodable>(_ value: T?) throws {
        if let value { try encode(value) } else { values.append(.null) }
    }
}

/// A ``ColumnMapped`` type's keys and their column names under one key strategy.
final class ColumnNames: Sendable {
    let type: any ColumnMapped.Type
    let keys: [String]
    /// The column name of each key, in key order.
    let columns: [String]
    /// Whether the key strategy gives two keys one column name: the row then keeps
    /// the last value at the first place, as `RowEncoder` does.
    let hasRepeats: Bool

    let keyStrategy: KeyStrategy

    init(type: any ColumnMapped.Type, keyStrategy: KeyStrategy) {
        self.type = type
        self.keyStrategy = keyStrategy
        keys = type.columnKeys
        columns = keyStrategy.isDefault ? keys : keys.map { keyStrategy.columnName(for: $0) }
        hasRepeats = Set(columns).count != columns.count
    }

    /// The names for a type that has a generated mapping; nil for any other type.
    static func make(for type: Any.Type, keyStrategy: KeyStrategy) -> ColumnNames? {
        (type as? any ColumnMapped.Type).map { ColumnNames(type: $0, keyStrategy: keyStrategy) }
    }
}

extension ColumnMapped {
    /// Encodes `value`, which is a `Self`, through the generated mapping.
    static func encodeMapped<T>(_ value: T, names: ColumnNames, options: EncodingOptions) throws -> EncodedColumns {
        var writer = ColumnWriter(names: names, options: options)
        if T.self == Self.self {
            // The identity check makes the cast a no-op conversion from Self to Self.
            try unsafeBitCast(value, to: Self.self).encode(columns: &writer)
        } else if let mapped = value as? Self {
            try mapped.encode(columns: &writer)
        } else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(T.self) is not \(Self.self)"))
        }
        guard writer.values.count == names.keys.count else {
            throw EncodingError.invalidValue(value, .init(
                codingPath: [],
                debugDescription: "the generated column mapping of \(Self.self) wrote \(writer.values.count) values for \(names.keys.count) columnKeys"))
        }
        var columns = EncodedColumns(names: names.columns, values: writer.values)
        if names.hasRepeats { columns.removeDuplicateNames() }
        return columns
    }
}

/// The ``ColumnNames`` of each type, made once per connection (whose store has
/// one key strategy): nil for a type without a generated mapping, so the
/// conformance lookup happens once per type, not once per record.
final class ColumnNamesCache: ConnectionCache {
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    // Touched on the connection's queue only.
    @exclusivity(unchecked) private var names: [ObjectIdentifier: ColumnNames?] = [:]

    init() {}

    /// Names come from types, not from the schema: nothing to forget.
    func schemaMayHaveChanged() {}

    func names(for type: Any.Type, keyStrategy: KeyStrategy) -> ColumnNames? {
        if let cached = names[ObjectIdentifier(type)] { return cached }
        let made = ColumnNames.make(for: type, keyStrategy: keyStrategy)
        names[ObjectIdentifier(type)] = made
        return made
    }
}

import Foundation

/// Encodes an `Encodable` value into the ordered columns of one row.
///
/// Modeled on `JSONEncoder`: configure strategies, then encode.
///
/// ```swift
/// struct Reminder: Codable { var id: Int64; var title: String; var dueDate: Date? }
/// let row = try RowEncoder().encode(Reminder(id: 1, title: "Call", dueDate: nil))
/// row.columns.names  // ["id", "title", "dueDate"]
/// row["dueDate"]     // .null: a nil property is written as NULL, never skipped
/// ```
///
/// Each property becomes one column. Nested structs, arrays and dictionaries
/// become JSON text (JSONB on PostgreSQL); RawRepresentable enums and other
/// single-value wrappers store their raw value. What cannot be stored throws an
/// `EncodingError` naming the property: `UInt64` above `Int64.max`, NaN, dates
/// outside the years 0001...9999. Nothing is truncated.
public struct RowEncoder: Sendable {
    /// How `Date` properties are stored. Default: the store's native form.
    public var dateEncodingStrategy: DateStrategy = .deferredToStore
    /// How `UUID` properties are stored. Default: the store's native form.
    public var uuidEncodingStrategy: UUIDStrategy = .deferredToStore
    /// How `Data` properties are stored. Default: a blob.
    public var dataEncodingStrategy: DataStrategy = .blob
    /// How property names become column names. Default: unchanged.
    public var keyStrategy: KeyStrategy = .useDefaultKeys
    /// The JSON encoder for nested values. Default: sorted keys, dates as
    /// `Date`'s own number (lossless).
    ///
    /// Caveat: `JSONEncoder` is a class; configure a fresh one rather than
    /// mutating one already in use.
    public var jsonEncoder: JSONEncoder = RowEncoder.defaultJSONEncoder()
    /// JSON encoders for particular columns, by column name; others use ``jsonEncoder``.
    public var columnJSONEncoders: [String: JSONEncoder] = [:]
    /// Values your `encode(to:)` implementations can read from `encoder.userInfo`,
    /// for the record and for nested values stored as JSON (added to the JSON
    /// encoder's own `userInfo`, whose entries win on a shared key).
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with default strategies.
    public init() {}

    /// The default encoder for nested JSON values: sorted keys, so equal values store equal text.
    public static func defaultJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    var options: EncodingOptions {
        let json = jsonEncoder.adding(userInfo: userInfo)
        let columns = columnJSONEncoders.mapValues { $0.adding(userInfo: userInfo) }
        return EncodingOptions(
            dateStrategy: dateEncodingStrategy,
            uuidStrategy: uuidEncodingStrategy,
            dataStrategy: dataEncodingStrategy,
            jsonEncoder: { column in column.flatMap { columns[$0] } ?? json },
            userInfo: userInfo)
    }

    /// Encodes a value into a row: its column names and values, in encoding order.
    ///
    /// - Throws: `EncodingError` when a property cannot be stored, or when the
    ///   value is not a keyed type (a struct or class with properties).
    public func encode<T: Encodable>(_ value: T) throws -> Row {
        let encoded = try EncodedColumns.encode(value, options: options, keyStrategy: keyStrategy)
        return Row(columns: ColumnSet(encoded.names), values: encoded.values)
    }

    /// Encodes one value as a single column would hold it.
    public func encodeValue<T: Encodable>(_ value: T) throws -> Value {
        try ValueEncoder.encode(value, options: options, column: nil)
    }

}

/// The columns of one encoded record, in the order `encode(to:)` wrote them.
struct EncodedColumns {
    var names: [String] = []
    var values: [Value] = []

    /// Encodes a record. With `deduplicating` false, a key written twice appears
    /// twice: the caller must check the names (a batch compares them with the
    /// previous row's, already checked).
    static func encode<T: Encodable>(_ value: T, options: EncodingOptions, keyStrategy: KeyStrategy, deduplicating: Bool = true,
                                     names cache: ColumnNamesCache? = nil) throws -> EncodedColumns {
        if options.usesGeneratedMapping {
            let names = if let cache { cache.names(for: T.self, keyStrategy: keyStrategy) } else { ColumnNames.make(for: T.self, keyStrategy: keyStrategy) }
            if let names { return try names.type.encodeMapped(value, names: names, options: options) }
        }
        let encoder = RowEncoding(options: options, keyStrategy: keyStrategy)
        try value.encode(to: encoder)
        if encoder.shape != .keyed {
            throw EncodingError.invalidValue(value, .init(
                codingPath: [],
                debugDescription: "\(T.self) does not encode as a row: a row needs a type with properties (a keyed container), not a single value or a list"))
        }
        if deduplicating { encoder.columns.removeDuplicateNames() }
        return encoder.columns
    }

    /// A key written twice keeps its last value at its first place, as JSONEncoder does.
    mutating func removeDuplicateNames() {
        guard names.count > 1 else { return }
        var index = 1
        while index < names.count {
            if let first = names[..<index].firstIndex(of: names[index]) {
                values[first] = values[index]
                names.remove(at: index)
                values.remove(at: index)
            } else {
                index += 1
            }
        }
    }
}

/// The `Encoder` for a whole row.
private final class RowEncoding: Encoder {
    enum Shape { case none, keyed, other }
    let options: EncodingOptions
    let keyStrategy: KeyStrategy
    var columns = EncodedColumns()
    var shape = Shape.none
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    init(options: EncodingOptions, keyStrategy: KeyStrategy) {
        self.options = options
        self.keyStrategy = keyStrategy
        columns.names.reserveCapacity(16)
        columns.values.reserveCapacity(16)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if shape == .none { shape = .keyed }
        return KeyedEncodingContainer(RowKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        shape = .other
        return RefusingUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        shape = .other
        return RefusingSingleValueContainer()
    }
}

private struct RowKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoding
    var codingPath: [any CodingKey] { [] }

    @inline(__always)
    private func column(_ key: Key) -> String {
        encoder.keyStrategy.isDefault ? key.stringValue : encoder.keyStrategy.columnName(for: key.stringValue)
    }

    @inline(__always)
    private func put(_ value: Value, _ key: Key) {
        encoder.columns.names.append(column(key))
        encoder.columns.values.append(value)
    }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.text(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(try ValueEncoder.double(value, codingPath: [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(try ValueEncoder.double(Double(value), codingPath: [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(try ValueEncoder.unsigned(UInt64(value), codingPath: [key]), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(try ValueEncoder.unsigned(value, codingPath: [key]), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if T.self == Date.self {
            // The commonest non-primitive property: skip the generic lookup. The type
            // identity check makes the bit cast a no-op conversion from Date to Date.
            return put(try ValueEncoder.date(unsafeBitCast(value, to: Date.self), options: encoder.options, codingPath: [key]), key)
        }
        let name = column(key)
        put(try ValueEncoder.encode(value, options: encoder.options, column: name, codingPath: [key]), key)
    }

    // A nil optional is written as NULL: `update` must clear the column, not skip it.
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try value.map { try encode($0, forKey: key) } ?? put(.null, key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { put(.null, key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.shape = .other
        return KeyedEncodingContainer(RefusingKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.shape = .other
        return RefusingUnkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.shape = .other
        return encoder
    }
}

// Containers a row cannot hold. They throw on first use; `EncodedColumns.encode`
// also reports the shape when the value never wrote anything into them.
private let refusal = "a row holds one value per column: encode a Codable value for the property (stored as JSON) instead of a nested container"

private struct RefusingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { throw ValueEncoder.invalid(Value.null, [key], refusal) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw ValueEncoder.invalid(value, [key], refusal) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { RefusingUnkeyedContainer() }
    mutating func superEncoder() -> any Encoder { RefusingEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RefusingEncoder() }
}

private struct RefusingUnkeyedContainer: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws { throw ValueEncoder.invalid(Value.null, [], refusal) }
    mutating func encode<T: Encodable>(_ value: T) throws { throw ValueEncoder.invalid(value, [], refusal) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RefusingKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { RefusingUnkeyedContainer() }
    mutating func superEncoder() -> any Encoder { RefusingEncoder() }
}

private struct RefusingSingleValueContainer: SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil() throws { throw ValueEncoder.invalid(Value.null, [], refusal) }
    mutating func encode<T: Encodable>(_ value: T) throws { throw ValueEncoder.invalid(value, [], refusal) }
}

private struct RefusingEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RefusingKeyedContainer<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { RefusingUnkeyedContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { RefusingSingleValueContainer() }
}

extension JSONEncoder {
    /// A copy with `userInfo` added, so nested values see the row coder's user info.
    func adding(userInfo extra: [CodingUserInfoKey: any Sendable]) -> JSONEncoder {
        guard !extra.isEmpty else { return self }
        let copy = JSONEncoder()
        copy.outputFormatting = outputFormatting
        copy.dateEncodingStrategy = dateEncodingStrategy
        copy.dataEncodingStrategy = dataEncodingStrategy
        copy.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
        copy.keyEncodingStrategy = keyEncodingStrategy
        copy.userInfo = userInfo.merging(extra.mapValues { $0 as Any }) { own, _ in own }
        return copy
    }
}

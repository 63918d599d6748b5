import Foundation

/// The `Decoder` for a whole row.
final class RowDecoding: Decoder {
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, fetch
    // through Codable: 165.6M instructions with these checks, 148.0M without (stream: 161.6M, 144.0M).
    @exclusivity(unchecked) var source: any RowSource
    /// The plan owns this decoder and outlives it.
    unowned(unsafe) let plan: DecodePlan
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { plan.options.userInfo }

    init(source: any RowSource, plan: DecodePlan) {
        self.source = source
        self.plan = plan
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedContainer<Key>(decoder: self))
    }

    /// A row has no list of values: ``RowDecoder`` reads the type from the JSON of the row's only column.
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw NeedsJSON()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        let value = try plan.onlyValue(of: Any.self, from: source)
        return ColumnDecoder(value: value, context: plan.context(0, keyName: nil), options: plan.options)
    }

    func keyNotFound(_ key: some CodingKey) -> DecodingError {
        plan.keyNotFound(key.stringValue)
    }
}

private struct RowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoding
    var codingPath: [any CodingKey] { [] }

    /// The keys that have a column; with a key strategy other than the default,
    /// only keys that were already asked for can be listed.
    var allKeys: [Key] {
        decoder.plan.columns.names.compactMap { Key(stringValue: $0) }.filter { contains($0) }
    }

    func contains(_ key: Key) -> Bool { decoder.plan.index(forKey: key.stringValue) != nil }

    @inline(__always)
    private func column(_ key: Key) throws -> (Value, ColumnContext) {
        let name = key.stringValue
        guard let index = decoder.plan.index(forKey: name) else { throw decoder.keyNotFound(key) }
        return (try decoder.source.value(at: index), decoder.plan.context(index, keyName: name))
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if decoder.plan.index(forKey: key.stringValue) == nil, case .decodeOptionalAsNil = decoder.plan.options.missingColumns {
            return true
        }
        return try column(key).0.isNull
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeColumn(type, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try decodeColumnIfPresent(type, key) }

    private func decodeColumn<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        let (value, context) = try column(key)
        return try decodeValue(type, value, context)
    }

    private func decodeColumnIfPresent<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try decodeValue(type, value, context)
    }

    /// Dates, the commonest non-primitive property, skip the generic lookup: the
    /// type identity check makes the bit cast a no-op conversion from Date to Date.
    @inline(__always)
    private func decodeValue<T: Decodable>(_ type: T.Type, _ value: Value, _ context: ColumnContext) throws -> T {
        if T.self == Date.self {
            return unsafeBitCast(try ValueDecoding.date(value, context, decoder.plan.options), to: T.self)
        }
        return try ValueDecoding.decode(type, from: value, context, decoder.plan.options)
    }

    /// The column's value for an optional property: nil for NULL, and for a
    /// missing column when the strategy allows it.
    @inline(__always)
    private func presentColumn(_ key: Key) throws -> (Value, ColumnContext)? {
        let name = key.stringValue
        guard let index = decoder.plan.index(forKey: name) else {
            if decoder.plan.options.missingColumns.throws { throw decoder.keyNotFound(key) }
            return nil
        }
        let value = try decoder.source.value(at: index)
        if case .null = value { return nil }
        return (value, decoder.plan.context(index, keyName: name))
    }

    // The concrete overloads: synthesized Decodable calls these for primitive
    // properties, and their default implementations would skip our strict rules.
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        let (value, context) = try column(key)
        return try ValueDecoding.bool(value, context)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        let (value, context) = try column(key)
        return try ValueDecoding.string(value, context)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        let (value, context) = try column(key)
        return try ValueDecoding.double(value, context)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        let (value, context) = try column(key)
        return try ValueDecoding.float(value, context)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(Int.self, value, context)
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(Int8.self, value, context)
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(Int16.self, value, context)
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(Int32.self, value, context)
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(Int64.self, value, context)
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(UInt.self, value, context)
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(UInt8.self, value, context)
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(UInt16.self, value, context)
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(UInt32.self, value, context)
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        let (value, context) = try column(key)
        return try ValueDecoding.integer(UInt64.self, value, context)
    }


    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.bool(value, context)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.string(value, context)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.double(value, context)
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.float(value, context)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(Int.self, value, context)
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(Int8.self, value, context)
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(Int16.self, value, context)
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(Int32.self, value, context)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(Int64.self, value, context)
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(UInt.self, value, context)
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(UInt8.self, value, context)
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(UInt16.self, value, context)
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(UInt32.self, value, context)
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        guard let (value, context) = try presentColumn(key) else { return nil }
        return try ValueDecoding.integer(UInt64.self, value, context)
    }


    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw nestedRefusal(key)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw nestedRefusal(key)
    }

    private func nestedRefusal(_ key: Key) -> DecodingError {
        let message = "a row has one value per column: decode a Decodable type for \"\(key.stringValue)\" (read from JSON) instead of a nested container"
        return .typeMismatch(Any.self, .init(codingPath: [key], debugDescription: message,
                                             underlyingError: ColumnFailure(column: key.stringValue, message: message)))
    }

    /// The same row: a subclass and its superclass read the same columns.
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}

extension RowDecoder.MissingColumnStrategy {
    var `throws`: Bool {
        if case .throw = self { return true }
        return false
    }
}

/// The `Decoder` for one column's value: single values decode directly; a
/// request for a container means the column holds JSON.
struct ColumnDecoder: Decoder, SingleValueDecodingContainer {
    let value: Value
    let context: ColumnContext
    let options: DecodingOptions
    var codingPath: [any CodingKey] { context.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    init(value: Value, context: ColumnContext, options: DecodingOptions) {
        self.value = value
        self.context = context
        self.options = options
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw NeedsJSON() }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NeedsJSON() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try ValueDecoding.decode(type, from: value, context, options)
    }
}

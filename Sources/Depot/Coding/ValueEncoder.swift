import Foundation

/// Encodes one Swift value into the ``Value`` of one column.
///
/// Known types (integers, floats, strings, Date, UUID, Data, Decimal, URL) map
/// directly. Anything else is encoded through `Encodable`: a type that writes one
/// single value (a RawRepresentable enum, a wrapper) stores that value; a type
/// that asks for a keyed or unkeyed container (a struct, an array, a dictionary)
/// is stored as JSON.
enum ValueEncoder {
    static func encode<T: Encodable>(_ value: T, options: EncodingOptions, column: String?, codingPath: [any CodingKey] = []) throws -> Value {
        if let known = try encodeKnown(value, options: options, codingPath: codingPath) {
            return known
        }
        let probe = SingleValueProbe(options: options, column: column, codingPath: codingPath)
        try value.encode(to: probe)
        switch probe.storage.result {
        case .value(let stored):
            return stored
        case .needsJSON:
            return try encodeJSON(value, options: options, column: column, codingPath: codingPath)
        case .nothing:
            throw EncodingError.invalidValue(value, .init(
                codingPath: codingPath,
                debugDescription: "\(T.self) encoded nothing; a column needs exactly one value"))
        }
    }

    static func encodeJSON<T: Encodable>(_ value: T, options: EncodingOptions, column: String?, codingPath: [any CodingKey]) throws -> Value {
        do {
            let data = try options.jsonEncoder(column).encode(value)
            return .json(String(decoding: data, as: UTF8.self))
        } catch let error as EncodingError {
            throw error
        } catch {
            throw EncodingError.invalidValue(value, .init(
                codingPath: codingPath, debugDescription: "cannot encode \(T.self) as JSON: \(error)", underlyingError: error))
        }
    }

    /// The direct mappings; nil when `value` is not one of the known types.
    /// One conformance lookup, where a chain of casts would cost one each.
    @inline(__always)
    static func encodeKnown<T>(_ value: T, options: EncodingOptions, codingPath: [any CodingKey]) throws -> Value? {
        guard let known = value as? any ColumnEncodable else { return nil }
        return try known.columnValue(options, codingPath)
    }

    static func invalid(_ value: Any, _ codingPath: [any CodingKey], _ message: String) -> EncodingError {
        EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: message))
    }

    static func unsigned(_ v: UInt64, codingPath: [any CodingKey]) throws -> Value {
        guard let i = Int64(exactly: v) else {
            throw invalid(v, codingPath, "\(v) is above Int64.max (\(Int64.max)): databases store signed 64-bit integers; use Int64(bitPattern:) or a Decimal if that is what you mean")
        }
        return .integer(i)
    }

    static func double(_ v: Double, codingPath: [any CodingKey]) throws -> Value {
        guard !v.isNaN else {
            throw invalid(v, codingPath, "NaN cannot be stored: SQLite turns it into NULL, so Depot refuses it on every engine")
        }
        return .double(v)
    }

    static func date(_ v: Date, options: EncodingOptions, codingPath: [any CodingKey]) throws -> Value {
        switch options.dateStrategy {
        case .deferredToStore, .iso8601Text:
            guard let micros = ISO8601.microseconds(v) else {
                throw invalid(v, codingPath, "the date \(v.timeIntervalSince1970) seconds from 1970 is outside the years 0001...9999 that every engine can store")
            }
            if case .iso8601Text = options.dateStrategy { return .text(ISO8601.format(microseconds: micros)) }
            return .date(v)
        case .secondsSince1970:
            // The microsecond a store keeps, in seconds: read back as the same Date.
            if let micros = ISO8601.microseconds(v) { return .double(ISO8601.secondsSince1970(microseconds: micros)) }
            return try double(v.timeIntervalSince1970, codingPath: codingPath)
        case .millisecondsSince1970:
            if let micros = ISO8601.microseconds(v), micros % 1000 == 0 { return .integer(micros / 1000) }
            let ms = v.timeIntervalSince1970 * 1000
            guard ms.isFinite, let whole = Int64(exactly: ms.rounded()),
                  abs(ms - ms.rounded()) < 0.000_5 else {
                throw invalid(v, codingPath, "\(v) has a part finer than a millisecond, which millisecondsSince1970 would lose")
            }
            return .integer(whole)
        case .timeIntervalSinceReferenceDate:
            return try double(v.timeIntervalSinceReferenceDate, codingPath: codingPath)
        case .custom(let encode, _):
            return try encode(v)
        }
    }

    static func uuid(_ v: UUID, options: EncodingOptions) -> Value {
        switch options.uuidStrategy {
        case .deferredToStore: .uuid(v)
        case .lowercaseText: .text(UUIDText.lowercased(v))
        case .uppercaseText: .text(v.uuidString)
        case .blob: withUnsafeBytes(of: v.uuid) { .blob(Data($0)) }
        }
    }

    static func data(_ v: Data, options: EncodingOptions) -> Value {
        switch options.dataStrategy {
        case .blob: .blob(v)
        case .base64Text: .text(v.base64EncodedString())
        }
    }
}

/// An `Encoder` that finds out whether a value encodes as one single value
/// (stored as is) or as a container (stored as JSON).
private final class SingleValueProbe: Encoder {
    final class Storage {
        enum Result { case nothing, value(Value), needsJSON }
        var result: Result = .nothing
    }

    let options: EncodingOptions
    let column: String?
    let codingPath: [any CodingKey]
    let storage = Storage()
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    init(options: EncodingOptions, column: String?, codingPath: [any CodingKey]) {
        self.options = options
        self.column = column
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        storage.result = .needsJSON
        return KeyedEncodingContainer(DiscardingKeyedContainer<Key>(codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.result = .needsJSON
        return DiscardingUnkeyedContainer(codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ProbeSingleValueContainer(probe: self)
    }
}

private struct ProbeSingleValueContainer: SingleValueEncodingContainer {
    let probe: SingleValueProbe
    var codingPath: [any CodingKey] { probe.codingPath }

    mutating func encodeNil() throws { probe.storage.result = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if case .needsJSON = probe.storage.result { return }
        probe.storage.result = .value(try ValueEncoder.encode(
            value, options: probe.options, column: probe.column, codingPath: probe.codingPath))
    }
}

/// Accepts anything and keeps nothing: the probe only needs to know a container was asked for.
private struct DiscardingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey]
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>(codingPath: codingPath))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        DiscardingUnkeyedContainer(codingPath: codingPath)
    }
    mutating func superEncoder() -> any Encoder { DiscardingEncoder(codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder(codingPath: codingPath) }
}

private struct DiscardingUnkeyedContainer: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey]
    var count = 0
    mutating func encodeNil() throws { count += 1 }
    mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>(codingPath: codingPath))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingUnkeyedContainer(codingPath: codingPath) }
    mutating func superEncoder() -> any Encoder { DiscardingEncoder(codingPath: codingPath) }
}

private struct DiscardingEncoder: Encoder {
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(DiscardingKeyedContainer<Key>(codingPath: codingPath))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingUnkeyedContainer(codingPath: codingPath) }
    func singleValueContainer() -> any SingleValueEncodingContainer { DiscardingSingleValue(codingPath: codingPath) }
}

private struct DiscardingSingleValue: SingleValueEncodingContainer {
    var codingPath: [any CodingKey]
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
}

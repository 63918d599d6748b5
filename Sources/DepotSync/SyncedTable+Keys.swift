@_spi(Sync) import Depot
import Foundation

/// The kind of one key column, as the record type declares it: what a key's
/// text must look like for the server to take it.
enum SyncKeyKind: Sendable, Hashable {
    /// A `UUID` property: the text parses as a UUID.
    case uuid
    /// An integer property: the text is the integer's decimal form.
    case integer
    /// A `String` property: any text.
    case text

    /// Whether `text` is a key part of this kind, in its form.
    func admits(_ text: String) -> Bool {
        switch self {
        case .uuid: UUID(uuidString: text) != nil
        case .integer: Int64(text).map { String($0) == text } ?? false
        case .text: true
        }
    }
}

extension SyncedTable {
    /// Refuses a change whose key no replica would send: a key that is not of
    /// the table's key type and form (a UUID key that is not a UUID), or key
    /// values that name another key; and, with `isNew` (a row the server has
    /// never seen), a row that exists without the values of its key (a change
    /// of some columns of a known row may leave them out).
    func checkKey(_ change: SyncChange, isNew: Bool = false, latestAccepted: HybridTimestamp) throws {
        func refuse(_ what: String) -> SyncPushRefused {
            SyncPushRefused(.malformedKey, latestAccepted: latestAccepted, message: "a change of \(name) \(what)")
        }
        guard let parts = SyncKey.strictParts(of: change.key, count: keyColumns.count) else {
            throw refuse("names a row by a key of another form than its table's")
        }
        if let keyKinds {
            for (kind, part) in zip(keyKinds, parts) where !kind.admits(part) {
                throw refuse("names a row by a key that is not of its table's key type")
            }
        }
        let values = keyColumns.map { change.row.registers[$0]?.value }
        if (isNew && change.row.exists) || values.contains(where: { $0 != nil && $0 != .null }) {
            let present = values.compactMap { $0 }.filter { $0 != .null }
            guard present.count == keyColumns.count else {
                throw refuse("brings a row without the values of its key")
            }
            guard ExactText(SyncKey.text(present)) == ExactText(change.key) else {
                throw refuse("names a row by a key its values do not have")
            }
        }
    }

    /// The kinds of a record type's key columns, read from its `Decodable`
    /// conformance; nil when it cannot tell (a property before the key that
    /// no placeholder decodes, a custom decoding): then only the key's values
    /// are checked.
    static func keyKinds<T: Decodable>(of type: T.Type, keys: [String]) -> [SyncKeyKind]? {
        var known: [String: SyncKeyKind] = [:]
        for key in keys {
            do {
                _ = try T(from: KeyKindProbe(target: key, known: known))
                return nil
            } catch let found as KeyKindProbe.Found {
                guard let kind = found.kind else { return nil }
                known[key] = kind
            } catch {
                return nil
            }
        }
        let kinds = keys.compactMap { known[$0] }
        return kinds.count == keys.count ? kinds : nil
    }
}

extension SyncKey {
    /// The parts of a key's text, or nil when it does not have `count` of them.
    static func strictParts(of key: String, count: Int) -> [String]? {
        guard count > 1 else { return [key] }
        var parts: [String] = [], current = String.UnicodeScalarView(), escaped = false
        for scalar in key.unicodeScalars {
            if escaped {
                guard scalar == "\\" || scalar == "|" else { return nil }
                current.append(scalar)
                escaped = false
            } else if scalar == "\\" { escaped = true }
            else if scalar == "|" { parts.append(String(current)); current = String.UnicodeScalarView() }
            else { current.append(scalar) }
        }
        guard !escaped else { return nil }
        parts.append(String(current))
        return parts.count == count ? parts : nil
    }
}

/// A decoder that finds which Swift type a record's `Decodable` conformance
/// reads for one key: it answers every other key with a placeholder and stops
/// at the one it looks for.
private struct KeyKindProbe: Decoder {
    struct Found: Error { var kind: SyncKeyKind? }

    let target: String
    let known: [String: SyncKeyKind]
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(target: target, known: known))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Placeholder.Unkeyed() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Placeholder.Single() }

    static func kind(of type: Any.Type) -> SyncKeyKind? {
        if type == UUID.self { return .uuid }
        if type == String.self { return .text }
        if [Int.self, Int64.self, Int32.self, Int16.self, Int8.self, UInt32.self, UInt16.self, UInt8.self].contains(where: { $0 == type }) { return .integer }
        return nil
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let target: String
        let known: [String: SyncKeyKind]
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool {
            if key.stringValue == target { throw Found(kind: nil) }
            return false
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if key.stringValue == target { throw Found(kind: KeyKindProbe.kind(of: T.self)) }
            return try Placeholder.value(T.self)
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try Placeholder().container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Placeholder.Unkeyed() }
        func superDecoder() throws -> any Decoder { Placeholder() }
        func superDecoder(forKey key: Key) throws -> any Decoder { Placeholder() }
    }
}

/// A decoder that answers everything with zero, false, an empty text or an empty collection.
private struct Placeholder: Decoder {
    struct Unreadable: Error {}

    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { KeyedDecodingContainer(Keyed<Key>()) }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single() }

    static func value<T: Decodable>(_ type: T.Type) throws -> T {
        switch T.self {
        case is String.Type: return try cast("")
        case is Bool.Type: return try cast(false)
        case is Double.Type: return try cast(0.0)
        case is Float.Type: return try cast(Float(0))
        case is Int.Type: return try cast(0)
        case is Int64.Type: return try cast(Int64(0))
        case is Int32.Type: return try cast(Int32(0))
        case is Int16.Type: return try cast(Int16(0))
        case is Int8.Type: return try cast(Int8(0))
        case is UInt.Type: return try cast(UInt(0))
        case is UInt64.Type: return try cast(UInt64(0))
        case is UInt32.Type: return try cast(UInt32(0))
        case is UInt16.Type: return try cast(UInt16(0))
        case is UInt8.Type: return try cast(UInt8(0))
        case is UUID.Type: return try cast(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case is Date.Type: return try cast(Date(timeIntervalSince1970: 0))
        case is Data.Type: return try cast(Data())
        case is Decimal.Type: return try cast(Decimal(0))
        default: return try T(from: Placeholder())
        }
    }

    private static func cast<T, V>(_ value: V) throws -> T {
        guard let value = value as? T else { throw Unreadable() }
        return value
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try Placeholder.value(T.self) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(Keyed<NestedKey>())
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Unkeyed() }
        func superDecoder() throws -> any Decoder { Placeholder() }
        func superDecoder(forKey key: Key) throws -> any Decoder { Placeholder() }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] = []
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw Unreadable() }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> { throw Unreadable() }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Unreadable() }
        mutating func superDecoder() throws -> any Decoder { throw Unreadable() }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] = []
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try Placeholder.value(T.self) }
    }
}

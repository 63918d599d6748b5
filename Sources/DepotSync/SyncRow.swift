import Depot
import Foundation

/// Who wrote a value and when: a ``HybridTimestamp`` and the writing node's
/// id. Ordered by the timestamp, then by the node's bytes, so two stamps are
/// never "equal but different": every replica picks the same winner.
public struct SyncStamp: Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// When.
    public var time: HybridTimestamp
    /// Which node (a device, or the server).
    public var node: UUID

    /// A stamp from its parts.
    public init(time: HybridTimestamp, node: UUID) {
        self.time = time
        self.node = node
    }

    public static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        if lhs.time != rhs.time { return lhs.time < rhs.time }
        return withUnsafeBytes(of: lhs.node.uuid) { left in
            withUnsafeBytes(of: rhs.node.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }

    /// `time@node`.
    public var description: String { "\(time)@\(node.uuidString.prefix(8).lowercased())" }
}

/// One column of a synced row: its value and the stamp of the write that set it.
public struct SyncRegister: Hashable, Sendable, Codable {
    /// The value, as Depot's mapping encodes the record's property.
    public var value: Value
    /// Who set it, when.
    public var stamp: SyncStamp

    /// A register from its parts.
    public init(value: Value, stamp: SyncStamp) {
        self.value = value
        self.stamp = stamp
    }

    /// The register of the two that wins: the later stamp; for equal stamps
    /// (one write seen twice, or a cloned node) the larger value in
    /// ``SyncValueOrder``, so the choice never depends on which side merges.
    public static func winner(_ a: SyncRegister, _ b: SyncRegister) -> SyncRegister {
        if a.stamp != b.stamp { return a.stamp < b.stamp ? b : a }
        return SyncValueOrder.precedes(a.value, b.value) ? b : a
    }
}

/// The state of one synced row: whether it exists, and one register per column.
///
/// Existence is a *causal length* (as cr-sqlite's): odd while the row exists,
/// even once deleted; an insert or a restore makes it the next odd number, a
/// delete the next even one, and merging takes the larger. So a delete wins
/// over an edit made concurrently with it, and only an explicit restore, which
/// every replica sees as a larger length, brings a row back.
///
/// ``merge(_:)`` takes the later life, and within one life, per column, the
/// winning register: it is commutative, associative and idempotent, so replicas that
/// have seen the same writes hold the same state, whatever the order, the
/// duplicates and the replays they saw them in.
public struct SyncRow: Hashable, Sendable, Codable {
    /// Odd while the row exists, even once deleted; 0 for a row never written.
    public var causalLength: Int64
    /// The registers, by column name.
    public var registers: [String: SyncRegister]

    /// A row state from its parts.
    public init(causalLength: Int64 = 0, registers: [String: SyncRegister] = [:]) {
        self.causalLength = causalLength
        self.registers = registers
    }

    /// Whether the row exists.
    public var exists: Bool { causalLength & 1 == 1 }

    /// The merge of two states of one row: the state of the later life (the
    /// larger causal length) whole, registers included; for one life, per
    /// column the winning register. A life's registers end with it: an edit
    /// made concurrently with a delete is dropped with the deleted life, and a
    /// restore writes every column afresh.
    public func merged(with other: SyncRow) -> SyncRow {
        if causalLength != other.causalLength { return causalLength > other.causalLength ? self : other }
        var result = self
        for (column, theirs) in other.registers {
            result.registers[column] = registers[column].map { SyncRegister.winner($0, theirs) } ?? theirs
        }
        return result
    }

    /// Merges another state of the row into this one.
    public mutating func merge(_ other: SyncRow) {
        self = merged(with: other)
    }

    /// A local write of these columns: each register set with `stamp`; a row
    /// that did not exist (never written, or deleted) now exists, as a new
    /// insert or an explicit restore.
    public mutating func write(_ values: [String: Value], stamp: SyncStamp) {
        if !exists {
            // A new life: the registers of the deleted one end with it.
            causalLength += 1
            registers = [:]
        }
        for (column, value) in values { registers[column] = SyncRegister(value: value, stamp: stamp) }
    }

    /// A local delete: the row no longer exists (a delete of a deleted row changes nothing).
    public mutating func delete() {
        if exists { causalLength += 1 }
    }
}

/// A total order on `Value`s, the same on every node, for the one case where
/// stamps cannot decide: the kinds of value first (in the order of `Value`'s
/// cases), then the values.
public enum SyncValueOrder {
    /// Whether `a` comes before `b`.
    public static func precedes(_ a: Value, _ b: Value) -> Bool {
        let (ka, kb) = (kind(a), kind(b))
        if ka != kb { return ka < kb }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return !x && y
        case (.integer(let x), .integer(let y)): return x < y
        case (.double(let x), .double(let y)): return x.bitPattern != y.bitPattern && x.isTotallyOrdered(belowOrEqualTo: y)
        case (.text(let x), .text(let y)), (.json(let x), .json(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
        case (.blob(let x), .blob(let y)): return x.lexicographicallyPrecedes(y)
        case (.date(let x), .date(let y)): return x < y
        case (.uuid(let x), .uuid(let y)): return x.uuidString < y.uuidString
        case (.decimal(let x), .decimal(let y)): return x < y
        default: return false
        }
    }

    private static func kind(_ value: Value) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .integer: 2
        case .double: 3
        case .text: 4
        case .blob: 5
        case .date: 6
        case .uuid: 7
        case .json: 8
        case .decimal: 9
        }
    }
}

extension SyncRegister {
    enum CodingKeys: String, CodingKey { case kind, value, time, node }

    /// The wire form: the value's kind and an exact text or number for it
    /// (doubles and dates by their bit patterns, so nothing is rounded).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stamp.time.rawValue, forKey: .time)
        try container.encode(stamp.node, forKey: .node)
        let wire = WireValue(value)
        try container.encode(wire.kind, forKey: .kind)
        if let text = wire.text { try container.encode(text, forKey: .value) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stamp = SyncStamp(time: HybridTimestamp(rawValue: try container.decode(Int64.self, forKey: .time)),
                          node: try container.decode(UUID.self, forKey: .node))
        let kind = try container.decode(String.self, forKey: .kind)
        let text = try container.decodeIfPresent(String.self, forKey: .value)
        do {
            value = try WireValue.value(kind: kind, text: text)
        } catch let failure as WireValue.Failure {
            throw DecodingError.dataCorruptedError(forKey: .value, in: container, debugDescription: failure.message)
        }
    }
}

extension SyncRow {
    enum CodingKeys: String, CodingKey { case cl, writes }
    enum WriteKeys: String, CodingKey { case time, node, values }

    /// The wire form, compact: the causal length, then the registers grouped
    /// by the write that stamped them (an insert is one write of every
    /// column), each value as `[kind, exact text]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(causalLength, forKey: .cl)
        var writes = container.nestedUnkeyedContainer(forKey: .writes)
        let byStamp = Dictionary(grouping: registers, by: \.value.stamp)
        for stamp in byStamp.keys.sorted() {
            var write = writes.nestedContainer(keyedBy: WriteKeys.self)
            try write.encode(stamp.time.rawValue, forKey: .time)
            try write.encode(stamp.node, forKey: .node)
            var values: [String: [String]] = [:]
            for (column, register) in byStamp[stamp] ?? [] {
                let wire = WireValue(register.value)
                values[column] = wire.text.map { [wire.kind, $0] } ?? [wire.kind]
            }
            try write.encode(values, forKey: .values)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        causalLength = try container.decode(Int64.self, forKey: .cl)
        registers = [:]
        var writes = try container.nestedUnkeyedContainer(forKey: .writes)
        while !writes.isAtEnd {
            let write = try writes.nestedContainer(keyedBy: WriteKeys.self)
            let stamp = SyncStamp(time: HybridTimestamp(rawValue: try write.decode(Int64.self, forKey: .time)),
                                  node: try write.decode(UUID.self, forKey: .node))
            for (column, parts) in try write.decode([String: [String]].self, forKey: .values) {
                guard let kind = parts.first, parts.count <= 2 else {
                    throw DecodingError.dataCorruptedError(forKey: .values, in: write, debugDescription: "a value is [kind] or [kind, text]")
                }
                do {
                    registers[column] = SyncRegister(value: try WireValue.value(kind: kind, text: parts.count == 2 ? parts[1] : nil), stamp: stamp)
                } catch let failure as WireValue.Failure {
                    throw DecodingError.dataCorruptedError(forKey: .values, in: write, debugDescription: failure.message)
                }
            }
        }
    }
}

/// A value on the wire: its kind and an exact text (none for NULL).
struct WireValue {
    var kind: String
    var text: String?

    struct Failure: Error { var message: String }

    init(_ value: Value) {
        switch value {
        case .null: (kind, text) = ("null", nil)
        case .bool(let x): (kind, text) = ("bool", x ? "1" : "0")
        case .integer(let x): (kind, text) = ("integer", String(x))
        case .double(let x): (kind, text) = ("double", String(x.bitPattern, radix: 16))
        case .text(let x): (kind, text) = ("text", x)
        case .blob(let x): (kind, text) = ("blob", x.base64EncodedString())
        case .date(let x): (kind, text) = ("date", String(x.timeIntervalSince1970.bitPattern, radix: 16))
        case .uuid(let x): (kind, text) = ("uuid", x.uuidString.lowercased())
        case .json(let x): (kind, text) = ("json", x)
        case .decimal(let x): (kind, text) = ("decimal", x.description)
        }
    }

    static func value(kind: String, text: String?) throws -> Value {
        func required() throws -> String {
            guard let text else { throw Failure(message: "a \(kind) value without its text") }
            return text
        }
        func bits() throws -> UInt64 {
            let text = try required()
            guard let bits = UInt64(text, radix: 16) else { throw Failure(message: "not a bit pattern: \(text)") }
            return bits
        }
        switch kind {
        case "null": return .null
        case "bool":
            switch try required() {
            case "1": return .bool(true)
            case "0": return .bool(false)
            case let other: throw Failure(message: "not a boolean: \(other)")
            }
        case "integer":
            let text = try required()
            guard let number = Int64(text) else { throw Failure(message: "not a 64-bit integer: \(text)") }
            return .integer(number)
        case "double": return .double(Double(bitPattern: try bits()))
        case "text": return .text(try required())
        case "blob":
            guard let data = Data(base64Encoded: try required()) else { throw Failure(message: "not base64") }
            return .blob(data)
        case "date": return .date(Date(timeIntervalSince1970: Double(bitPattern: try bits())))
        case "uuid":
            let text = try required()
            guard let uuid = UUID(uuidString: text) else { throw Failure(message: "not a UUID: \(text)") }
            return .uuid(uuid)
        case "json": return .json(try required())
        case "decimal":
            let text = try required()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw Failure(message: "not a decimal: \(text)") }
            return .decimal(decimal)
        default: throw Failure(message: "an unknown kind of value: \(kind)")
        }
    }
}

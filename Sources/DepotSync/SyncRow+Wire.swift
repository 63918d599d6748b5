import Depot
import Foundation

// The wire form of rows and registers: exact for every kind of value.

extension SyncRegister {
    enum CodingKeys: String, CodingKey { case kind, value, time, node }

    /// The wire form: the value's kind and an exact text or number for it
    /// (doubles and dates by their bit patterns, so nothing is rounded).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(stamp.time.rawValue, forKey: .time)
        try container.encode(UUIDText.uppercased(stamp.node), forKey: .node)
        let wire = WireValue(value)
        try container.encode(wire.kind, forKey: .kind)
        if let text = wire.text { try container.encode(text, forKey: .value) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stamp = SyncStamp(time: HybridTimestamp(rawValue: try container.decode(Int64.self, forKey: .time)),
                          node: try wireNode(container, .node))
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
            try write.encode(UUIDText.uppercased(stamp.node), forKey: .node)
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
                                  node: try wireNode(write, .node))
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

/// A stamp's node on the wire: a UUID's text, as Foundation's `Codable`
/// writes it (uppercase; the push log's hashes were taken of that form),
/// read as the core reads a stored UUID (``UUIDText/parse(_:)``).
func wireNode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> UUID {
    let text = try container.decode(String.self, forKey: key)
    guard let node = UUIDText.parse(text) else {
        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "Attempted to decode UUID from invalid UUID string.")
    }
    return node
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
        case .uuid(let x): (kind, text) = ("uuid", UUIDText.lowercased(x))
        case .json(let x): (kind, text) = ("json", x)
        case .decimal(let x, let scale): (kind, text) = ("decimal", Value.decimalText(x, scale: scale))
        }
    }

    static func value(kind: String, text: String?) throws -> Value {
        func required() throws -> String {
            guard let text else { throw Failure(message: "a \(kind) value without its text") }
            return text
        }
        func bits() throws -> UInt64 {
            let text = try required()
            guard let bits = UInt64(text, radix: 16) else { throw Failure(message: "not a bit pattern") }
            return bits
        }
        switch kind {
        case "null": return .null
        case "bool":
            switch try required() {
            case "1": return .bool(true)
            case "0": return .bool(false)
            default: throw Failure(message: "not a boolean (1 or 0)")
            }
        case "integer":
            let text = try required()
            guard let number = Int64(text) else { throw Failure(message: "not a 64-bit integer") }
            return .integer(number)
        case "double": return .double(Double(bitPattern: try bits()))
        case "text": return .text(try required())
        case "blob":
            guard let data = Data(base64Encoded: try required()) else { throw Failure(message: "not base64") }
            return .blob(data)
        case "date": return .date(Date(timeIntervalSince1970: Double(bitPattern: try bits())))
        case "uuid":
            let text = try required()
            guard let uuid = UUIDText.parse(text) else { throw Failure(message: "not a UUID") }
            return .uuid(uuid)
        case "json": return .json(try required())
        case "decimal":
            let text = try required()
            guard let decimal = Value.decimal(text: text) else { throw Failure(message: "not a decimal a Decimal holds") }
            return decimal
        default: throw Failure(message: "an unknown kind of value")
        }
    }
}

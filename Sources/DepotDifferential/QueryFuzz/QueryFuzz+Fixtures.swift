import Depot

/// The records the fuzzers write: their own, so this module needs nothing
/// internal of the conformance suite.
extension QueryFuzz {
    /// Any JSON value, to write documents with every kind of value in them.
    indirect enum Doc: Codable, Equatable, Sendable {
        case null, bool(Bool), int(Int), double(Double), string(String), array([Doc]), object([String: Doc])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Int.self) { self = .int(value) }
            else if let value = try? container.decode(Double.self) { self = .double(value) }
            else if let value = try? container.decode(String.self) { self = .string(value) }
            else if let value = try? container.decode([Doc].self) { self = .array(value) }
            else { self = .object(try container.decode([String: Doc].self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
    }

    /// A record with two indexed texts; matches in the title weigh three times those in the body.
    @Columns
    struct Article: Record, Equatable {
        static var tableName: String { "articles" }
        var id: Int64?
        var title: String
        var body: String

        static let searchIndex = SearchIndex<Article>(tableName: "articleSearch", fields: [SearchIndex.Field("title", weight: 3), "body"])
    }
}

import Depot
import Foundation

/// Any JSON value, to write documents with every kind of value in them.
enum JSONDocument: Codable, Equatable, Sendable {
    case null, bool(Bool), int(Int), double(Double), string(String), array([JSONDocument]), object([String: JSONDocument])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int.self) { self = .int(value) }
        else if let value = try? container.decode(Double.self) { self = .double(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONDocument].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONDocument].self)) }
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

/// A record with a JSON column.
@Columns
struct Gadget: Record, Equatable {
    static var tableName: String { "gadgets" }
    var id: Int64
    var body: [String: JSONDocument]
}

/// Scalars read from JSON columns with one meaning on every engine.
extension QueryChecks {
    static let json: [ConformanceCheck] = [
        ConformanceCheck("query: a JSON path reads a scalar of the asked kind, NULL when missing, null or of another kind", jsonScalars),
    ]

    static let gadgets: [Gadget] = [
        Gadget(id: 1, body: ["a": .int(3), "b": .string("3"), "c": .double(3.5), "d": .null, "e": .bool(true),
                             "f": .array([.int(10), .string("x"), .object(["g": .int(7)])]), "h": .object(["i": .string("é💡")]),
                             "j": .double(3), "k": .int(Int.max), "l": .double(1e300), "m": .double(-0.0), "n": .int(Int.min)]),
        Gadget(id: 2, body: [:]),
        Gadget(id: 3, body: ["a": .string("text"), "f": .array([]), "e": .bool(false)]),
    ]

    static func jsonScalars(_ context: ConformanceContext) async throws {
        let store = try await context.makeStore(Store.Configuration())
        try await store.write { db in
            try DepotConformance.createTable(db, "gadgets", [("id", .integer, "PRIMARY KEY"), ("body", .json, "NOT NULL")])
            try db.insert(contentsOf: gadgets)
        }
        func ints(_ path: JSONPathComponent...) async throws -> [Int?] {
            let path = path
            return try await store.read { db in
                try db.fetchAll(Gadget.all.select { $0.body.json(path, as: Int.self) })
            }
        }
        try expectEqual(try await ints("a"), [3, nil, nil], "a number; a string is no Int")
        try expectEqual(try await ints("b"), [nil, nil, nil], "\"3\" is no Int")
        try expectEqual(try await ints("c"), [nil, nil, nil], "3.5 is no Int")
        try expectEqual(try await ints("d"), [nil, nil, nil], "null")
        try expectEqual(try await ints("e"), [nil, nil, nil], "true is no Int")
        try expectEqual(try await ints("f", 0), [10, nil, nil], "an index; past the end of []")
        try expectEqual(try await ints("f", 2, "g"), [7, nil, nil], "an object in an array")
        try expectEqual(try await ints("f", 5), [nil, nil, nil], "past the end")
        try expectEqual(try await ints("j"), [3, nil, nil], "3.0 is a whole number")
        try expectEqual(try await ints("k"), [Int.max, nil, nil], "Int.max")
        try expectEqual(try await ints("n"), [Int.min, nil, nil], "Int.min")
        try expectEqual(try await ints("l"), [nil, nil, nil], "1e300 is past 64 bits")
        try expectEqual(try await ints("m"), [0, nil, nil], "-0.0 is 0")
        let others = try await store.read { db in
            (try db.fetchAll(Gadget.all.select { $0.body.json("b", as: String.self) }),
             try db.fetchAll(Gadget.all.select { $0.body.json("a", as: String.self) }),
             try db.fetchAll(Gadget.all.select { $0.body.json("h", "i", as: String.self) }),
             try db.fetchAll(Gadget.all.select { $0.body.json("c", as: Double.self) }),
             try db.fetchAll(Gadget.all.select { $0.body.json("l", as: Double.self) }),
             try db.fetchAll(Gadget.all.select { $0.body.json("e", as: Bool.self) }),
             try db.fetchAll(Gadget.all.select { $0.body.json("h", as: String.self) }))
        }
        try expectEqual(others.0, ["3", nil, nil], "a string")
        try expectEqual(others.1, [nil, nil, "text"], "a number is no String")
        try expectEqual(others.2, ["é💡", nil, nil], "nested, with an accent and an emoji")
        try expectEqual(others.3, [3.5, nil, nil], "a Double")
        try expectEqual(others.4, [1e300, nil, nil], "the largest kind of Double")
        try expectEqual(others.5, [true, nil, false], "Booleans")
        try expectEqual(others.6, [nil, nil, nil], "an object is no String")
        let filtered = try await store.read { db in
            (try db.fetchAll(Gadget.where { $0.body.json("a", as: Int.self) > 2 }).map(\.id),
             try db.fetchAll(Gadget.where { $0.body.json("e", as: Bool.self) }).map(\.id),
             try db.fetchAll(Gadget.where { $0.body.json("a", as: Int.self).isNull() }).map(\.id),
             try db.fetchAll(Gadget.order { $0.body.json("a", as: String.self).descending() }).map(\.id))
        }
        try expectEqual(filtered.0, [1], "filtered on a JSON integer")
        try expectEqual(filtered.1, [1], "a JSON Boolean as the filter")
        try expectEqual(filtered.2, [2, 3], "NULL where missing or of another kind")
        try expectEqual(filtered.3, [3, 1, 2], "ordered by a JSON string, NULLs last")
        // Two paths of one length, a key where the other has an index: each query
        // renders its own SQL (an engine that reads a scalar as an array of one
        // guards each index), even when the first was cached on the connection.
        let mixed = try await store.read { db in
            (try db.fetchAll(Gadget.where { $0.body.json("h", "i", as: String.self).eq("é💡") }).map(\.id),
             try db.fetchAll(Gadget.where { $0.body.json("f", 1, as: String.self).eq("x") }).map(\.id),
             try db.fetchAll(Gadget.where { $0.body.json("a", 0, as: Int.self).eq(3) }).map(\.id),
             try db.fetchAll(Gadget.where { $0.body.json("h", "i", as: String.self).eq("é💡") }).map(\.id))
        }
        try expectEqual(mixed.0, [1], "a filter on a key after a key")
        try expectEqual(mixed.1, [1], "a filter on an index after a key, after a path of two keys")
        try expectEqual(mixed.2, [], "a filter on an index into a number (no array)")
        try expectEqual(mixed.3, [1], "a filter on a key after a key, after paths with an index")
        try await expectError(.misuse, "a key with a quote") {
            try await store.read { db in try db.fetchAll(Gadget.all.select { $0.body.json("a\"b", as: Int.self) }) }
        }
    }
}

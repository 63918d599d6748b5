import Depot
import Foundation
import DepotTesting

/// Random JSON documents read at random paths as random kinds, selected and
/// filtered on both engines and in the model: a value of the asked kind, or NULL.
extension QueryFuzz {
    @Columns
    struct FuzzDoc: Record, Equatable {
        static let tableName = "fuzzDocs"
        var id: Int64
        var body: [String: QueryFuzz.Doc]
    }

    static func member(_ doc: Doc?, _ component: JSONPathComponent) -> Doc? {
        switch (doc, component) {
        case (.object(let members)?, .key(let key)): members[key]
        case (.array(let elements)?, .index(let index)): index < elements.count ? elements[index] : nil
        default: nil
        }
    }

    static func scalar(_ g: inout Generator) -> Doc {
        switch Int.random(in: 0..<6, using: &g) {
        case 0: .null
        case 1: .bool(g.chance(2))
        case 2: .int(g.pick([0, -1, 3, 7, Int.max, Int.min, 9_007_199_254_740_993]))
        case 3: .double(g.pick([0.1, 1.5, -2.25, 1e300, 3.0, -0.0, 1e16, 123_456_789.125, 2.5e-8, 9.223372036854775807e18]))
        default: .string(g.pick(texts.compactMap { $0 } + ["3", "true", "null"]))
        }
    }

    static func document(_ g: inout Generator) -> [String: Doc] {
        var body: [String: QueryFuzz.Doc] = [:]
        if !g.chance(4) { body["x"] = g.chance(4) ? .object(["z": scalar(&g)]) : scalar(&g) }
        if !g.chance(4) { body["y"] = scalar(&g) }
        if !g.chance(3) { body["arr"] = .array((0..<Int.random(in: 0...2, using: &g)).map { _ in scalar(&g) }) }
        return body
    }

    /// What the builder promises a path reads as: a value of the kind, or nil.
    static func read(_ doc: Doc?, _ kind: JSONScalarKind) -> String? {
        switch (doc, kind) {
        case (.string(let s)?, .text): return describe(s)
        case (.int(let i)?, .integer): return "\(i)"
        case (.double(let d)?, .integer):
            guard d == d.rounded(), d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { return nil }
            return "\(Int(d))"
        case (.int(let i)?, .double): return describe(Double(i))
        case (.double(let d)?, .double): return describe(d)
        case (.bool(let b)?, .bool): return "\(b)"
        default: return nil
        }
    }

    static func randomJSONPaths(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = (environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000) / 4
        print("QueryFuzz (JSON): seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let docs = (1...40).map { FuzzDoc(id: Int64($0), body: Self.document(&g)) }
        let engines = try await run.makeEngines()
        defer { Task { await engines.close() } }
        for (_, store) in engines.both {
            try await store.write { db in
                try db.execute("CREATE TABLE \"fuzzDocs\" (\"id\" \(type: .integer) PRIMARY KEY, \"body\" \(type: .json) NOT NULL)")
                try db.insert(contentsOf: docs)
            }
        }
        let paths: [[JSONPathComponent]] = [["x"], ["y"], ["x", "z"], ["arr", 0], ["arr", 1], ["arr", 5], ["missing"], ["x", 0]]
        let kinds: [JSONScalarKind] = [.text, .integer, .double, .bool]
        var disagreements = 0
        for index in 0..<count {
            let path = g.pick(paths), kind = g.pick(kinds)
            let filterPath = g.pick(paths), threshold = g.pick([-1, 0, 3, 8])
            let filters = g.chance(2)
            func value(_ doc: FuzzDoc, _ path: [JSONPathComponent]) -> Doc? {
                path.reduce(Optional(Doc.object(doc.body))) { Self.member($0, $1) }
            }
            let kept = docs.filter { doc in
                guard filters else { return true }
                guard let number = Self.read(value(doc, filterPath), .integer).flatMap({ Int($0) }) else { return false }
                return number > threshold
            }
            let expected = kept.map { "\($0.id) \(Self.read(value($0, path), kind) ?? "NULL")" }
            let query = filters ? FuzzDoc.where { $0.body.json(filterPath, as: Int.self) > threshold } : FuzzDoc.all
            for (name, store) in engines.both {
                let got: [String] = try await store.read { db in
                    switch kind {
                    case .text: try db.fetchAll(query.select { ($0.id, $0.body.json(path, as: String.self)) }).map { "\($0.0) \($0.1.map(Self.describe) ?? "NULL")" }
                    case .integer: try db.fetchAll(query.select { ($0.id, $0.body.json(path, as: Int.self)) }).map { "\($0.0) \($0.1.map { "\($0)" } ?? "NULL")" }
                    case .double: try db.fetchAll(query.select { ($0.id, $0.body.json(path, as: Double.self)) }).map { "\($0.0) \($0.1.map(Self.describe) ?? "NULL")" }
                    case .bool: try db.fetchAll(query.select { ($0.id, $0.body.json(path, as: Bool.self)) }).map { "\($0.0) \($0.1.map { "\($0)" } ?? "NULL")" }
                    }
                }
                if got != expected {
                    disagreements += 1
                    run.record("seed \(seed), query \(index): SELECT id, json(\(path), \(kind))\(filters ? " WHERE json(\(filterPath), integer) > \(threshold)" : ""): \(name) gave \(got), the model \(expected)")
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

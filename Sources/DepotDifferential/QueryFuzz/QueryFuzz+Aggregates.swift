import Depot
import Foundation
import DepotTesting

/// Random grouped and ungrouped aggregates over random filters, on both engines
/// and in the model: the same groups, in the same order, with the same values
/// (or the same kind of error).
extension QueryFuzz {
    /// A group key in the model: NULL, an integer (also Booleans and instants), or text as bytes.
    enum ModelKey: Hashable {
        case null, int(Int64), bytes([UInt8])

        /// The builder's tie-break order of group keys: ascending, NULLs last, text by code point.
        static func precedes(_ x: ModelKey, _ y: ModelKey) -> Bool {
            switch (x, y) {
            case (.null, _): false
            case (_, .null): true
            case (.int(let a), .int(let b)): a < b
            case (.bytes(let a), .bytes(let b)): a.lexicographicallyPrecedes(b)
            default: false
            }
        }
    }

    /// One output value as text, so both engines and the model compare.
    static func describe(_ value: Any) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional { return mirror.children.first.map { describe($0.value) } ?? "NULL" }
        switch value {
        case let double as Double: return double == 0 ? "0.0" : "\(double)"
        case let text as String: return text.debugDescription
        case let date as Date: return "@\(micros(date))"
        default: return "\(value)"
        }
    }

    struct ModelOverflow: Error {}

    /// An aggregate: the builder's expression, and its value over a group in the model.
    struct AggregateTerm<V: QueryValue> {
        let build: (FuzzRow.Columns) -> QueryExpression<V>
        let model: ([FuzzRow]) throws -> String
        let text: String
    }

    /// A group key: the builder's expression and the model's key of a row.
    struct GroupKey<K: QueryComparable> {
        let build: (FuzzRow.Columns) -> QueryExpression<K>
        let key: (FuzzRow) -> ModelKey
        let text: String
    }

    /// A random aggregate run: how to run it on a database and what the model says.
    /// (Unchecked: one task builds it and awaits each run before the next.)
    struct AggregateCase: @unchecked Sendable {
        let run: (Database) throws -> [String]
        let model: () -> [String]
        let text: String
    }

    static func minMax<T>(_ values: [T], _ less: (T, T) -> Bool, max: Bool) -> T? {
        values.min { max ? less($1, $0) : less($0, $1) }
    }

    /// The exact sum, an error only when it does not fit in 64 bits (whatever the running totals).
    static func exactSum(_ values: [Int]) throws -> Int? {
        guard !values.isEmpty else { return nil }
        let (high, low) = values.reduce((Int64(0), UInt64(0))) { sum, value in
            (sum.0 + Int64(value >> 32), sum.1 + UInt64(UInt32(truncatingIfNeeded: value)))
        }
        let carried = high + Int64(low >> 32)
        guard let top = Int32(exactly: carried) else { throw ModelOverflow() }
        return Int(Int64(top) << 32 | Int64(low & 0xFFFF_FFFF))
    }

    static func aggregateCase(_ g: inout Generator, rows: [FuzzRow]) -> AggregateCase {
        let filter = g.chance(4) ? nil : predicate(&g, depth: 1)
        let counted = predicate(&g, depth: 2)
        let having = g.chance(3)
        let base = filter.map { FuzzRow.where($0.build) } ?? FuzzRow.all
        let kept = rows.filter { row in filter.map { $0.evaluate(row) == true } ?? true }

        func make<V>(_ aggregate: AggregateTerm<V>) -> AggregateCase {
            func grouped<K>(_ key: GroupKey<K>) -> AggregateCase {
                AggregateCase(
                    run: { db in
                        var selection = base.select { (key.build($0), aggregate.build($0)) }.group(by: key.build)
                        if having { selection = selection.having { _ in Aggregates.countAll() > 1 } }
                        return try db.fetchAll(selection).map { describe($0.0) + " | " + describe($0.1) }
                    },
                    model: {
                        var groups: [ModelKey: [FuzzRow]] = [:]
                        var firsts: [ModelKey: FuzzRow] = [:]
                        for row in kept {
                            groups[key.key(row), default: []].append(row)
                            if firsts[key.key(row)] == nil { firsts[key.key(row)] = row }
                        }
                        do {
                            return try groups.keys.sorted(by: ModelKey.precedes).compactMap { modelKey in
                                let members = groups[modelKey] ?? []
                                if having && members.count <= 1 { return nil }
                                // The key as the engine returns it: any member's value (they are equal).
                                let keyText = firsts[modelKey].map { describeKey(key, $0) } ?? "?"
                                return keyText + " | " + (try aggregate.model(members))
                            }
                        } catch {
                            return ["error: encoding"]
                        }
                    },
                    text: "SELECT \(key.text), \(aggregate.text) WHERE \(filter?.text ?? "-") GROUP BY \(key.text)\(having ? " HAVING count(*) > 1" : "")")
            }
            switch Int.random(in: 0..<6, using: &g) {
            case 0:
                return AggregateCase(
                    run: { db in try db.fetchAll(base.select(aggregate.build)).map(describe) },
                    model: { (try? [aggregate.model(kept)]) ?? ["error: encoding"] },
                    text: "SELECT \(aggregate.text) WHERE \(filter?.text ?? "-")")
            case 1: return grouped(GroupKey(build: { $0.a }, key: { $0.a.map { .int(Int64($0)) } ?? .null }, text: "a"))
            case 2: return grouped(GroupKey(build: { $0.f }, key: { $0.f.map { .int($0 ? 1 : 0) } ?? .null }, text: "f"))
            case 3: return grouped(GroupKey(build: { $0.t }, key: { $0.t.map { .bytes(Array($0.utf8)) } ?? .null }, text: "t"))
            case 4: return grouped(GroupKey(build: { $0.t.folded }, key: { $0.t.map { .bytes(Array(folded($0).utf8)) } ?? .null }, text: "folded(t)"))
            default: return grouped(GroupKey(build: { $0.w }, key: { $0.w.map { .int(micros($0)) } ?? .null }, text: "w"))
            }
        }

        switch Int.random(in: 0..<12, using: &g) {
        case 0: return make(AggregateTerm(build: { _ in Aggregates.countAll() }, model: { "\($0.count)" }, text: "count(*)"))
        case 1:
            return make(AggregateTerm(build: { Aggregates.count(where: counted.build($0)) },
                                      model: { rows in "\(rows.filter { counted.evaluate($0) == true }.count)" },
                                      text: "count(*) FILTER (WHERE \(counted.text))"))
        case 2: return make(AggregateTerm(build: { $0.t.count() }, model: { "\($0.filter { $0.t != nil }.count)" }, text: "count(t)"))
        case 3: return make(AggregateTerm(build: { $0.a.sum() }, model: { describe(try exactSum($0.compactMap(\.a)) as Any) }, text: "sum(a)"))
        case 4: return make(AggregateTerm(build: { $0.b.sum() }, model: { describe(try exactSum($0.compactMap(\.b)) as Any) }, text: "sum(b)"))
        case 5:
            return make(AggregateTerm(build: { $0.a.average() }, model: { rows in
                let values = rows.compactMap(\.a)
                return describe(values.isEmpty ? nil : Double(values.reduce(0, +)) / Double(values.count) as Double?)
            }, text: "avg(a)"))
        case 6:
            let max = g.chance(2)
            return make(AggregateTerm(build: { max ? $0.t.max() : $0.t.min() }, model: { describe(minMax($0.compactMap(\.t), bytesLess, max: max) as Any) },
                                      text: max ? "max(t)" : "min(t)"))
        case 7:
            let max = g.chance(2)
            return make(AggregateTerm(build: { max ? $0.d.max() : $0.d.min() }, model: { describe(minMax($0.compactMap(\.d), <, max: max) as Any) },
                                      text: max ? "max(d)" : "min(d)"))
        case 8:
            let max = g.chance(2)
            return make(AggregateTerm(build: { max ? $0.w.max() : $0.w.min() }, model: { rows in
                describe(minMax(rows.compactMap(\.w), { micros($0) < micros($1) }, max: max) as Any)
            }, text: max ? "max(w)" : "min(w)"))
        case 9:
            let max = g.chance(2)
            return make(AggregateTerm(build: { max ? $0.f.max() : $0.f.min() }, model: { rows in
                describe(minMax(rows.compactMap(\.f), { !$0 && $1 }, max: max) as Any)
            }, text: max ? "max(f)" : "min(f)"))
        case 10:
            let max = g.chance(2)
            return make(AggregateTerm(build: { max ? $0.t.folded.max() : $0.t.folded.min() }, model: { rows in
                describe(minMax(rows.compactMap(\.t).map(folded), bytesLess, max: max) as Any)
            }, text: max ? "max(folded(t))" : "min(folded(t))"))
        default:
            return make(AggregateTerm(build: { $0.t.length.max() }, model: { rows in
                describe(rows.compactMap(\.t).map { $0.unicodeScalars.count }.max() as Any)
            }, text: "max(length(t))"))
        }
    }

    static func describeKey<K>(_ key: GroupKey<K>, _ row: FuzzRow) -> String {
        switch key.text {
        case "a": describe(row.a as Any)
        case "f": describe(row.f as Any)
        case "t": describe(row.t as Any)
        case "folded(t)": describe(row.t.map(folded) as Any)
        default: describe(row.w as Any)
        }
    }

    static func randomAggregates(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = (environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000) / 4
        print("QueryFuzz (aggregates): seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let (engines, rows, _) = try await Self.setUp(run, &g)
        defer { Task { await engines.close() } }
        var disagreements = 0
        for index in 0..<count {
            let fuzzCase = Self.aggregateCase(&g, rows: rows)
            let expected = fuzzCase.model()
            for (name, store) in engines.both {
                let got: [String]
                do {
                    got = try await store.read { db in try fuzzCase.run(db) }
                } catch let error as DatabaseError {
                    got = ["error: \(error.kind)"]
                }
                if got != expected {
                    disagreements += 1
                    run.record("seed \(seed), query \(index): \(fuzzCase.text): \(name) gave \(got), the model \(expected)")
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

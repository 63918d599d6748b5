import Depot
import Foundation
import DepotTesting

/// The differential query fuzzer: random builder queries over hostile rows run
/// on two engines (the reference, usually SQLite, and the engine under test)
/// and against a model of their meaning in Swift. All three must give the same
/// rows in the same order, and the same count.
///
/// `DEPOT_FUZZ_SEED` replays a run; `DEPOT_FUZZ_QUERIES` sets how many queries (2,000).
enum QueryFuzz {
    @Columns
    struct FuzzRow: Record, Equatable {
        static let tableName = "fuzz"
        var id: Int64
        var a: Int?
        var b: Int?
        var t: String?
        var u: String?
        var d: Double?
        var f: Bool?
        var w: Date?
    }

    static let texts: [String?] = [nil, "", "a", "A", "ab", "aB", "Ab", "b", "É", "é", "e\u{301}", "ß", "İ", "i", "%", "_", "\\",
                                   "a%", "x_y", "a\\b", "Zz", "zz", "z", "~", "💡", "abc", "ABC", "aBc d", " a"]
    static let needles = ["", "a", "A", "b", "%", "_", "\\", "é", "É", "e\u{301}", "ab", "B", "z", "💡", "c d", " "]
    static let base = Date(timeIntervalSince1970: 1_750_000_000)
    static let instants: [Date?] = [nil, base, base.addingTimeInterval(0.000_001), base.addingTimeInterval(-0.000_001),
                                    base.addingTimeInterval(86_400), Date(timeIntervalSince1970: -62_135_596_800),
                                    Date(timeIntervalSince1970: 253_402_300_799)]
    static let doubles: [Double?] = [nil, 0, -0.0, 1.5, -2.25, 1e300, -1e300, 0.1, 3]

    // MARK: Random generation

    typealias Generator = SeededGenerator

    /// A second table to join: each link names a row, no row (NULL), or a row that does not exist.
    @Columns
    struct FuzzLink: Record, Equatable {
        static let tableName = "fuzzLinks"
        var id: Int64
        var rowID: Int64?
        var n: Int?
        var tag: String?
    }

    static func links(_ g: inout Generator) -> [FuzzLink] {
        (1...50).map { id in
            FuzzLink(id: Int64(id), rowID: g.chance(6) ? nil : g.chance(8) ? 99 : Int64.random(in: 1...60, using: &g),
                     n: g.chance(4) ? nil : Int.random(in: -2...2, using: &g), tag: g.pick(texts))
        }
    }

    static func rows(_ g: inout Generator) -> [FuzzRow] {
        (1...60).map { id in row(Int64(id), &g) }
    }

    static func row(_ id: Int64, _ g: inout Generator) -> FuzzRow {
        FuzzRow(id: id, a: g.chance(4) ? nil : Int.random(in: -3...3, using: &g),
            b: g.chance(4) ? nil : g.pick([-3, 0, 1, 2, Int.min + 1, Int.max]),
            t: g.pick(texts), u: g.pick(texts), d: g.pick(doubles), f: g.chance(3) ? nil : Bool.random(using: &g), w: g.pick(instants))
    }

    /// A predicate: the builder's expression and the model's verdict for a row
    /// (nil is SQL's unknown), with a description for failures.
    struct Predicate {
        let build: (FuzzRow.Columns) -> QueryPredicate
        let evaluate: (FuzzRow) -> Bool?
        let text: String
        /// The truth when no row can change it (an empty `in` list), as the renderer folds it.
        var constant: Bool? = nil
    }

    enum Op: CaseIterable { case eq, neq, lt, le, gt, ge }

    static func compare<T>(_ x: T?, _ op: Op, _ y: T?, less: (T, T) -> Bool, equal: (T, T) -> Bool) -> Bool? {
        guard let x, let y else { return nil }
        switch op {
        case .eq: return equal(x, y)
        case .neq: return !equal(x, y)
        case .lt: return less(x, y)
        case .le: return less(x, y) || equal(x, y)
        case .gt: return less(y, x)
        case .ge: return less(y, x) || equal(x, y)
        }
    }

    static func apply<V: QueryComparable>(_ column: QueryExpression<V>, _ op: Op, _ value: V) -> QueryPredicate {
        switch op {
        case .eq: column.eq(value)
        case .neq: column.neq(value)
        case .lt: column < value
        case .le: column <= value
        case .gt: column > value
        case .ge: column >= value
        }
    }

    static func applyColumns<V: QueryComparable>(_ x: QueryExpression<V>, _ op: Op, _ y: QueryExpression<V>) -> QueryPredicate {
        switch op {
        case .eq: x.eq(y)
        case .neq: x.neq(y)
        case .lt: x < y
        case .le: x <= y
        case .gt: x > y
        case .ge: x >= y
        }
    }

    static func bytesLess(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
    static func bytesEqual(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
    static func folded(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { ("A"..."Z").contains($0) ? (Unicode.Scalar($0.value + 32) ?? $0) : $0 }))
    }
    static func micros(_ date: Date) -> Int64 { ISO8601.microseconds(date) ?? 0 }

    static func textMatch(_ text: String?, _ needle: String, kind: Int, caseInsensitive: Bool) -> Bool? {
        guard var text else { return nil }
        var needle = needle
        if caseInsensitive { text = folded(text); needle = folded(needle) }
        let t = Array(text.utf8), n = Array(needle.utf8)
        switch kind {
        case 0:
            if n.isEmpty { return true }
            guard t.count >= n.count else { return false }
            return (0...(t.count - n.count)).contains { t[$0..<($0 + n.count)].elementsEqual(n) }
        case 1: return t.starts(with: n)
        default: return t.count >= n.count && t[(t.count - n.count)...].elementsEqual(n)
        }
    }

    static func leaf(_ g: inout Generator) -> Predicate {
        let op = g.pick(Op.allCases)
        switch Int.random(in: 0..<14, using: &g) {
        case 0:
            let v = Int.random(in: -3...3, using: &g)
            return Predicate(build: { apply($0.a, op, v) }, evaluate: { compare($0.a, op, v, less: <, equal: ==) }, text: "a \(op) \(v)")
        case 1:
            let v = g.pick([Int.min + 1, -3, 0, 2, Int.max])
            return Predicate(build: { apply($0.b, op, v) }, evaluate: { compare($0.b, op, v, less: <, equal: ==) }, text: "b \(op) \(v)")
        case 2:
            let negated = g.chance(2)
            let column = g.pick(["a", "t", "w"])
            return Predicate(
                build: {
                    switch column {
                    case "a": negated ? $0.a.isNotNull() : $0.a.isNull()
                    case "t": negated ? $0.t.isNotNull() : $0.t.isNull()
                    default: negated ? $0.w.isNotNull() : $0.w.isNull()
                    }
                },
                evaluate: { row in
                    let isNull = column == "a" ? row.a == nil : column == "t" ? row.t == nil : row.w == nil
                    return negated ? !isNull : isNull
                }, text: "\(column) IS \(negated ? "NOT " : "")NULL")
        case 3:
            let list = (0..<Int.random(in: 0...3, using: &g)).map { _ in Int.random(in: -3...3, using: &g) }
            let negated = g.chance(2)
            return Predicate(
                build: { negated ? $0.a.notIn(list) : $0.a.in(list) },
                evaluate: { row in
                    guard !list.isEmpty else { return negated }
                    guard let a = row.a else { return nil }
                    return list.contains(a) != negated
                }, text: "a \(negated ? "NOT IN" : "IN") \(list)", constant: list.isEmpty ? negated : nil)
        case 4:
            let v: Int? = g.chance(3) ? nil : Int.random(in: -3...3, using: &g)
            return Predicate(build: { $0.a.isNotDistinct(from: v) }, evaluate: { $0.a == v }, text: "a IS NOT DISTINCT FROM \(String(describing: v))")
        case 5:
            let v = g.pick(texts.compactMap { $0 })
            return Predicate(build: { apply($0.t, op, v) }, evaluate: { compare($0.t, op, v, less: bytesLess, equal: bytesEqual) },
                             text: "t \(op) \(v.debugDescription)")
        case 6:
            let needle = g.pick(needles), kind = Int.random(in: 0..<3, using: &g), ci = g.chance(2)
            return Predicate(
                build: {
                    switch kind {
                    case 0: $0.t.contains(needle, caseInsensitive: ci)
                    case 1: $0.t.hasPrefix(needle, caseInsensitive: ci)
                    default: $0.t.hasSuffix(needle, caseInsensitive: ci)
                    }
                },
                evaluate: { textMatch($0.t, needle, kind: kind, caseInsensitive: ci) },
                text: "t \(["contains", "hasPrefix", "hasSuffix"][kind]) \(needle.debugDescription)\(ci ? " (case-insensitive)" : "")")
        case 7:
            let v = g.pick(texts.compactMap { $0 })
            return Predicate(build: { apply($0.t.folded, op, v) },
                             evaluate: { compare($0.t.map(folded), op, v, less: bytesLess, equal: bytesEqual) },
                             text: "folded(t) \(op) \(v.debugDescription)")
        case 8:
            let v = Int.random(in: 0...3, using: &g)
            return Predicate(build: { apply($0.t.length, op, v) },
                             evaluate: { compare($0.t.map { $0.unicodeScalars.count }, op, v, less: <, equal: ==) },
                             text: "length(t) \(op) \(v)")
        case 9:
            let v = g.pick(doubles.compactMap { $0 })
            return Predicate(build: { apply($0.d, op, v) }, evaluate: { compare($0.d, op, v, less: <, equal: ==) }, text: "d \(op) \(v)")
        case 10:
            let negated = g.chance(2)
            return Predicate(build: { negated ? !$0.f : $0.f.eq(true) }, evaluate: { row in row.f.map { $0 != negated } },
                             text: negated ? "NOT f" : "f = true")
        case 11:
            let v = g.pick(instants.compactMap { $0 })
            return Predicate(build: { apply($0.w, op, v) }, evaluate: { compare($0.w.map(micros), op, micros(v), less: <, equal: ==) },
                             text: "w \(op) \(v.timeIntervalSince1970)")
        case 12:
            return Predicate(build: { applyColumns($0.t, op, $0.u) }, evaluate: { compare($0.t, op, $0.u, less: bytesLess, equal: bytesEqual) },
                             text: "t \(op) u")
        default:
            return Predicate(build: { applyColumns($0.a, op, $0.b) }, evaluate: { compare($0.a, op, $0.b, less: <, equal: ==) }, text: "a \(op) b")
        }
    }

    static func predicate(_ g: inout Generator, depth: Int = 0) -> Predicate {
        guard depth < 3, !g.chance(3) else { return leaf(&g) }
        switch Int.random(in: 0..<3, using: &g) {
        case 0:
            let (l, r) = (predicate(&g, depth: depth + 1), predicate(&g, depth: depth + 1))
            return Predicate(build: { l.build($0) && r.build($0) }, evaluate: { row in
                let (x, y) = (l.evaluate(row), r.evaluate(row))
                if x == false || y == false { return false }
                return x == true && y == true ? true : nil
            }, text: "(\(l.text) AND \(r.text))",
               constant: l.constant == false || r.constant == false ? false : l.constant == true && r.constant == true ? true : nil)
        case 1:
            let (l, r) = (predicate(&g, depth: depth + 1), predicate(&g, depth: depth + 1))
            return Predicate(build: { l.build($0) || r.build($0) }, evaluate: { row in
                let (x, y) = (l.evaluate(row), r.evaluate(row))
                if x == true || y == true { return true }
                return x == false && y == false ? false : nil
            }, text: "(\(l.text) OR \(r.text))",
               constant: l.constant == true || r.constant == true ? true : l.constant == false && r.constant == false ? false : nil)
        default:
            let p = predicate(&g, depth: depth + 1)
            return Predicate(build: { !p.build($0) }, evaluate: { p.evaluate($0).map(!) }, text: "NOT \(p.text)",
                             constant: p.constant.map(!))
        }
    }

    /// An ordering term: the builder's and the model's comparison (nil when equal).
    struct Term {
        let build: (FuzzRow.Columns) -> QueryOrdering
        let compare: (FuzzRow, FuzzRow) -> Bool?
        let text: String
    }

    static func term(_ g: inout Generator) -> Term {
        let descending = g.chance(2), nullsFirst = g.chance(2)
        func ordered<T>(_ x: T?, _ y: T?, _ less: (T, T) -> Bool, _ equal: (T, T) -> Bool) -> Bool? {
            switch (x, y) {
            case (nil, nil): return nil
            case (nil, _): return nullsFirst
            case (_, nil): return !nullsFirst
            case (let x?, let y?):
                if equal(x, y) { return nil }
                return descending ? less(y, x) : less(x, y)
            }
        }
        func make<V: QueryComparable>(_ column: @escaping (FuzzRow.Columns) -> QueryExpression<V>) -> (FuzzRow.Columns) -> QueryOrdering {
            { descending ? column($0).descending(nulls: nullsFirst ? .first : .last) : column($0).ascending(nulls: nullsFirst ? .first : .last) }
        }
        let suffix = "\(descending ? "DESC" : "ASC") NULLS \(nullsFirst ? "FIRST" : "LAST")"
        switch Int.random(in: 0..<6, using: &g) {
        case 0: return Term(build: make { $0.a }, compare: { ordered($0.a, $1.a, <, ==) }, text: "a \(suffix)")
        case 1: return Term(build: make { $0.t }, compare: { ordered($0.t, $1.t, bytesLess, bytesEqual) }, text: "t \(suffix)")
        case 2: return Term(build: make { $0.t.folded }, compare: { ordered($0.t.map(folded), $1.t.map(folded), bytesLess, bytesEqual) }, text: "folded(t) \(suffix)")
        case 3: return Term(build: make { $0.d }, compare: { ordered($0.d, $1.d, <, ==) }, text: "d \(suffix)")
        case 4: return Term(build: make { $0.f }, compare: { ordered($0.f.map { $0 ? 1 : 0 }, $1.f.map { $0 ? 1 : 0 }, <, ==) }, text: "f \(suffix)")
        default: return Term(build: make { $0.w }, compare: { ordered($0.w.map(micros), $1.w.map(micros), <, ==) }, text: "w \(suffix)")
        }
    }

    /// Both engines with the same random rows in `fuzz` and links in `fuzzLinks`.
    static func setUp(_ run: DifferentialRun, _ g: inout Generator) async throws -> (DifferentialEngines, [FuzzRow], [FuzzLink]) {
        let rows = Self.rows(&g)
        let links = Self.links(&g)
        let engines = try await run.makeEngines()
        for (_, store) in engines.both {
            try await store.write { db in
                // Text columns under a collation that is not code-point order
                // (the engine's case-insensitive one; ICU English on PostgreSQL,
                // which has none built in): the builder must give code-point answers anyway.
                let collation: SQL = db.dialect.caseFoldingCollation.map { "COLLATE \(unsafeRaw: $0)" } ?? "COLLATE \"en-x-icu\""
                try db.execute("""
                    CREATE TABLE "fuzz" ("id" \(type: .integer) PRIMARY KEY, "a" \(type: .integer), "b" \(type: .integer),
                      "t" \(type: .text) \(collation), "u" \(type: .text) \(collation), "d" \(type: .double), "f" \(type: .bool), "w" \(type: .date))
                    """)
                try db.execute("""
                    CREATE TABLE "fuzzLinks" ("id" \(type: .integer) PRIMARY KEY, "rowID" \(type: .integer), "n" \(type: .integer),
                      "tag" \(type: .text) \(collation))
                    """)
                try db.insert(contentsOf: rows)
                try db.insert(contentsOf: links)
            }
        }
        return (engines, rows, links)
    }

    // MARK: The run

    static func randomQueries(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000
        print("QueryFuzz: seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let (engines, rows, _) = try await Self.setUp(run, &g)
        defer { Task { await engines.close() } }
        var disagreements = 0
        for index in 0..<count {
            let filter = Self.predicate(&g)
            let terms = (0..<Int.random(in: 0...2, using: &g)).map { _ in Self.term(&g) }
            let limit: Int? = g.chance(3) ? Int.random(in: 0...20, using: &g) : nil
            let offset: Int? = g.chance(4) ? Int.random(in: 0...30, using: &g) : nil
            var built = FuzzRow.where(filter.build)
            for term in terms { built = built.order(term.build) }
            if let limit { built = built.limit(limit) }
            if let offset { built = built.offset(offset) }
            let query = built

            var expected = rows.filter { filter.evaluate($0) == true }
            expected.sort { x, y in
                for term in terms { if let less = term.compare(x, y) { return less } }
                return x.id < y.id
            }
            var page = Array(expected.dropFirst(offset ?? 0))
            if let limit { page = Array(page.prefix(limit)) }
            let expectedIDs = page.map(\.id)

            let described = "query \(index): WHERE \(filter.text) ORDER BY \(terms.map(\.text) + ["id"]) LIMIT \(limit.map(String.init) ?? "-") OFFSET \(offset.map(String.init) ?? "-")"
            for (name, store) in engines.both {
                // Twice on one connection: the second run binds into the SQL cached for the query's shape.
                let (ids, counted, again) = try await store.read { db in
                    (try db.fetchAll(query).map(\.id), try db.fetchCount(query), try db.fetchAll(query).map(\.id))
                }
                if ids != expectedIDs || counted != expectedIDs.count || again != expectedIDs {
                    disagreements += 1
                    run.record("seed \(seed), \(described): \(name) gave \(ids) (count \(counted), cached \(again)), the model \(expectedIDs)")
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

import Depot
import Foundation
import DepotTesting

/// Random inner and left joins of `fuzz` with `fuzzLinks`, with conditions on
/// both sides in ON and in WHERE, on both engines and in the model: the same
/// pairs in the same order, and the same count.
extension QueryFuzz {
    /// A predicate on a link's columns; the model sees an unmatched link as all NULLs.
    struct LinkPredicate {
        let build: (FuzzLink.Columns) -> QueryPredicate
        let evaluate: (FuzzLink?) -> Bool?
        let text: String
    }

    static func linkPredicate(_ g: inout Generator) -> LinkPredicate {
        let op = g.pick(Op.allCases)
        switch Int.random(in: 0..<5, using: &g) {
        case 0:
            let v = Int.random(in: -2...2, using: &g)
            return LinkPredicate(build: { apply($0.n, op, v) }, evaluate: { compare($0?.n, op, v, less: <, equal: ==) }, text: "l.n \(op) \(v)")
        case 1:
            let v = g.pick(texts.compactMap { $0 })
            return LinkPredicate(build: { apply($0.tag, op, v) }, evaluate: { compare($0?.tag, op, v, less: bytesLess, equal: bytesEqual) },
                                 text: "l.tag \(op) \(v.debugDescription)")
        case 2:
            let needle = g.pick(needles), ci = g.chance(2)
            return LinkPredicate(build: { $0.tag.contains(needle, caseInsensitive: ci) }, evaluate: { textMatch($0?.tag, needle, kind: 0, caseInsensitive: ci) },
                                 text: "l.tag contains \(needle.debugDescription)\(ci ? " (case-insensitive)" : "")")
        case 3:
            return LinkPredicate(build: { $0.n.isNull() }, evaluate: { $0?.n == nil }, text: "l.n IS NULL")
        default:
            let negated = g.chance(2)
            return LinkPredicate(build: { negated ? !$0.tag.isNull() : $0.tag.isNull() }, evaluate: { ($0?.tag == nil) != negated },
                                 text: "l.tag IS \(negated ? "NOT " : "")NULL")
        }
    }

    /// A random join: how to run it, and the model's pairs (row id, link id or nil).
    struct JoinCase: @unchecked Sendable {
        let run: (Database) throws -> (pairs: [String], count: Int)
        let expected: [String]
        let text: String
    }

    static func joinCase(_ g: inout Generator, rows: [FuzzRow], links: [FuzzLink]) -> JoinCase {
        let isLeft = g.chance(3) == false
        let onExtra = g.chance(3) ? linkPredicate(&g) : nil
        let rootFilter = g.chance(3) ? nil : predicate(&g, depth: 1)
        let linkFilter = g.chance(3) ? linkPredicate(&g) : nil
        let withoutMatch = isLeft && g.chance(5)
        let terms = (0..<Int.random(in: 0...2, using: &g)).map { _ in term(&g) }
        let linkTermDescending = g.chance(3) ? Optional(g.chance(2)) : nil
        let limit: Int? = g.chance(3) ? Int.random(in: 0...20, using: &g) : nil
        let offset: Int? = g.chance(4) ? Int.random(in: 0...30, using: &g) : nil

        // The model: every pair the ON condition accepts, or the row alone in a left join.
        var pairs: [(FuzzRow, FuzzLink?)] = []
        for row in rows {
            let matches = links.filter { link in
                link.rowID == row.id && (onExtra.map { $0.evaluate(link) == true } ?? true)
            }
            if matches.isEmpty {
                if isLeft { pairs.append((row, nil)) }
            } else {
                pairs += matches.map { (row, $0) }
            }
        }
        pairs = pairs.filter { row, link in
            (rootFilter.map { $0.evaluate(row) == true } ?? true)
                && (linkFilter.map { $0.evaluate(link) == true } ?? true)
                && (!withoutMatch || link == nil)
        }
        pairs.sort { x, y in
            for term in terms { if let less = term.compare(x.0, y.0) { return less } }
            if let descending = linkTermDescending {
                // l.n, NULLs last.
                switch (x.1?.n, y.1?.n) {
                case (nil, nil): break
                case (nil, _): return false
                case (_, nil): return true
                case (let a?, let b?): if a != b { return descending ? a > b : a < b }
                }
            }
            if x.0.id != y.0.id { return x.0.id < y.0.id }
            switch (x.1?.id, y.1?.id) {
            case (let a?, let b?): return a < b
            case (_?, nil): return true
            default: return false
            }
        }
        var page = Array(pairs.dropFirst(offset ?? 0))
        if let limit { page = Array(page.prefix(limit)) }
        let expected = page.map { "\($0.0.id)-\($0.1.map { String($0.id) } ?? "nil")" }

        func on(_ r: FuzzRow.Columns, _ l: FuzzLink.Columns) -> QueryPredicate {
            onExtra.map { r.id.eq(l.rowID) && $0.build(l) } ?? r.id.eq(l.rowID)
        }
        func refine<J>(_ join: J, where filter: (J, @escaping (FuzzRow.Columns, FuzzLink.Columns) -> QueryPredicate) -> J,
                       order: (J, @escaping (FuzzRow.Columns, FuzzLink.Columns) -> [QueryOrdering]) -> J,
                       page: (J, Int, Int?) -> J) -> J {
            var join = join
            if let rootFilter { join = filter(join) { r, _ in rootFilter.build(r) } }
            if let linkFilter { join = filter(join) { _, l in linkFilter.build(l) } }
            var ordering: [(FuzzRow.Columns, FuzzLink.Columns) -> QueryOrdering] = terms.map { term in { r, _ in term.build(r) } }
            if let descending = linkTermDescending {
                ordering.append { _, l in descending ? l.n.descending() : l.n.ascending() }
            }
            if !ordering.isEmpty { join = order(join) { r, l in ordering.map { $0(r, l) } } }
            if let limit { join = page(join, limit, offset) } else if let offset { join = page(join, Int.max, offset) }
            return join
        }
        let description = "\(isLeft ? "LEFT " : "")JOIN ON r.id = l.rowID\(onExtra.map { " AND " + $0.text } ?? "")"
            + " WHERE \(rootFilter?.text ?? "-") AND \(linkFilter?.text ?? "-")\(withoutMatch ? " WITHOUT MATCH" : "")"
            + " ORDER BY \(terms.map(\.text) + (linkTermDescending.map { ["l.n \($0 ? "DESC" : "ASC")"] } ?? []) + ["r.id", "l.id"])"
            + " LIMIT \(limit.map(String.init) ?? "-") OFFSET \(offset.map(String.init) ?? "-")"
        if isLeft {
            var join = refine(FuzzRow.all.leftJoin(FuzzLink.self, on: on), where: { $0.where($1) }, order: { $0.order($1) },
                              page: { $0.limit($1, offset: $2) })
            if withoutMatch { join = join.withoutMatch() }
            let built = join
            return JoinCase(run: { db in
                (try db.fetchAll(built).map { "\($0.0.id)-\($0.1.map { String($0.id) } ?? "nil")" }, try db.fetchCount(built))
            }, expected: expected, text: description)
        } else {
            let built = refine(FuzzRow.all.join(FuzzLink.self, on: on), where: { $0.where($1) }, order: { $0.order($1) },
                               page: { $0.limit($1, offset: $2) })
            return JoinCase(run: { db in
                (try db.fetchAll(built).map { "\($0.0.id)-\($0.1.id)" }, try db.fetchCount(built))
            }, expected: expected, text: description)
        }
    }

    static func randomJoins(_ run: DifferentialRun) async throws {
        try await Self.runJoinCases(run, "joins", Self.joinCase)
    }

    /// Runs random join cases on both engines against the model; `DEPOT_FUZZ_SEED` replays a run.
    static func runJoinCases(_ run: DifferentialRun, _ label: String, _ make: (inout Generator, [FuzzRow], [FuzzLink]) -> JoinCase) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = (environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000) / 4
        print("QueryFuzz (\(label)): seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let (engines, rows, links) = try await setUp(run, &g)
        defer { Task { await engines.close() } }
        var disagreements = 0
        for index in 0..<count {
            let fuzzCase = make(&g, rows, links)
            for (name, store) in engines.both {
                let got = try await store.read { db in try fuzzCase.run(db) }
                // The count is of the page, as the rows are.
                if got.pairs != fuzzCase.expected || got.count != fuzzCase.expected.count {
                    disagreements += 1
                    run.record("seed \(seed), query \(index): \(fuzzCase.text): \(name) gave \(got.pairs) (count \(got.count)), the model \(fuzzCase.expected)")
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

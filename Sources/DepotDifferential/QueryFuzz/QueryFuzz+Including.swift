import Depot
import Foundation
import DepotTesting

/// Random related-record loading: `fuzz` rows with their `fuzzLinks`, and
/// links with the row they name (optional and required), under random filters,
/// orders and pages on both sides, on both engines and in the model.
extension QueryFuzz {
    struct IncludingCase: @unchecked Sendable {
        let run: (Database) throws -> [String]
        let expected: [String]
        let text: String
    }

    static func page<T>(_ items: [T], limit: Int?, offset: Int?) -> [T] {
        let rest = Array(items.dropFirst(offset ?? 0))
        return limit.map { Array(rest.prefix($0)) } ?? rest
    }

    static func includingCase(_ g: inout Generator, rows: [FuzzRow], links: [FuzzLink]) -> IncludingCase {
        let limit: Int? = g.chance(3) ? Int.random(in: 0...15, using: &g) : nil
        let offset: Int? = g.chance(4) ? Int.random(in: 0...20, using: &g) : nil
        let linkFilter = g.chance(2) ? linkPredicate(&g) : nil
        let nDescending = g.chance(2), nullsFirst = g.chance(2)
        func linkLess(_ x: FuzzLink, _ y: FuzzLink) -> Bool {
            switch (x.n, y.n) {
            case (nil, nil): return x.id < y.id
            case (nil, _): return nullsFirst
            case (_, nil): return !nullsFirst
            case (let a?, let b?): return a == b ? x.id < y.id : nDescending ? a > b : a < b
            }
        }
        func orderLinks(_ query: Query<FuzzLink>) -> Query<FuzzLink> {
            query.order { nDescending ? $0.n.descending(nulls: nullsFirst ? .first : .last) : $0.n.ascending(nulls: nullsFirst ? .first : .last) }
        }
        // An unknown (NULL) filter keeps no link.
        func keeps(_ link: FuzzLink) -> Bool { linkFilter.map { $0.evaluate(link) == true } ?? true }
        let linkText = "links WHERE \(linkFilter?.text ?? "true") ORDER BY n \(nDescending ? "DESC" : "ASC") NULLS \(nullsFirst ? "FIRST" : "LAST"), id"
        let pageText = "LIMIT \(limit.map(String.init) ?? "-") OFFSET \(offset.map(String.init) ?? "-")"

        switch Int.random(in: 0..<3, using: &g) {
        case 0:
            // Rows with their links.
            let filter = predicate(&g, depth: 1)
            let terms = (0..<Int.random(in: 0...2, using: &g)).map { _ in term(&g) }
            var parents = FuzzRow.where(filter.build)
            for term in terms { parents = parents.order(term.build) }
            if let limit { parents = parents.limit(limit) }
            if let offset { parents = parents.offset(offset) }
            let query = parents.including(all: FuzzLink.self, by: \.rowID) { children in
                orderLinks(linkFilter.map { filter in children.where(filter.build) } ?? children)
            }
            var kept = rows.filter { filter.evaluate($0) == true }
            kept.sort { x, y in
                for term in terms { if let less = term.compare(x, y) { return less } }
                return x.id < y.id
            }
            let expected = page(kept, limit: limit, offset: offset).map { row in
                let children = links.filter { $0.rowID == row.id && keeps($0) }.sorted(by: linkLess)
                return "\(row.id): \(children.map(\.id))"
            }
            return IncludingCase(run: { db in try db.fetchAll(query).map { "\($0.0.id): \($0.1.map(\.id))" } }, expected: expected,
                                 text: "rows WHERE \(filter.text) ORDER BY \(terms.map(\.text) + ["id"]) \(pageText) including(all: \(linkText))")
        default:
            // Links with the row they name.
            let required = g.chance(2)
            var query = orderLinks(linkFilter.map { FuzzLink.where($0.build) } ?? FuzzLink.all)
            if let limit { query = query.limit(limit) }
            if let offset { query = query.offset(offset) }
            var kept = links.filter(keeps)
            if required { kept = kept.filter { link in rows.contains { $0.id == link.rowID } } }
            let expected = page(kept.sorted(by: linkLess), limit: limit, offset: offset).map { link in
                "\(link.id): \(rows.first { $0.id == link.rowID }.map { String($0.id) } ?? "nil")"
            }
            let run: (Database) throws -> [String] = required
                ? { db in try db.fetchAll(query.including(required: FuzzRow.self, by: \.rowID)).map { "\($0.0.id): \($0.1.id)" } }
                : { db in try db.fetchAll(query.including(optional: FuzzRow.self, by: \.rowID)).map { "\($0.0.id): \($0.1.map { String($0.id) } ?? "nil")" } }
            return IncludingCase(run: run, expected: expected, text: "\(linkText) \(pageText) including(\(required ? "required" : "optional"): row)")
        }
    }

    static func randomIncluding(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = (environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000) / 4
        print("QueryFuzz (including): seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let (engines, rows, links) = try await Self.setUp(run, &g)
        defer { Task { await engines.close() } }
        var disagreements = 0
        for index in 0..<count {
            let fuzzCase = Self.includingCase(&g, rows: rows, links: links)
            for (name, store) in engines.both {
                let got = try await store.read { db in try fuzzCase.run(db) }
                if got != fuzzCase.expected {
                    disagreements += 1
                    run.record("seed \(seed), query \(index): \(fuzzCase.text): \(name) gave \(got), the model \(fuzzCase.expected)")
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

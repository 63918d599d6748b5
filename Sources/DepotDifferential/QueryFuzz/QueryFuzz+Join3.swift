import Depot
import Foundation
import DepotTesting

/// Random joins of three tables, one of them twice: links, the row each names,
/// and every other link of that row, under random conditions, orders and pages,
/// on both engines and in the model.
extension QueryFuzz {
    static func threeWayCase(_ g: inout Generator, rows: [FuzzRow], links: [FuzzLink]) -> JoinCase {
        let onExtra = g.chance(2) ? linkPredicate(&g) : nil
        let rowFilter = g.chance(2) ? predicate(&g, depth: 2) : nil
        let firstFilter = g.chance(2) ? linkPredicate(&g) : nil
        let terms = (0..<Int.random(in: 0...2, using: &g)).map { _ in term(&g) }
        let byOtherN = g.chance(2) ? Optional(g.chance(2)) : nil
        let limit: Int? = g.chance(3) ? Int.random(in: 0...20, using: &g) : nil
        let offset: Int? = g.chance(4) ? Int.random(in: 0...30, using: &g) : nil

        var triples: [(FuzzLink, FuzzRow, FuzzLink)] = []
        for first in links {
            guard let row = rows.first(where: { $0.id == first.rowID }) else { continue }
            for other in links where other.rowID == row.id && (onExtra.map { $0.evaluate(other) == true } ?? true) {
                triples.append((first, row, other))
            }
        }
        triples = triples.filter { first, row, _ in
            (rowFilter.map { $0.evaluate(row) == true } ?? true) && (firstFilter.map { $0.evaluate(first) == true } ?? true)
        }
        triples.sort { x, y in
            for term in terms { if let less = term.compare(x.1, y.1) { return less } }
            if let descending = byOtherN {
                switch (x.2.n, y.2.n) {
                case (nil, nil): break
                case (nil, _): return false
                case (_, nil): return true
                case (let a?, let b?): if a != b { return descending ? a > b : a < b }
                }
            }
            if x.0.id != y.0.id { return x.0.id < y.0.id }
            if x.1.id != y.1.id { return x.1.id < y.1.id }
            return x.2.id < y.2.id
        }
        var page = Array(triples.dropFirst(offset ?? 0))
        if let limit { page = Array(page.prefix(limit)) }
        let expected = page.map { "\($0.0.id)-\($0.1.id)-\($0.2.id)" }

        var join = FuzzLink.all.join(FuzzRow.self) { first, row in first.rowID.eq(row.id) }
            .join(FuzzLink.self) { _, row, other in onExtra.map { other.rowID.eq(row.id) && $0.build(other) } ?? other.rowID.eq(row.id) }
        if let rowFilter { join = join.where { _, row, _ in rowFilter.build(row) } }
        if let firstFilter { join = join.where { first, _, _ in firstFilter.build(first) } }
        var ordering: [(FuzzRow.Columns, FuzzLink.Columns) -> QueryOrdering] = terms.map { term in { row, _ in term.build(row) } }
        if let descending = byOtherN { ordering.append { _, other in descending ? other.n.descending() : other.n.ascending() } }
        if !ordering.isEmpty { join = join.order { _, row, other in ordering.map { $0(row, other) } } }
        if let limit { join = join.limit(limit, offset: offset) } else if let offset { join = join.limit(Int.max, offset: offset) }
        let built = join
        let description = "l1 JOIN r ON l1.rowID = r.id JOIN l2 ON l2.rowID = r.id\(onExtra.map { " AND l2." + $0.text } ?? "")"
            + " WHERE \(rowFilter?.text ?? "-") AND l1: \(firstFilter?.text ?? "-")"
            + " ORDER BY \(terms.map(\.text) + (byOtherN.map { ["l2.n \($0 ? "DESC" : "ASC")"] } ?? []) + ["l1.id", "r.id", "l2.id"])"
            + " LIMIT \(limit.map(String.init) ?? "-") OFFSET \(offset.map(String.init) ?? "-")"
        return JoinCase(run: { db in
            (try db.fetchAll(built).map { "\($0.0.id)-\($0.1.id)-\($0.2.id)" }, try db.fetchCount(built))
        }, expected: expected, text: description)
    }

    static func randomThreeTableJoins(_ run: DifferentialRun) async throws {
        try await Self.runJoinCases(run, "three-table joins", Self.threeWayCase)
    }
}

/// Random aggregates over a left join: each row with how many links name it
/// and the sum of their numbers, under random filters on both sides.
extension QueryFuzz {
    static func joinAggregateCase(_ g: inout Generator, rows: [FuzzRow], links: [FuzzLink]) -> JoinCase {
        let onExtra = g.chance(2) ? linkPredicate(&g) : nil
        let rowFilter = g.chance(2) ? predicate(&g, depth: 2) : nil
        let minimum: Int? = g.chance(3) ? Int.random(in: 0...2, using: &g) : nil
        let descending = g.chance(2)
        var expected: [(Int64, Int, Int?)] = []
        for row in rows where rowFilter.map({ $0.evaluate(row) == true }) ?? true {
            let matched = links.filter { link in link.rowID == row.id && (onExtra.map { $0.evaluate(link) == true } ?? true) }
            let numbers = matched.compactMap(\.n)
            let entry = (row.id, matched.count, numbers.isEmpty ? nil : numbers.reduce(0, +))
            if let minimum, entry.1 <= minimum { continue }
            expected.append(entry)
        }
        // Ordered by the count, then the group key.
        expected.sort { x, y in x.1 != y.1 ? (descending ? x.1 > y.1 : x.1 < y.1) : x.0 < y.0 }
        var join = FuzzRow.all.leftJoin(FuzzLink.self) { row, link in onExtra.map { link.rowID.eq(row.id) && $0.build(link) } ?? link.rowID.eq(row.id) }
        if let rowFilter { join = join.where { row, _ in rowFilter.build(row) } }
        var selection = join.select { row, link in (row.id, link.id.count(), link.n.sum()) }.group { row, _ in row.id }
            .order { _, link in [descending ? link.id.count().descending() : link.id.count().ascending()] }
        if let minimum { selection = selection.having { _, link in link.id.count() > minimum } }
        let built = selection
        let text = "SELECT r.id, count(l.id), sum(l.n) FROM r LEFT JOIN l ON l.rowID = r.id\(onExtra.map { " AND " + $0.text } ?? "")"
            + " WHERE \(rowFilter?.text ?? "-") GROUP BY r.id\(minimum.map { " HAVING count > \($0)" } ?? "") ORDER BY count \(descending ? "DESC" : "ASC"), r.id"
        return JoinCase(run: { db in
            let rows = try db.fetchAll(built).map { "\($0.0):\($0.1):\($0.2.map(String.init) ?? "NULL")" }
            return (rows, rows.count)
        }, expected: expected.map { "\($0.0):\($0.1):\($0.2.map(String.init) ?? "NULL")" }, text: text)
    }

    static func randomAggregatesOverJoins(_ run: DifferentialRun) async throws {
        try await Self.runJoinCases(run, "aggregates over joins", Self.joinAggregateCase)
    }
}

import Depot
import Foundation

extension QueryFuzz {
    /// Random keyset pages: random filters, one to three random ordering terms
    /// (NULLs first or last, text with case and accents, many ties) and page
    /// sizes, walked forward and back on both engines and compared with the
    /// model's order; every fourth walk inserts and deletes rows between
    /// pages, and must still meet every row that stayed exactly once.
    static func randomKeysetPages(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = environment["DEPOT_FUZZ_PAGE_WALKS"].flatMap { Int($0) } ?? 200
        print("QueryFuzz pages: seed \(seed), \(count) walks (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let (engines, initial, _) = try await Self.setUp(run, &g)
        defer { Task { await engines.close() } }
        var rows = initial
        var nextID = (rows.map(\.id).max() ?? 0) + 1
        var disagreements = 0
        for index in 0..<count {
            let filter = Self.predicate(&g)
            let terms = (0..<Int.random(in: 1...3, using: &g)).map { _ in Self.term(&g) }
            let size = Int.random(in: 1...15, using: &g)
            var built = FuzzRow.where(filter.build)
            for term in terms { built = built.order(term.build) }
            let query = built
            func modelOrder(_ candidates: [FuzzRow]) -> [Int64] {
                candidates.filter { filter.evaluate($0) == true }.sorted { x, y in
                    for term in terms { if let less = term.compare(x, y) { return less } }
                    return x.id < y.id
                }.map(\.id)
            }
            let described = "walk \(index): WHERE \(filter.text) ORDER BY \(terms.map(\.text) + ["id"]), pages of \(size)"

            if index % 4 == 3 {
                // Rows come and go between pages: those that stay are met once each.
                let before = Set(modelOrder(rows))
                var seen: [String: [Int64]] = [:]
                var pages: [String: Page<FuzzRow>] = [:]
                for (name, store) in engines.both {
                    pages[name] = try await store.read { db in try db.fetchPage(query, limit: size) }
                    seen[name] = pages[name]?.items.map(\.id) ?? []
                }
                var removed: Set<Int64> = []
                for _ in 0..<40 {
                    guard engines.both.contains(where: { pages[$0.name]?.next != nil }) else { break }
                    let added = Self.row(nextID, &g)
                    nextID += 1
                    let victim = g.chance(2) ? rows.randomElement(using: &g)?.id : nil
                    for (name, store) in engines.both {
                        try await store.write { db in
                            try db.insert(added)
                            if let victim { try db.delete(FuzzRow.self, id: victim) }
                        }
                        if let next = pages[name]?.next {
                            let page = try await store.read { db in try db.fetchPage(query, after: next, limit: size) }
                            pages[name] = page
                            seen[name, default: []] += page.items.map(\.id)
                        }
                    }
                    rows.append(added)
                    if let victim { rows.removeAll { $0.id == victim }; removed.insert(victim) }
                }
                let stayed = before.subtracting(removed)
                for (name, _) in engines.both {
                    let met = seen[name] ?? []
                    guard pages[name]?.next == nil else { continue } // 40 pages were not the end: nothing to judge
                    if met.count != Set(met).count || !stayed.isSubset(of: Set(met)) {
                        disagreements += 1
                        run.record("seed \(seed), \(described), rows inserted and deleted between pages: \(name) met \(met); rows that stayed \(stayed.sorted())")
                    }
                }
            } else {
                let expected = modelOrder(rows)
                for (name, store) in engines.both {
                    let (forward, backward) = try await store.read { db -> ([Int64], [Int64]) in
                        var page = try db.fetchPage(query, limit: size)
                        var forward = page.items.map(\.id)
                        while let next = page.next, forward.count <= expected.count {
                            page = try db.fetchPage(query, after: next, limit: size)
                            forward += page.items.map(\.id)
                        }
                        var backward = page.items.map(\.id)
                        while let previous = page.previous, backward.count <= expected.count {
                            page = try db.fetchPage(query, before: previous, limit: size)
                            backward = page.items.map(\.id) + backward
                        }
                        return (forward, backward)
                    }
                    if forward != expected || backward != expected {
                        disagreements += 1
                        run.record("seed \(seed), \(described): \(name) paged forward \(forward), back \(backward); the model \(expected)")
                    }
                }
            }
            if disagreements > 5 { break }
        }
        print("QueryFuzz pages: \(count) walks, \(disagreements) disagreements")
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

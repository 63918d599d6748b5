import Depot
import Foundation

/// Keyset pages: a walk through a query's pages, forward or back, meets
/// every row once in the query's order, whatever is inserted or deleted between pages.
extension QueryChecks {
    static let titles = ["apple", "Apple", "Äpfel", "apple", "banana", "Zebra", "zebra", "éclair", "eclair", "", "apple pie", "Ω"]

    /// Items with ties, NULLs, case and accents in every ordered column.
    static func pagedItems(_ context: ConformanceContext, count: Int = 40) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in
            try Item.createTable(db)
            for n in 0..<count {
                try db.insert(Item(id: nil, title: titles[n % titles.count], notes: n % 3 == 0 ? nil : titles[(n * 7) % titles.count],
                                   isDone: n % 5 == 0, priority: [.none, .low, .medium, .high][(n / 3) % 4],
                                   dueDate: n % 4 == 0 ? nil : Date(timeIntervalSince1970: 1_700_000_000 + Double(n % 6) * 86_400),
                                   score: Double(n % 7) / 2))
            }
        }
        return store
    }

    static let pageOrders: [(String, Query<Item>)] = [
        ("title", Item.all.order { $0.title }),
        ("notes descending, NULLs first", Item.all.order { [$0.notes.descending(nulls: .first)] }),
        ("notes, NULLs last, then title descending", Item.all.order { [$0.notes.ascending(nulls: .last), $0.title.descending()] }),
        ("due date descending NULLs last, then score", Item.all.order { [$0.dueDate.descending(nulls: .last), $0.score] }),
        ("folded title, then done, then score descending", Item.all.order { [$0.title.folded, $0.isDone, $0.score.descending()] }),
        ("filtered: not done, by due date NULLs first", Item.where { !$0.isDone }.order { [$0.dueDate.ascending(nulls: .first)] }),
        ("primary key only", Item.all),
    ]

    static let pages: [ConformanceCheck] = [
        ConformanceCheck("query: keyset pages walk a query in its order, NULLs, ties, case and accents included, forward and back") { context in
            let store = try await pagedItems(context)
            for (name, query) in pageOrders {
                let all = try await store.read { db in try db.fetchAll(query).compactMap(\.id) }
                for size in [1, 3, 7, 100] {
                    var forward: [Int64] = []
                    var page = try await store.read { db in try db.fetchPage(query, limit: size) }
                    try expect(page.previous == nil, "\(name), pages of \(size): the first page has no previous")
                    forward += page.items.compactMap(\.id)
                    var last = page
                    while let next = page.next {
                        page = try await store.read { db in try db.fetchPage(query, after: next, limit: size) }
                        try expect(!page.items.isEmpty, "\(name), pages of \(size): a page after a next cursor is not empty")
                        forward += page.items.compactMap(\.id)
                        last = page
                        try expect(forward.count <= all.count, "\(name), pages of \(size): more rows than the query has")
                    }
                    try expectEqual(forward, all, "\(name), pages of \(size): the rows of every page forward")
                    var backward = last.items.compactMap(\.id)
                    var back = last
                    while let previous = back.previous {
                        back = try await store.read { db in try db.fetchPage(query, before: previous, limit: size) }
                        backward = back.items.compactMap(\.id) + backward
                        try expect(backward.count <= all.count, "\(name), pages of \(size): more rows back than the query has")
                    }
                    try expectEqual(backward, all, "\(name), pages of \(size): the rows of every page back from the last")
                }
            }
        },
        ConformanceCheck("query: keyset pages neither repeat nor skip a row that stayed while rows are inserted and deleted between pages") { context in
          for query in [Item.all.order { [$0.notes.ascending(nulls: .first), $0.title.descending()] },
                        Item.all.order { [$0.notes.descending(nulls: .last), $0.title] }] {
            let store = try await pagedItems(context, count: 30)
            let before = Set(try await store.read { db in try db.fetchAll(query).compactMap(\.id) })
            var seen: [Int64] = []
            var deleted: Set<Int64> = []
            var page = try await store.read { db in try db.fetchPage(query, limit: 4) }
            var round = 0
            while true {
                seen += page.items.compactMap(\.id)
                guard let next = page.next else { break }
                round += 1
                guard round <= 60 else { throw ConformanceFailure("30 rows in pages of 4 took more than 60 pages: \(seen)") }
                // Between pages: a row in every place of the order, and one of the rows not yet seen deleted.
                let victim = before.subtracting(seen).subtracting(deleted).sorted().first
                try await store.write { [round] db in
                    try db.insert(Item(id: nil, title: titles[round % titles.count], notes: round % 2 == 0 ? nil : titles[(round * 5) % titles.count],
                                       isDone: false, priority: .low, dueDate: nil, score: 0))
                    if let victim { try db.delete(Item.self, id: victim) }
                }
                if let victim { deleted.insert(victim) }
                page = try await store.read { db in try db.fetchPage(query, after: next, limit: 4) }
            }
            try expectEqual(seen.count, Set(seen).count, "rows met twice: \(seen)")
            let stayed = before.subtracting(deleted)
            try expectEqual(stayed.subtracting(seen), [], "rows that stayed throughout yet were skipped")
          }
        },
        ConformanceCheck("query: a page cursor is Codable as one opaque string, and another order refuses it") { context in
            let store = try await pagedItems(context, count: 10)
            let query = Item.all.order { [$0.dueDate.descending(nulls: .first), $0.title] }
            let first = try await store.read { db in try db.fetchPage(query, limit: 3) }
            guard let next = first.next else { throw ConformanceFailure("ten rows in pages of 3 have a second page") }
            let json = try JSONEncoder().encode(["after": next])
            let decoded = try JSONDecoder().decode([String: PageCursor].self, from: json)["after"]
            try expectEqual(decoded, next, "the cursor through JSON")
            try expectEqual(try PageCursor(token: next.token), next, "the cursor through its token")
            try expect(!next.description.contains("item"), "the cursor's description shows no value: \(next)")
            let viaToken = try await store.read { db in try db.fetchPage(query, after: try PageCursor(token: next.token), limit: 3) }
            let direct = try await store.read { db in try db.fetchPage(query, after: next, limit: 3) }
            try expectEqual(viaToken.items, direct.items, "the page after a cursor read back from its token")
            try await expectError(.misuse, "a cursor of another order") {
                try await store.read { db in try db.fetchPage(Item.all.order { $0.title }, after: next, limit: 3) }
            }
            try await expectError(.misuse, "a cursor of the same terms in another direction") {
                try await store.read { db in try db.fetchPage(Item.all.order { [$0.dueDate.ascending(nulls: .first), $0.title] }, after: next, limit: 3) }
            }
            for bad in ["", "not a cursor", String(next.token.dropLast(3))] {
                do {
                    _ = try PageCursor(token: bad)
                    throw ConformanceFailure("the token \(bad.debugDescription) was read as a cursor")
                } catch let error as DatabaseError {
                    try expectEqual(error.kind, .misuse, "the error of the token \(bad.debugDescription)")
                }
            }
            try await expectError(.misuse, "a query with its own limit") {
                try await store.read { db in try db.fetchPage(query.limit(5), limit: 3) }
            }
        },
    ]
}

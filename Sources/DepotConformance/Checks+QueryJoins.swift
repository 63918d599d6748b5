import Depot
import Foundation

/// Shelves and the books on them, for joins: a shelf with none, a book on none.
@Columns
struct Shelf: Record, Equatable {
    static var tableName: String { "shelves" }
    var id: Int64
    var name: String
}

@Columns
struct Book: Record, Equatable {
    static var tableName: String { "books" }
    var id: Int64
    var shelfID: Int64?
    var title: String
}

/// Joins, subqueries over another table, and comparisons across a row.
extension QueryChecks {
    static func library(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in
            try createTable(db, "shelves", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")])
            try createTable(db, "books", [("id", .integer, "PRIMARY KEY"), ("shelfID", .integer, ""), ("title", .text, "NOT NULL")])
            try db.insert(contentsOf: [Shelf(id: 1, name: "b"), Shelf(id: 2, name: "a"), Shelf(id: 3, name: "empty")])
            try db.insert(contentsOf: [Book(id: 10, shelfID: 1, title: "x"), Book(id: 11, shelfID: 2, title: "y"),
                                       Book(id: 12, shelfID: 1, title: "w"), Book(id: 13, shelfID: nil, title: "z")])
        }
        return store
    }

    static let joins: [ConformanceCheck] = [
        ConformanceCheck("query: a join's selection reads expressions of both tables, grouped and aggregated") { context in
            let store = try await library(context)
            let (counts, pairs, total, busy) = try await store.read { db in
                (try db.fetchAll(Shelf.all.leftJoin(Book.self) { shelf, book in book.shelfID.eq(shelf.id) }
                    .select { shelf, book in (shelf.name, book.id.count()) }.group { shelf, _ in shelf.id }),
                 try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }
                    .select { book, shelf in (book.title + "@" + shelf.name, book.id) }),
                 try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }.select { _, _ in (Aggregates.countAll(), Aggregates.countAll()) }),
                 try db.fetchAll(Shelf.all.leftJoin(Book.self) { shelf, book in book.shelfID.eq(shelf.id) }
                    .select { shelf, book in (shelf.id, book.id.count()) }.group { shelf, _ in shelf.id }
                    .having { _, book in book.id.count() > 1 }))
            }
            try expectEqual(counts.map(\.0), ["b", "a", "empty"], "every shelf, by the group key")
            try expectEqual(counts.map(\.1), [2, 1, 0], "0 for the shelf without books: count of the unmatched NULL key")
            try expectEqual(pairs.map(\.0), ["x@b", "y@a", "w@b"], "expressions over both tables, by the primary keys")
            try expectEqual(total.map(\.0), [3], "one aggregated row")
            try expectEqual(busy.map(\.0), [1], "having")
        },
        ConformanceCheck("query: a join of three tables, one of them twice, pairs every matching triple in a total order") { context in
            let store = try await library(context)
            let triples = try await store.read { db in
                try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }
                    .join(Book.self) { book, shelf, other in other.shelfID.eq(shelf.id) && other.id.neq(book.id) })
            }
            try expectEqual(triples.map { "\($0.0.id)@\($0.1.id)+\($0.2.id)" }, ["10@1+12", "12@1+10"], "books sharing a shelf, by the three keys")
            let (ordered, counted, filtered) = try await store.read { db in
                let all = Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }
                    .join(Book.self) { _, shelf, other in other.shelfID.eq(shelf.id) }
                return (try db.fetchAll(all.order { _, shelf, other in [shelf.name, other.title.descending()] }).map { "\($0.0.id)+\($0.2.id)" },
                        try db.fetchCount(all),
                        try db.fetchAll(all.where { book, _, other in book.title < other.title }.limit(1)).map { "\($0.0.title)<\($0.2.title)" })
            }
            try expectEqual(ordered, ["11+11", "10+10", "12+10", "10+12", "12+12"], "by shelf name, the third's title descending, then the keys")
            try expectEqual(counted, 5, "count of the triples")
            try expectEqual(filtered, ["w<x"], "a filter across the first and third, limited")
        },
        ConformanceCheck("query: an inner join pairs matching records, ordered by the terms then both primary keys") { context in
            let store = try await library(context)
            let pairs = try await store.read { db in
                try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }
                    .order { _, shelf in [shelf.name.ascending()] })
            }
            try expectEqual(pairs.map { "\($0.0.id)@\($0.1.id)" }, ["11@2", "10@1", "12@1"], "pairs by shelf name, then book id")
            let filtered = try await store.read { db in
                try db.fetchAll(Book.where { $0.title.neq("x") }.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }
                    .where { _, shelf in shelf.name.eq("b") })
            }
            try expectEqual(filtered.map(\.0.id), [12], "the query's and the join's filters both hold")
            let counted = try await store.read { db in
                try db.fetchCount(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }.limit(2))
            }
            try expectEqual(counted, 2, "count of a limited join")
        },
        ConformanceCheck("query: a left join keeps unmatched records with nil, and withoutMatch finds them") { context in
            let store = try await library(context)
            let rows = try await store.read { db in
                try db.fetchAll(Shelf.all.leftJoin(Book.self) { shelf, book in book.shelfID.eq(shelf.id) })
            }
            try expectEqual(rows.map { "\($0.0.id)@\($0.1.map { String($0.id) } ?? "nil")" }, ["1@10", "1@12", "2@11", "3@nil"], "shelves with their books")
            let empty = try await store.read { db in
                try db.fetchAll(Shelf.all.leftJoin(Book.self) { shelf, book in book.shelfID.eq(shelf.id) }.withoutMatch())
            }
            try expectEqual(empty.map(\.0.name), ["empty"], "the shelf without books")
            let ordered = try await store.read { db in
                try db.fetchAll(Shelf.all.leftJoin(Book.self) { shelf, book in book.shelfID.eq(shelf.id) }
                    .order { _, book in [book.title.descending(nulls: .first)] })
            }
            try expectEqual(ordered.map { $0.1?.title ?? "-" }, ["-", "y", "x", "w"], "NULLs of the unmatched shelf first")
        },
        ConformanceCheck("query: in and notIn take a selection of another table") { context in
            let store = try await library(context)
            let (inside, outside) = try await store.read { db in
                (try db.fetchAll(Book.where { $0.shelfID.in(Shelf.where { $0.name.eq("b") }.select { $0.id }) }),
                 try db.fetchAll(Shelf.where { $0.id.notIn(Book.where { $0.shelfID.isNotNull() }.select { $0.shelfID }) }))
            }
            try expectEqual(inside.map(\.id), [10, 12], "books on shelf b")
            try expectEqual(outside.map(\.id), [3], "shelves no book is on")
            let none = try await store.read { db in
                try db.fetchAll(Shelf.where { $0.id.notIn(Book.all.select { $0.shelfID }) })
            }
            try expectEqual(none.map(\.id), [], "NOT IN a selection holding NULL is unknown for every row")
        },
        ConformanceCheck("query: exists and notExists see the outer query's row") { context in
            let store = try await library(context)
            let (stocked, empty, paged) = try await store.read { db in
                (try db.fetchAll(Shelf.where { shelf in Book.exists { $0.shelfID.eq(shelf.id) && $0.title.neq("y") } }),
                 try db.fetchAll(Shelf.where { shelf in Book.notExists { $0.shelfID.eq(shelf.id) } }),
                 try db.fetchAll(Shelf.where { shelf in Book.exists { $0.shelfID.eq(shelf.id) } }.order { $0.name.ascending() }.limit(1)))
            }
            try expectEqual(stocked.map(\.id), [1], "shelves holding a book other than y")
            try expectEqual(empty.map(\.id), [3], "shelves holding nothing")
            try expectEqual(paged.map(\.id), [2], "the first stocked shelf by name")
            let joined = try await store.read { db in
                try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) }
                    .where { book, shelf in Book.exists { $0.shelfID.eq(shelf.id) && $0.id.neq(book.id) } })
            }
            try expectEqual(joined.map(\.0.id), [10, 12], "books sharing their shelf, inside a join")
            let cleared = try await store.write { db in
                try db.delete(Shelf.where { shelf in Book.notExists { $0.shelfID.eq(shelf.id) } })
            }
            try expectEqual(cleared, 1, "empty shelves deleted")
            let counted = try await store.read { db in try db.fetchCount(Shelf.where { shelf in Book.exists { $0.shelfID.eq(shelf.id) } }) }
            try expectEqual(counted, 2, "count of stocked shelves")
        },
        ConformanceCheck("query: a selection pages, a query streams, and always holds for every row") { context in
            let store = try await notes(context)
            let (page, streamed) = try await store.read { db in
                var seen: [Int64] = []
                try db.forEach(Note.where { _ in QueryPredicate.always }.order { $0.score.descending() }) { seen.append($0.id) }
                return (try db.fetchAll(Note.all.select { $0.title }.order { $0.rank.ascending() }.limit(2, offset: 1)), seen)
            }
            try expectEqual(page, ["banana", "apple"], "titles 2 and 3 by rank")
            try expectEqual(streamed, [7, 8, 5, 1, 4, 3, 2, 6], "streamed by score, NULLs last")
        },
        ConformanceCheck("query: two columns of a row compare with each other") { context in
            let store = try await library(context)
            let pairs = try await store.read { db in
                try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) && book.title > shelf.name })
            }
            try expectEqual(pairs.map(\.0.id), [10, 11, 12], "every title after its shelf's name")
            let none = try await store.read { db in
                try db.fetchAll(Book.all.join(Shelf.self) { book, shelf in book.shelfID.eq(shelf.id) && book.title <= shelf.name })
            }
            try expectEqual(none.map(\.0.id), [], "none before")
        },
    ]
}

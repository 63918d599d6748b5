import Depot
import Foundation

/// One word in a column that may fold case.
@Columns
struct Word: Record, Equatable {
    static var tableName: String { "words" }
    var id: Int64
    var word: String
}

/// A record with hostile values for the query builder's checks: NULLs in every
/// optional column, mixed case, accents, LIKE's special characters, ties.
@Columns
struct Note: Record, Equatable {
    static var tableName: String { "notes" }
    var id: Int64
    var title: String
    var body: String?
    var rank: Int?
    var score: Double?
    var isPinned: Bool
    var isArchived: Bool?
    var due: Date?

    static func createTable(_ db: Database) throws {
        try DepotConformance.createTable(db, "notes", [
            ("id", .integer, "PRIMARY KEY"),
            ("title", .text, "NOT NULL"),
            ("body", .text, ""),
            ("rank", .integer, ""),
            ("score", .double, ""),
            ("isPinned", .bool, "NOT NULL"),
            ("isArchived", .bool, ""),
            ("due", .date, ""),
        ])
    }

    static let day0 = Date(timeIntervalSince1970: 1_700_000_000.25)

    static let samples: [Note] = [
        Note(id: 1, title: "apple", body: "Fresh fruit", rank: 2, score: 1.5, isPinned: true, isArchived: false, due: day0),
        Note(id: 2, title: "Apple", body: nil, rank: nil, score: nil, isPinned: false, isArchived: nil, due: nil),
        Note(id: 3, title: "banana", body: "100% juice", rank: 1, score: -2, isPinned: false, isArchived: true, due: day0.addingTimeInterval(-86_400)),
        Note(id: 4, title: "Éclair", body: "a_b", rank: 3, score: 0, isPinned: true, isArchived: false, due: day0.addingTimeInterval(0.000_001)),
        Note(id: 5, title: "éclair", body: "C:\\dir\\file", rank: nil, score: 2.25, isPinned: false, isArchived: nil, due: nil),
        Note(id: 6, title: "zebra", body: "ABC def", rank: 2, score: nil, isPinned: true, isArchived: true, due: day0.addingTimeInterval(86_400 * 400)),
        Note(id: 7, title: "", body: "", rank: 0, score: 10, isPinned: false, isArchived: false, due: day0),
        Note(id: 8, title: "a%b_c\\d", body: "e\u{301}", rank: 5, score: 3.5, isPinned: false, isArchived: nil, due: Date(timeIntervalSince1970: -62_135_596_800)),
    ]
}

/// The typed query builder: each operator means the same on every engine.
enum QueryChecks {
    static func notes(_ context: ConformanceContext, _ configuration: Store.Configuration = Store.Configuration()) async throws -> Store {
        let store = try await context.makeStore(configuration)
        try await store.write { db in
            try Note.createTable(db)
            try db.insert(contentsOf: Note.samples)
        }
        return store
    }

    /// The ids the query returns, in order.
    static func ids(_ store: Store, _ query: Query<Note>) async throws -> [Int64] {
        try await store.read { db in try db.fetchAll(query).map(\.id) }
    }

    static func expectIDs(_ store: Store, _ query: Query<Note>, _ expected: [Int64], _ what: String) async throws {
        try expectEqual(try await ids(store, query), expected, what)
    }

    /// Code-point order, as the builder promises.
    static func codePointLess(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("query: comparisons are three-valued, so NULL matches neither eq nor neq") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.where { $0.rank.eq(2) }, [1, 6], "rank = 2")
            try await expectIDs(store, Note.where { $0.rank.neq(2) }, [3, 4, 7, 8], "rank <> 2 (NULLs left out)")
            try await expectIDs(store, Note.where { $0.rank < 2 }, [3, 7], "rank < 2")
            try await expectIDs(store, Note.where { $0.rank >= 3 }, [4, 8], "rank >= 3")
            try await expectIDs(store, Note.where { $0.rank.between(1, and: 2) }, [1, 3, 6], "rank between 1 and 2")
            try await expectIDs(store, Note.where { $0.rank.isNull() }, [2, 5], "rank IS NULL")
            try await expectIDs(store, Note.where { $0.rank.isNotNull() }, [1, 3, 4, 6, 7, 8], "rank IS NOT NULL")
            try await expectIDs(store, Note.where { $0.rank.isNotDistinct(from: nil) }, [2, 5], "rank IS NOT DISTINCT FROM NULL")
            try await expectIDs(store, Note.where { $0.rank.isDistinct(from: 2) }, [2, 3, 4, 5, 7, 8], "rank IS DISTINCT FROM 2")
        },
        ConformanceCheck("query: eq(nil) is IS NULL and neq(nil) is IS NOT NULL, never a comparison that matches nothing") { context in
            let store = try await notes(context)
            let (isNil, isNull, notNil, notNull) = try await store.read { db in
                (try db.fetchAll(Note.where { $0.rank.eq(nil) }).map(\.id), try db.fetchAll(Note.where { $0.rank.isNull() }).map(\.id),
                 try db.fetchAll(Note.where { $0.rank.neq(nil) }).map(\.id), try db.fetchAll(Note.where { $0.rank.isNotNull() }).map(\.id))
            }
            try expect(!isNil.isEmpty && !notNil.isEmpty, "the fixture has NULL and non-NULL ranks")
            try expectEqual(isNil, isNull, "eq(nil)")
            try expectEqual(notNil, notNull, "neq(nil)")
        },
        ConformanceCheck("query: booleans are predicates, and NOT of unknown stays unknown") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.where { $0.isPinned }, [1, 4, 6], "a Bool column as the filter")
            try await expectIDs(store, Note.where { !$0.isPinned }, [2, 3, 5, 7, 8], "NOT a Bool column")
            try await expectIDs(store, Note.where { $0.isArchived }, [3, 6], "an optional Bool column")
            try await expectIDs(store, Note.where { !$0.isArchived }, [1, 4, 7], "NOT of an optional Bool leaves NULLs out")
            try await expectIDs(store, Note.where { $0.isPinned && $0.isArchived }, [6], "AND")
            try await expectIDs(store, Note.where { $0.isPinned || $0.isArchived }, [1, 3, 4, 6], "OR")
            try await expectIDs(store, Note.where { $0.isArchived.eq(false) || $0.rank.eq(5) }, [1, 4, 7, 8], "OR with eq")
            try await expectIDs(store, Note.where { !($0.rank > 1) }, [3, 7], "NOT of a comparison with NULLs")
            try await expectIDs(store, Note.where { $0.isPinned }.where { $0.rank.eq(2) }, [1, 6], "two wheres both hold")
            try await expectIDs(store, Note.where { QueryPredicate.never || $0.isPinned.eq(true) }, [1, 4, 6], "never OR")
        },
        ConformanceCheck("query: text compares and orders by code point, whatever the collation") { context in
            let store = try await notes(context)
            let expected = Note.samples.sorted { codePointLess($0.title, $1.title) }.map(\.id)
            try await expectIDs(store, Note.order { $0.title.ascending() }, expected, "titles in code-point order")
            try await expectIDs(store, Note.order { $0.title.descending() }, expected.reversed(), "titles in reverse code-point order")
            try await expectIDs(store, Note.where { $0.title > "a" }, Note.samples.filter { codePointLess("a", $0.title) }.map(\.id), "title > 'a'")
            try await expectIDs(store, Note.where { $0.title < "B" }, Note.samples.filter { codePointLess($0.title, "B") }.map(\.id), "title < 'B'")
            try await expectIDs(store, Note.where { $0.title.eq("apple") }, [1], "equality is case-sensitive")
            try await expectIDs(store, Note.where { $0.title.folded.eq("apple") }, [1, 2], "folded equality ignores A–Z case")
            try await expectIDs(store, Note.where { $0.title.folded.eq("éclair") }, [5], "folding leaves É alone")
            let folded = Note.samples.sorted {
                let (a, b) = (asciiLowercased($0.title), asciiLowercased($1.title))
                return a == b ? $0.id < $1.id : codePointLess(a, b)
            }.map(\.id)
            try await expectIDs(store, Note.order { $0.title.folded.ascending() }, folded, "folded order, ties by id")
            let titles = try await store.read { db in
                (try db.fetchOne(Note.all.select { $0.title.min() }), try db.fetchOne(Note.all.select { $0.title.max() }))
            }
            try expectEqual(titles.0, "", "min(title) by code point")
            try expectEqual(titles.1, "éclair", "max(title) by code point")
        },
        ConformanceCheck("query: contains, hasPrefix and hasSuffix match %, _ and \\ literally") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.where { $0.body.contains("%") }, [3], "contains %")
            try await expectIDs(store, Note.where { $0.body.contains("_") }, [4], "contains _")
            try await expectIDs(store, Note.where { $0.body.contains("\\") }, [5], "contains a backslash")
            try await expectIDs(store, Note.where { $0.title.contains("%b_c\\") }, [8], "contains all three")
            try await expectIDs(store, Note.where { $0.title.contains("%b_c\\", caseInsensitive: true) }, [8], "all three, case-insensitive")
            try await expectIDs(store, Note.where { $0.body.hasPrefix("100%") }, [3], "hasPrefix 100%")
            try await expectIDs(store, Note.where { $0.body.hasPrefix("a_") }, [4], "hasPrefix a_")
            try await expectIDs(store, Note.where { $0.body.hasSuffix("\\file") }, [5], "hasSuffix \\file")
            try await expectIDs(store, Note.where { $0.body.hasSuffix("_b", caseInsensitive: true) }, [4], "hasSuffix _b, case-insensitive")
            try await expectIDs(store, Note.where { $0.title.contains("pp") }, [1, 2], "contains pp")
            try await expectIDs(store, Note.where { $0.title.contains("P") }, [], "contains is case-sensitive")
            try await expectIDs(store, Note.where { $0.title.contains("P", caseInsensitive: true) }, [1, 2], "caseInsensitive contains")
            try await expectIDs(store, Note.where { $0.title.hasPrefix("éc", caseInsensitive: true) }, [5], "É and é differ even case-insensitively")
            try await expectIDs(store, Note.where { $0.body.contains("") }, [1, 3, 4, 5, 6, 7, 8], "every text contains the empty string; NULL does not")
            try await expectIDs(store, Note.where { !$0.body.contains("") }, [], "NOT contains the empty string: NULL stays unknown")
            try await expectIDs(store, Note.where { $0.body.hasSuffix("e\u{301}") }, [8], "a suffix of two code points")
            // A computed operand holding a bound value, which a dialect may write twice or after the needle.
            func containsScalars(_ text: String?, _ needle: String) -> Bool {
                guard let text else { return false }
                let (t, n) = (Array(text.unicodeScalars), Array(needle.unicodeScalars))
                return n.count <= t.count && (0...(t.count - n.count)).contains { Array(t[$0..<($0 + n.count)]) == n }
            }
            try await expectIDs(store, Note.where { ($0.body + "~").contains("") }, Note.samples.filter { $0.body != nil }.map(\.id),
                                "a computed text contains the empty string: its bound value written twice")
            try await expectIDs(store, Note.where { ($0.body + "~").contains("e~") }, Note.samples.filter { containsScalars($0.body.map { $0 + "~" }, "e~") }.map(\.id),
                                "a computed text contains a needle bound after its own value")
            try await expectIDs(store, Note.where { ("~" + $0.body).hasPrefix("~a") }, Note.samples.filter { $0.body.map { $0.unicodeScalars.first == "a" } == true }.map(\.id),
                                "a prefix of a computed text")
            try await expectIDs(store, Note.where { $0.title.hasSuffix("apple and more") }, [], "a suffix longer than the text")
        },
        ConformanceCheck("query: a calendar day is bounded in Swift, whatever the session's zone") { context in
            let store = try await context.makeStore()
            // 2026-03-08 is 23 hours long in Los Angeles: 08:00 UTC to 07:00 UTC the next day.
            let zone = TimeZone(identifier: "America/Los_Angeles") ?? .gmt
            let midnight = Date(timeIntervalSince1970: 1_772_956_800) // 2026-03-08T08:00:00Z
            let instants = [-1, 0, 82_799, 82_800, 86_399].map { midnight.addingTimeInterval(TimeInterval($0)) }
            try await store.write { db in
                try Note.createTable(db)
                try db.insert(contentsOf: instants.enumerated().map {
                    Note(id: Int64($0.offset + 1), title: "n", isPinned: false, due: $0.element)
                })
            }
            try await expectIDs(store, Note.where { $0.due.isInDay(containing: midnight.addingTimeInterval(3_600), in: zone) },
                                [2, 3], "the 23-hour day")
            try await expectIDs(store, Note.where { $0.due.isInDay(containing: midnight, in: .gmt) }, [1, 2], "the UTC day of 08:00Z")
        },
        ConformanceCheck("query: length counts code points") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.where { $0.body.length.eq(2) }, [8], "e + combining accent is 2")
            try await expectIDs(store, Note.where { $0.title.length.eq(6) }, [3, 4, 5], "É is one")
            try await expectIDs(store, Note.where { $0.title.length.eq(0) }, [7], "the empty title")
        },
        ConformanceCheck("query: every ordering states where NULLs go, and the primary key ends it") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.order { $0.rank.ascending() }, [7, 3, 1, 6, 4, 8, 2, 5], "rank ascending, NULLs last")
            try await expectIDs(store, Note.order { $0.rank.ascending(nulls: .first) }, [2, 5, 7, 3, 1, 6, 4, 8], "rank ascending, NULLs first")
            try await expectIDs(store, Note.order { $0.rank.descending() }, [8, 4, 1, 6, 3, 7, 2, 5], "rank descending, NULLs last, ties by id")
            try await expectIDs(store, Note.order { $0.rank.descending(nulls: .first) }, [2, 5, 8, 4, 1, 6, 3, 7], "rank descending, NULLs first")
            try await expectIDs(store, Note.order { [$0.isPinned.descending(), $0.score.ascending()] }, [4, 1, 6, 3, 5, 8, 7, 2], "two terms, then id")
            try await expectIDs(store, Note.all, [1, 2, 3, 4, 5, 6, 7, 8], "no order: the primary key")
            try await expectIDs(store, Note.order { $0.due.ascending() }, [8, 3, 1, 7, 4, 6, 2, 5], "dates as instants, a microsecond apart")
        },
        ConformanceCheck("query: a bare expression in order means ascending with NULLs last") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.order { $0.rank }, [7, 3, 1, 6, 4, 8, 2, 5], "order { rank }")
            try await expectIDs(store, Note.order { [$0.rank] }, [7, 3, 1, 6, 4, 8, 2, 5], "order { [rank] }")
            try await expectIDs(store, Note.order { [$0.isPinned.descending(), $0.score] }, [4, 1, 6, 3, 5, 8, 7, 2], "a bare term beside an explicit one")
            try await expectIDs(store, Note.all.order { $0.rank }.limit(3), [7, 3, 1], "on a query")
        },
        ConformanceCheck("query: in and notIn, with empty lists") { context in
            let store = try await notes(context)
            try await expectIDs(store, Note.where { $0.rank.in([1, 5, 9]) }, [3, 8], "rank IN (1, 5, 9)")
            try await expectIDs(store, Note.where { $0.rank.notIn([1, 5]) }, [1, 4, 6, 7], "rank NOT IN (1, 5): NULLs left out")
            try await expectIDs(store, Note.where { $0.rank.in([]) }, [], "IN () is false")
            try await expectIDs(store, Note.where { $0.rank.notIn([]) }, [1, 2, 3, 4, 5, 6, 7, 8], "NOT IN () is true, NULLs included")
            try await expectIDs(store, Note.where { $0.title.in(["apple", "ÉCLAIR", ""]) }, [1, 7], "text IN is case-sensitive")
        },
        ConformanceCheck("query: limit and offset page through the total order") { context in
            let store = try await notes(context)
            let query = Note.order { $0.rank.ascending() }
            try await expectIDs(store, query.limit(3), [7, 3, 1], "the first page")
            try await expectIDs(store, query.limit(3, offset: 3), [6, 4, 8], "the second page")
            try await expectIDs(store, query.offset(6), [2, 5], "an offset alone")
            try await expectIDs(store, query.limit(0), [], "limit 0")
            try await expectError(.misuse, "a negative limit") {
                try await store.read { db in try db.fetchAll(Note.all.limit(-1)) }
            }
            let counts = try await store.read { db in
                (try db.fetchCount(Note.all), try db.fetchCount(Note.where { $0.isPinned }), try db.fetchCount(query.limit(3, offset: 6)))
            }
            try expectEqual(counts.0, 8, "count of all")
            try expectEqual(counts.1, 3, "count of pinned")
            try expectEqual(counts.2, 2, "count of a last page")
        },
        ConformanceCheck("query: exists, fetchOne and fetch by keys") { context in
            let store = try await notes(context)
            let (yes, no, one, keyed) = try await store.read { db in
                (try db.exists(Note.where { $0.title.eq("zebra") }), try db.exists(Note.where { $0.title.eq("zebr") }),
                 try db.fetchOne(Note.where { $0.title.eq("zebra") }), try db.fetchAll(Note.self, ids: [8, 1, 99, 4]))
            }
            try expectEqual(yes, true, "exists for zebra")
            try expectEqual(no, false, "exists for zebr")
            try expectEqual(one, Note.samples[5], "fetchOne")
            try expectEqual(keyed.map(\.id), [1, 4, 8], "fetch by keys, in key order, missing keys left out")
            try await expectError(.tooManyRows, "fetchOne of two rows") {
                try await store.read { db in try db.fetchOne(Note.where { $0.isPinned }) }
            }
        },
        ConformanceCheck("query: update and delete by predicate and by keys change exactly the rows selected") { context in
            let store = try await notes(context)
            let changed = try await store.write { db in
                try db.update(Note.where { $0.rank.isNull() }) { [$0.rank.to(-1), $0.body.to("was null")] }
            }
            try expectEqual(changed, 2, "rows updated")
            try await expectIDs(store, Note.where { $0.rank.eq(-1) && $0.body.eq("was null") }, [2, 5], "updated rows")
            let copied = try await store.write { db in try db.update(Note.where { $0.id.eq(1) }) { [$0.score.to(nil), $0.body.to($0.title)] } }
            try expectEqual(copied, 1, "rows updated from a column")
            let first = try await store.read { db in try db.fetchOne(Note.where { $0.id.eq(1) }) }
            try expectEqual(first?.body, "apple", "body set from title")
            try expectEqual(first?.score, nil, "score set to NULL")
            let deleted = try await store.write { db in try db.delete(Note.where { $0.title.folded.hasPrefix("a") }) }
            try expectEqual(deleted, 3, "rows deleted by predicate")
            let byKey = try await store.write { db in try db.delete(Note.self, ids: [3, 4, 100]) }
            try expectEqual(byKey, 2, "rows deleted by key")
            try await expectIDs(store, Note.all, [5, 6, 7], "rows left")
            try await expectError(.misuse, "a delete with a limit") {
                try await store.write { db in try db.delete(Note.all.limit(1)) }
            }
            try await expectIDs(store, Note.all, [5, 6, 7], "nothing deleted by the refused statement")
        },
        ConformanceCheck("query: aggregates give the same types and values on every engine") { context in
            let store = try await notes(context)
            let results = try await store.read { db in
                (try db.fetchOne(Note.all.select { _ in Aggregates.countAll() }),
                 try db.fetchOne(Note.all.select { $0.rank.count() }),
                 try db.fetchOne(Note.all.select { Aggregates.count(where: $0.isPinned) }),
                 try db.fetchOne(Note.all.select { $0.rank.sum() }),
                 try db.fetchOne(Note.where { $0.rank.isNull() }.select { $0.rank.sum() }),
                 try db.fetchOne(Note.all.select { $0.score.sum() }),
                 try db.fetchOne(Note.all.select { $0.rank.average() }),
                 try db.fetchOne(Note.all.select { $0.due.max() }))
            }
            try expectEqual(results.0, 8, "count(*)")
            try expectEqual(results.1, 6, "count(rank)")
            try expectEqual(results.2, 3, "count of pinned")
            try expectEqual(results.3, Optional(Optional(13)), "sum(rank)")
            try expectEqual(results.4, Optional(Optional<Int>.none), "sum of no values is NULL")
            try expectEqual(results.5, Optional(Optional(15.25)), "sum(score)")
            try expectEqual(results.6, Optional(Optional(13.0 / 6.0)), "avg(rank) as a Double")
            try expectEqual(results.7, Optional(Note.samples[5].due), "max(due)")
        },
        ConformanceCheck("query: an integer sum past 64 bits is an error, never a wrapped or rounded number") { context in
            let store = try await notes(context)
            try await store.write { db in
                try db.update(Note.where { $0.id.in([1, 3]) }) { [$0.rank.to(Int.max)] }
            }
            try await expectError(.encoding, "sum past Int64.max") {
                try await store.read { db in try db.fetchOne(Note.all.select { $0.rank.sum() }) }
            }
        },
        ConformanceCheck("query: an integer sum is exact whatever the running total, so the rows' order cannot decide") { context in
            let store = try await notes(context)
            try await store.write { db in
                try db.update(Note.all) { [$0.rank.to(nil)] }
                // Summed in id order, the running total leaves 64 bits after the second row.
                try db.update(Note.where { $0.id.in([1, 2]) }) { [$0.rank.to(Int.max)] }
                try db.update(Note.where { $0.id.eq(3) }) { [$0.rank.to(Int.min + 1)] }
                try db.update(Note.where { $0.id.eq(4) }) { [$0.rank.to(-5)] }
            }
            let sums = try await store.read { db in
                (try db.fetchOne(Note.all.select { $0.rank.sum() }),
                 try db.fetchAll(Note.all.select { ($0.isPinned, $0.rank.sum()) }.group { $0.isPinned }))
            }
            try expectEqual(sums.0, Optional(Optional(Int.max - 5)), "max + max + (min + 1) - 5")
            try expectEqual(sums.1.map(\.0), [false, true], "groups")
            try expectEqual(sums.1.map(\.1), [0, Int.max - 5], "sums per group: max + (min + 1), and max - 5")
        },
        ConformanceCheck("query: an average is the values summed as doubles and divided once, to the last bit") { context in
            let store = try await notes(context)
            try await store.write { db in
                try db.update(Note.where { $0.id.eq(1) }) { [$0.rank.to(39_998)] }
                try db.update(Note.where { $0.id.in([3, 4]) }) { [$0.rank.to(1)] }
            }
            let mean = try await store.read { db in try db.fetchOne(Note.where { $0.id.in([1, 3, 4]) }.select { $0.rank.average() }) }
            // 40000 / 3 rounded once; a decimal mean rounded to 16 digits first ends in ...332.
            try expectEqual(mean, Optional(Optional(40_000.0 / 3.0)), "avg of 39998, 1, 1")
        },
        ConformanceCheck("query: the least and greatest of booleans: false before true, NULL when there are none") { context in
            let store = try await notes(context)
            let extremes = try await store.read { db in
                (try db.fetchOne(Note.all.select { $0.isPinned.min() }),
                 try db.fetchOne(Note.all.select { $0.isPinned.max() }),
                 try db.fetchOne(Note.where { $0.isPinned }.select { $0.isPinned.min() }),
                 try db.fetchOne(Note.where { $0.isArchived.isNull() }.select { $0.isArchived.max() }),
                 try db.fetchAll(Note.all.select { ($0.isPinned, ($0.rank > 1).min()) }.group { $0.isPinned }))
            }
            try expectEqual(extremes.0, Optional(Optional(false)), "min(isPinned)")
            try expectEqual(extremes.1, Optional(Optional(true)), "max(isPinned)")
            try expectEqual(extremes.2, Optional(Optional(true)), "min over pinned notes")
            try expectEqual(extremes.3, Optional(Optional<Bool>.none), "max of no values is NULL")
            try expectEqual(extremes.4.map(\.1), [false, true], "min of a predicate per group (NULLs left out)")
        },
        ConformanceCheck("query: text groups and finds its extremes by code point, under any column collation") { context in
            let store = try await context.makeStore(Store.Configuration())
            let words = ["a", "A", "b", "B", "a", "é", "É"]
            try await store.write { db in
                // A case-insensitive column where the engine has one.
                let collation = db.dialect.caseFoldingCollation.map { "COLLATE " + db.dialect.quote(identifier: $0) } ?? ""
                try DepotConformance.createTable(db, "words", [("id", .integer, "PRIMARY KEY"), ("word", .text, "NOT NULL \(collation)")])
                try db.insert(contentsOf: words.enumerated().map { Word(id: Int64($0.offset + 1), word: $0.element) })
            }
            let answers = try await store.read { db in
                (try db.fetchAll(Word.all.select { ($0.word, Aggregates.countAll()) }.group { $0.word }),
                 try db.fetchOne(Word.all.select { $0.word.min() }),
                 try db.fetchOne(Word.all.select { $0.word.max() }),
                 try db.fetchAll(Word.where { $0.word.eq("a") }).map(\.id),
                 try db.fetchAll(Word.where { $0.word.in(["b", "é"]) }).map(\.id))
            }
            try expectEqual(answers.0.map(\.0), ["A", "B", "a", "b", "É", "é"], "one group per exact text, in code-point order")
            try expectEqual(answers.0.map(\.1), [1, 1, 2, 1, 1, 1], "rows per group")
            try expectEqual(answers.1, Optional(Optional("A")), "min(word)")
            try expectEqual(answers.2, Optional(Optional("é")), "max(word)")
            try expectEqual(answers.3, [1, 5], "equality is exact")
            try expectEqual(answers.4, [3, 6], "IN is exact")
        },
        ConformanceCheck("query: group by and having, ordered by the group key") { context in
            let store = try await notes(context)
            let groups = try await store.read { db in
                try db.fetchAll(Note.all.select { ($0.isPinned, Aggregates.countAll()) }.group { $0.isPinned })
            }
            try expectEqual(groups.map(\.0), [false, true], "group keys in order")
            try expectEqual(groups.map(\.1), [5, 3], "counts per group")
            let ranks = try await store.read { db in
                try db.fetchAll(Note.where { $0.rank.isNotNull() }.select { ($0.rank, $0.id.count()) }.group { $0.rank }
                    .having { $0.id.count() > 1 })
            }
            try expectEqual(ranks.map(\.0), [2], "the rank held by two notes")
            try expectEqual(ranks.map(\.1), [2], "its count")
            let titles = try await store.read { db in
                try db.fetchAll(Note.where { $0.isPinned }.select { $0.title }.order { $0.title.descending() })
            }
            try expectEqual(titles, ["Éclair", "zebra", "apple"], "one column, in the query's order (É after z)")
        },
        ConformanceCheck("query: a key strategy names the typed columns") { context in
            var configuration = Store.Configuration()
            configuration.encoder.keyStrategy = .snakeCase
            configuration.decoder.keyStrategy = .snakeCase
            let store = try await context.makeStore(configuration)
            try await store.write { db in
                try db.execute("CREATE TABLE \(ident: "notes") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: "title") \(type: .text) NOT NULL, \(ident: "body") \(type: .text), \(ident: "rank") \(type: .integer), \(ident: "score") \(type: .double), \(ident: "is_pinned") \(type: .bool) NOT NULL, \(ident: "is_archived") \(type: .bool), \(ident: "due") \(type: .date))")
                try db.insert(contentsOf: Note.samples)
            }
            try await expectIDs(store, Note.where { $0.isPinned }.order { $0.isArchived.ascending() }, [1, 4, 6], "snake_case columns")
            let changed = try await store.write { db in try db.update(Note.where { $0.isArchived.isNull() }) { [$0.isArchived.to(true)] } }
            try expectEqual(changed, 3, "rows updated through snake_case names")
        },
    ]

    /// A–Z lowered, nothing else: the builder's `folded`.
    static func asciiLowercased(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { ("A"..."Z").contains($0) ? (Unicode.Scalar($0.value + 32) ?? $0) : $0 }))
    }
}

import Depot
import Foundation

/// A record for selections decoded into a `@Columns` type.
@Columns
struct NoteLabel: Codable, Equatable {
    var id: Int64
    var label: String
    var weight: Int?
}

/// The builder's computed expressions: arithmetic, text, CASE, coalesce,
/// NULLIF, and selections of any size.
extension QueryChecks {
    static let expressions: [ConformanceCheck] = [
        ConformanceCheck("query: integer arithmetic is exact, and its overflow is an error, never a float or a wrap", integerArithmetic),
        ConformanceCheck("query: arithmetic or a comparison beside a NULL the query alone decides is NULL, without computing (or overflowing) its other side", knownNull),
        ConformanceCheck("query: division truncates toward zero, a remainder takes the dividend's sign, and a zero divisor is an error", division),
        ConformanceCheck("query: a selected value that can fail is computed only for the rows a page returns, however the engine finds them", pagedOutputs),
        ConformanceCheck("query: an AND or OR computes a part that can fail only when its other parts leave it open (in a condition, a NULL "
                         + "closes an AND), those that cannot fail first, the others left to right, whichever order the engine prefers", connectiveOrder),
        ConformanceCheck("query: coalesce, NULLIF and CASE with NULLs", conditionals),
        ConformanceCheck("query: a computed text compares by code point, whatever the column's collation", computedTextCollation),
        ConformanceCheck("query: text joins and substrings count code points", textPieces),
        ConformanceCheck("query: selections of any size read as tuples, and into a @Columns type", wideSelections),
    ]

    static func integerArithmetic(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let rows = try await store.read { db in
            try db.fetchAll(Note.all.select { ($0.id, $0.rank * 10 + 7, -$0.rank, $0.rank - 1) })
        }
        try expectEqual(rows.map(\.1), Note.samples.map { $0.rank.map { $0 * 10 + 7 } }, "rank * 10 + 7, NULL where rank is")
        try expectEqual(rows.map(\.2), Note.samples.map { $0.rank.map { -$0 } }, "-rank")
        try expectEqual(rows.map(\.3), Note.samples.map { $0.rank.map { $0 - 1 } }, "rank - 1")
        let edges = try await store.read { db in
            try db.fetchOne(Note.where { $0.id.eq(1) }.select { _ in
                (QueryExpression<Int>(Int.max - 1) + 1, QueryExpression<Int>(Int.min + 1) - 1, QueryExpression<Int>(Int.min / 2) * 2)
            })
        }
        try expectEqual(edges?.0, Int.max, "Int.max reached exactly")
        try expectEqual(edges?.1, Int.min, "Int.min reached exactly")
        try expectEqual(edges?.2, Int.min, "Int.min / 2 * 2")
        for (what, expression) in [
            ("Int.max + 1", QueryExpression<Int>(Int.max) + 1), ("Int.min - 1", QueryExpression<Int>(Int.min) - 1),
            ("Int.max * 2", QueryExpression<Int>(Int.max) * 2), ("Int.min * -1", QueryExpression<Int>(Int.min) * -1),
            ("-Int.min", -QueryExpression<Int>(Int.min)), ("Int.min / -1", QueryExpression<Int>(Int.min) / -1),
        ] {
            try await expectError(.encoding, what) {
                try await store.read { db in try db.fetchAll(Note.where { $0.id.eq(1) }.select { _ in expression }) }
            }
        }
        try await expectError(.encoding, "a column past Int.max") {
            try await store.read { db in try db.fetchAll(Note.all.select { $0.rank + Int.max }) }
        }
        try await expectIDs(store, Note.where { $0.rank * 2 > 4 }, [4, 8], "arithmetic in a filter")
        try await expectIDs(store, Note.where { $0.rank.isNotNull() }.order { ($0.rank % 2).descending() },
                            [3, 4, 8, 1, 6, 7], "ordered by a remainder, descending, ties by id")
    }

    static func knownNull(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let cases: [(String, @Sendable (Note.Columns) -> QueryExpression<Int?>)] = [
            ("nil + (rank + Int.max)", { QueryExpression<Int?>(nil) + ($0.rank + Int.max) }),
            ("(rank * Int.max) - nil", { ($0.rank * Int.max) - QueryExpression<Int?>(nil) }),
            ("CASE WHEN id IN [] THEN rank END / (rank - Int.min)", { Case.when($0.id.in([]), then: $0.rank).end() / ($0.rank - Int.min) }),
            ("CASE WHEN NOT id NOT IN [] THEN rank ELSE nil END * (rank * Int.max)",
             { Case.when(!$0.id.notIn([]), then: $0.rank).else(QueryExpression<Int?>(nil)) * ($0.rank * Int.max) }),
        ]
        for (what, expression) in cases {
            let values = try await store.read { db in try db.fetchAll(Note.all.select(expression)) }
            try expectEqual(values, Note.samples.map { _ in nil }, what)
        }
        // A comparison is such an operator too: beside a NULL the query decides it is NULL (no row
        // passes), whatever the other side would have done.
        let comparisons: [(String, @Sendable (Note.Columns) -> QueryExpression<Bool>)] = [
            ("rank * Int.max > nil", { ($0.rank * Int.max) > QueryExpression<Int?>(nil) }),
            ("CASE WHEN id IN [] THEN rank END <= rank + Int.max", { Case.when($0.id.in([]), then: $0.rank).end() <= ($0.rank + Int.max) }),
            ("rank - Int.min eq nil", { ($0.rank - Int.min).eq(QueryExpression<Int?>(nil)) }),
            ("NOT (rank * Int.max < nil)", { !(($0.rank * Int.max) < QueryExpression<Int?>(nil)) }),
        ]
        for (what, predicate) in comparisons {
            let ids = try await store.read { db in try db.fetchAll(Note.where(predicate).select { $0.id }) }
            try expectEqual(ids, [], what)
        }
        // A NULL no row changes, though only the engine sees it (NULLIF of two equal values), and a
        // comparison of two values that decides an OR: the same, however the engine plans.
        let decidedWhenRun = try await store.read { db in
            (try db.fetchAll(Note.where { ($0.rank * Int.max) > QueryExpression<Int>(1).nullIf(1) }).map(\.id),
             try db.fetchAll(Note.where { ($0.rank * Int.max) > QueryExpression<Int?>(0) || QueryExpression<Int>(1) < QueryExpression<Int>(2) }).map(\.id))
        }
        try expectEqual(decidedWhenRun.0, [], "rank * Int.max > NULLIF(1, 1)")
        try expectEqual(decidedWhenRun.1, Note.samples.map(\.id), "rank * Int.max > 0 OR 1 < 2")
        // The same query with a value where the NULL was, and the NULL again: a connection renders a
        // query's shape once, but a NULL the query decides is part of the shape, not a value bound into it.
        for threshold in [0, nil, 0, nil] as [Int?] {
            let query = Note.where { ($0.rank * Int.max) > QueryExpression<Int?>(threshold) }
            if threshold == nil {
                let ids = try await store.read { db in try db.fetchAll(query).map(\.id) }
                try expectEqual(ids, [], "rank * Int.max > nil, after the same query with 0")
            } else {
                try await expectError(.encoding, "rank * Int.max > 0, after the same query with nil") {
                    try await store.read { db in try db.fetchAll(query).map(\.id) }
                }
            }
        }
        // A NULL that comes from a row is no constant: the other side is computed, and its overflow fails.
        try await expectError(.encoding, "NULL rank + (CASE WHEN rank IS NULL THEN Int.max ELSE 0 END + 1)") {
            try await store.read { db in
                try db.fetchAll(Note.where { $0.rank.isNull() }.select { $0.rank + (Case.when($0.rank.isNull(), then: Int.max).else(0) + 1) })
            }
        }
    }

    static func connectiveOrder(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        func sortedIDs(_ query: Query<Note>) async throws -> [Int64] { try await ids(store, query).sorted() }
        // Ranks: 1: 2, 3: 1, 4: 3, 6: 2, 7: 0, 8: 5; NULL for 2 and 5. 10 / 0 fails.
        try expectEqual(try await sortedIDs(Note.where { (10 / $0.rank) > QueryExpression<Int?>(3) && $0.rank.neq(0) }), [1, 3, 6],
                        "10 / rank > 3 AND rank <> 0: the row whose rank is 0 is false without dividing")
        try expectEqual(try await sortedIDs(Note.where { $0.rank.neq(0) && (10 / $0.rank) > QueryExpression<Int?>(3) }), [1, 3, 6],
                        "rank <> 0 AND 10 / rank > 3")
        try expectEqual(try await sortedIDs(Note.where { (10 / $0.rank) > QueryExpression<Int?>(3) || $0.rank.eq(0) }), [1, 3, 6, 7],
                        "10 / rank > 3 OR rank = 0: the row whose rank is 0 is true without dividing")
        try expectEqual(try await sortedIDs(Note.where { $0.rank.eq(0) || (10 / $0.rank) > QueryExpression<Int?>(3) }), [1, 3, 6, 7],
                        "rank = 0 OR 10 / rank > 3")
        // Parts that can fail, left to right: the first (written to cost PostgreSQL's planner more
        // than the second, which it would then compute first) is false for ranks 3 and 5, and the
        // second overflows for both.
        let slowFalse: @Sendable (Note.Columns) -> QueryPredicate = { ((((10 / $0.rank) + 0) - 0) + 0) > QueryExpression<Int?>(3) }
        let overflow: @Sendable (Note.Columns) -> QueryPredicate = { ($0.rank * Int.max) > QueryExpression<Int?>(0) }
        try expectEqual(try await sortedIDs(Note.where { $0.rank >= 3 && slowFalse($0) && overflow($0) }), [],
                        "rank >= 3 AND 10 / rank > 3 AND rank * Int.max > 0: the overflow is never computed")
        try await expectError(.encoding, "rank >= 3 AND rank * Int.max > 0 AND 10 / rank > 3: the overflow comes first") {
            try await store.read { db in try db.fetchAll(Note.where { $0.rank >= 3 && overflow($0) && slowFalse($0) }) }
        }
        try expectEqual(try await sortedIDs(Note.where { $0.rank < 3 || !slowFalse($0) || overflow($0) }), [1, 3, 4, 6, 7, 8],
                        "rank < 3 OR NOT 10 / rank > 3 OR rank * Int.max > 0: the overflow is never computed for a row it could change")
        try await expectError(.encoding, "a safe part that leaves the result open computes the part that fails") {
            try await store.read { db in try db.fetchAll(Note.where { overflow($0) && $0.rank >= 3 }) }
        }
        // Nested: the inner OR can fail, so the outer AND asks its safe part first.
        try expectEqual(try await sortedIDs(Note.where { ($0.rank.eq(0) || (10 / $0.rank) > QueryExpression<Int?>(3)) && $0.isPinned }), [1, 6],
                        "(rank = 0 OR 10 / rank > 3) AND isPinned")
        try expectEqual(try await sortedIDs(Note.where { (10 / $0.rank) > QueryExpression<Int?>(3) && $0.rank.neq(0) && $0.isPinned }), [1, 6],
                        "10 / rank > 3 AND rank <> 0 AND isPinned")
        // In a condition only truth counts: a NULL part of an AND decides it as false does. Elsewhere
        // (a selected Boolean, under NOT) NULL AND x is NULL or false by x, so x is computed.
        // isArchived: NULL for 2, 5 and 8 (rank 5, which overflows); true for 3 (rank 1) and 6 (rank 2).
        try expectEqual(try await sortedIDs(Note.where { $0.isArchived && $0.id.neq(6) && overflow($0) }), [3],
                        "WHERE isArchived AND id <> 6 AND rank * Int.max > 0: a NULL isArchived leaves the row out without multiplying")
        let cased = try await store.read { db in
            try db.fetchAll(Note.where { $0.id.eq(8) || $0.id.eq(7) }.select { Case.when($0.isArchived && overflow($0), then: QueryExpression<Int>(1)).else(0) })
        }
        try expectEqual(cased, [0, 0], "CASE WHEN isArchived AND rank * Int.max > 0 THEN 1 ELSE 0 for a NULL and a false isArchived")
        let selectedFalse = try await store.read { db in try db.fetchAll(Note.where { $0.id.eq(7) }.select { $0.isArchived && overflow($0) }) }
        try expectEqual(selectedFalse, [false], "a false isArchived AND rank * Int.max > 0, selected")
        try await expectError(.encoding, "a NULL isArchived AND rank * Int.max > 0, selected: the product decides between NULL and false") {
            try await store.read { db in try db.fetchAll(Note.where { $0.id.eq(8) }.select { $0.isArchived && overflow($0) }) }
        }
        try await expectError(.encoding, "NOT (isArchived AND rank * Int.max > 0): NOT tells NULL from false") {
            try await store.read { db in try db.fetchAll(Note.where { !($0.isArchived && overflow($0)) }) }
        }
    }

    static func pagedOutputs(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        // Ranks by id: 2, NULL, 1, 3, NULL, 2, 0, 5. 10 / 0 fails.
        func tenOver(_ query: Query<Note>) async throws -> [Int?] {
            try await store.read { db in try db.fetchAll(query.select { 10 / $0.rank }) }
        }
        // In id order an engine may read by the key and skip what the offset leaves out, or compute first.
        try expectEqual(try await tenOver(Note.order { $0.id }.limit(1, offset: 7)), [2], "10 / rank of the eighth note: the seventh's 0 is skipped")
        try expectEqual(try await tenOver(Note.order { $0.id }.limit(2, offset: 7)), [2], "a page past the end")
        try expectEqual(try await tenOver(Note.order { $0.id }.limit(3)), [5, nil, 10], "the first three notes")
        // Sorted by what no index holds: every row is sorted, and only the page's are divided.
        try expectEqual(try await tenOver(Note.order { $0.title.descending() }.limit(2)), [nil, 3], "the two last titles (éclair, Éclair)")
        try await expectError(.encoding, "ordered by 10 / rank: every row's is computed to sort it") {
            _ = try await tenOver(Note.order { 10 / $0.rank }.limit(1))
        }
        let groups = try await store.read { db in
            (try db.fetchAll(Note.where { $0.rank.isNotNull() && $0.rank.neq(0) }.order { $0.rank.descending() }.limit(2, offset: 1)
                .select { ($0.rank, 10 / $0.rank.min()) }.group { $0.rank }),
             try db.fetchAll(Note.where { $0.rank.isNotNull() && $0.rank.neq(0) }.limit(2).select { ($0.title, 100 / $0.rank.max()) }.group { $0.title }))
        }
        try expectEqual(groups.0.map { "\($0.0.map(String.init) ?? "NULL") \($0.1.map(String.init) ?? "NULL")" }, ["3 3", "2 5"],
                        "a page of groups by rank, descending, with 10 / min(rank)")
        try expectEqual(groups.1.map { "\($0.0) \($0.1.map(String.init) ?? "NULL")" }, ["a%b_c\\d 20", "apple 50"],
                        "a page of groups by title, in code-point order, with 100 / max(rank)")
        // A join's page likewise, its outputs over columns of both tables, in an order of each.
        let joined = try await store.read { db in
            (try db.fetchAll(Note.all.join(Note.self) { a, b in a.id.eq(b.id) }.select { a, b in (a.id, 10 / b.rank) }.order { a, _ in [a.id] }
                .limit(1, offset: 7)),
             try db.fetchAll(Note.all.join(Note.self) { a, b in a.rank.eq(b.rank) && a.id.neq(b.id) }
                .select { a, b in (a.title, b.id, 100 / (a.rank - b.rank + 1)) }.order { a, b in [a.title.descending(), b.id.descending()] }.limit(2)))
        }
        try expectEqual(joined.0.map { "\($0.0) \($0.1.map(String.init) ?? "NULL")" }, ["8 2"], "the eighth pair of a join by id: the seventh's 0 is skipped")
        try expectEqual(joined.1.map { "\($0.0) \($0.1) \($0.2.map(String.init) ?? "NULL")" }, ["zebra 1 100", "apple 6 100"],
                        "pairs of notes of one rank, by title descending")
        try await expectError(.encoding, "the seventh pair's 10 / rank") {
            _ = try await store.read { db in
                try db.fetchAll(Note.all.join(Note.self) { a, b in a.id.eq(b.id) }.select { a, b in (a.id, 10 / b.rank) }.order { a, _ in [a.id] }
                    .limit(1, offset: 6))
            }
        }
        // Groups are another matter: every group's values are computed, as on every engine.
        try await expectError(.encoding, "10 / min(rank) of the second group by rank: the first's (0) is computed too") {
            _ = try await store.read { db in
                try db.fetchAll(Note.order { $0.rank }.limit(1, offset: 1).select { ($0.rank, 10 / $0.rank.min()) }.group { $0.rank })
            }
        }
        let joinedGroups = try await store.read { db in
            try db.fetchAll(Note.all.join(Note.self) { a, b in a.id.eq(b.id) }.select { a, _ in (a.isPinned, 100 / a.rank.max()) }
                .group { a, _ in a.isPinned }.order { a, _ in [a.isPinned.descending()] }.limit(1))
        }
        try expectEqual(joinedGroups.map { "\($0.0) \($0.1.map(String.init) ?? "NULL")" }, ["true 33"], "the first group of a join by isPinned, descending")
        try await expectError(.encoding, "10 / min(rank) of the second group of a join by rank: the first's (0) is computed too") {
            _ = try await store.read { db in
                try db.fetchAll(Note.all.join(Note.self) { a, b in a.id.eq(b.id) }.select { a, _ in (a.rank, 10 / a.rank.min()) }
                    .group { a, _ in a.rank }.order { a, _ in [a.rank] }.limit(1, offset: 1))
            }
        }
        try await expectError(.encoding, "the seventh note's 10 / rank") {
            _ = try await tenOver(Note.order { $0.id }.limit(1, offset: 6))
        }
    }

    static func division(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let cases: [(String, QueryExpression<Int>, Int)] = [
            ("-7 / 2", QueryExpression<Int>(-7) / 2, -3), ("7 / -2", QueryExpression<Int>(7) / -2, -3),
            ("-7 % 2", QueryExpression<Int>(-7) % 2, -1), ("7 % -2", QueryExpression<Int>(7) % -2, 1),
            ("Int.min % -1", QueryExpression<Int>(Int.min) % -1, 0), ("6 / 3", QueryExpression<Int>(6) / 3, 2),
        ]
        for (what, expression, expected) in cases {
            let answer = try await store.read { db in try db.fetchOne(Note.where { $0.id.eq(1) }.select { _ in expression }) }
            try expectEqual(answer, expected, what)
        }
        let failing: [(String, QueryExpression<Int>)] = [("1 / 0", QueryExpression<Int>(1) / 0), ("1 % 0", QueryExpression<Int>(1) % 0), ("0 / 0", QueryExpression<Int>(0) / 0)]
        for (what, expression) in failing {
            try await expectError(.encoding, what) {
                try await store.read { db in try db.fetchAll(Note.where { $0.id.eq(1) }.select { _ in expression }) }
            }
        }
        // The divisor is computed even when the dividend is NULL: its own zero divisor fails.
        try await expectError(.encoding, "NULL rank % (1 / a zero computed per row)") {
            try await store.read { db in
                try db.fetchAll(Note.where { $0.rank.isNull() }.select { $0.rank % (1 / Case.when($0.rank.isNull(), then: QueryExpression<Int?>(0)).else(0)) })
            }
        }
        try await expectError(.encoding, "a column divided by a zero column") {
            try await store.read { db in try db.fetchAll(Note.all.select { 1 / $0.rank }) }
        }
        let nulls = try await store.read { db in
            try db.fetchOne(Note.where { $0.id.eq(2) }.select { ($0.rank / 0, $0.rank % 0) })
        }
        try expect(nulls.map { $0.0 == nil && $0.1 == nil } == true, "NULL / 0 is NULL, not an error: \(String(describing: nulls))")
    }

    static func conditionals(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let rows = try await store.read { db in
            try db.fetchAll(Note.all.select {
                ($0.rank ?? -1, $0.body ?? $0.title, $0.rank.nullIf(2),
                 Case.when($0.rank > 2, then: "high").when($0.rank > 0, then: "low").else("none"),
                 Case.when($0.isArchived, then: $0.id).end())
            })
        }
        try expectEqual(rows.map(\.0), Note.samples.map { $0.rank ?? -1 }, "rank ?? -1")
        try expectEqual(rows.map(\.1), Note.samples.map { $0.body ?? $0.title }, "body ?? title")
        try expectEqual(rows.map(\.2), Note.samples.map { $0.rank == 2 ? nil : $0.rank }, "NULLIF(rank, 2)")
        try expectEqual(rows.map(\.3), Note.samples.map { note in note.rank.map { $0 > 2 ? "high" : $0 > 0 ? "low" : "none" } ?? "none" },
                        "CASE: a NULL condition is not true")
        try expectEqual(rows.map(\.4), Note.samples.map { $0.isArchived == true ? $0.id : nil }, "CASE without ELSE is NULL")
        try await expectIDs(store, Note.order { ($0.rank ?? 100).ascending() }, [7, 3, 1, 6, 4, 8, 2, 5], "ordered by a coalesce")
        try await expectIDs(store, Note.where { ($0.isArchived ?? true) && $0.rank.isNotNull() }, [3, 6, 8], "a coalesced predicate")
    }

    static func computedTextCollation(_ context: ConformanceContext) async throws {
        let store = try await context.makeStore(Store.Configuration())
        try await store.write { db in
            let collation = db.dialect.caseFoldingCollation.map { "COLLATE " + db.dialect.quote(identifier: $0) } ?? ""
            try DepotConformance.createTable(db, "words", [("id", .integer, "PRIMARY KEY"), ("word", .text, "NOT NULL \(collation)")])
            try db.insert(contentsOf: ["a", "A", "b", "É"].enumerated().map { Word(id: Int64($0.offset + 1), word: $0.element) })
        }
        let answers = try await store.read { db in
            (try db.fetchAll(Word.all.select { $0.word.nullIf("a") }),
             try db.fetchAll(Word.where { ($0.word + "x").eq("ax") }).map(\.id),
             try db.fetchAll(Word.order { ($0.word + "").descending() }).map(\.id))
        }
        try expectEqual(answers.0, [nil, "A", "b", "É"], "NULLIF is case-sensitive")
        try expectEqual(answers.1, [1], "a joined text's equality is case-sensitive")
        try expectEqual(answers.2, [4, 3, 1, 2], "a joined text orders by code point")
    }

    static func textPieces(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let rows = try await store.read { db in
            try db.fetchAll(Note.all.select { ($0.title + "|" + $0.body, $0.title.substring(from: 1, count: 3), $0.body.substring(from: 0, count: 1)) })
        }
        func codePoints(_ text: String, _ offset: Int, _ count: Int) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(offset).prefix(count)))
        }
        try expectEqual(rows.map(\.0), Note.samples.map { note in note.body.map { note.title + "|" + $0 } }, "title | body, NULL where body is")
        try expectEqual(rows.map(\.1), Note.samples.map { codePoints($0.title, 1, 3) }, "3 code points from the second")
        try expectEqual(rows.map(\.2), Note.samples.map { $0.body.map { codePoints($0, 0, 1) } }, "the first code point (e of e + accent)")
        let edges = try await store.read { db in
            try db.fetchOne(Note.where { $0.id.eq(1) }.select { _ in
                (QueryExpression<String>("💡e\u{301}x").substring(from: 1, count: 2), QueryExpression<String>("abc").substring(from: 5, count: 2),
                 QueryExpression<String>("abc").substring(from: 0, count: 0), QueryExpression<String>("abc").substring(from: 1, count: Int.max),
                 QueryExpression<String>("abc").substring(from: Int.max, count: 1))
            })
        }
        try expect(edges.map { [$0.0, $0.1, $0.2, $0.3, $0.4] } == ["e\u{301}", "", "", "bc", ""], "substring edges: \(String(describing: edges))")
        try await expectError(.misuse, "a negative offset") {
            try await store.read { db in try db.fetchAll(Note.all.select { $0.title.substring(from: -1, count: 2) }) }
        }
    }

    static func wideSelections(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let (wide, labels, grouped) = try await store.read { db in
            (try db.fetchAll(Note.where { $0.id <= 2 }.select { ($0.id, $0.title, $0.body, $0.rank, $0.score, $0.isPinned, $0.isArchived, $0.due) }),
             try db.fetchAll(Note.where { $0.id <= 3 }.select(into: NoteLabel.self) { ($0.id, $0.title + "!", $0.rank * 2) }),
             try db.fetchAll(Note.all.select(into: NoteLabel.self) { _ in (Aggregates.countAll(), QueryExpression<String>("all"), Note.columns.rank.max()) }))
        }
        try expectEqual(wide.count, 2, "two rows")
        let first = Note.samples[0], second = Note.samples[1]
        // Tuples of eight have no ==: compared by their descriptions.
        try expect("\(wide[0])" == "\((first.id, first.title, first.body, first.rank, first.score, first.isPinned, first.isArchived, first.due))",
                   "eight outputs of every type: \(wide[0])")
        try expect("\(wide[1])" == "\((second.id, second.title, second.body, second.rank, second.score, second.isPinned, second.isArchived, second.due))",
                   "eight outputs with NULLs: \(wide[1])")
        try expectEqual(labels, [NoteLabel(id: 1, label: "apple!", weight: 4), NoteLabel(id: 2, label: "Apple!", weight: nil),
                                 NoteLabel(id: 3, label: "banana!", weight: 2)], "decoded into NoteLabel by position")
        try expectEqual(grouped, [NoteLabel(id: 8, label: "all", weight: 5)], "aggregates into NoteLabel")
        try await expectError(.misuse, "two outputs for three columns") {
            try await store.read { db in try db.fetchAll(Note.all.select(into: NoteLabel.self) { ($0.id, $0.title) }) }
        }
    }
}

import Depot
import Foundation

/// A record with two indexed texts.
@Columns
struct Article: Record, Equatable {
    static var tableName: String { "articles" }
    var id: Int64?
    var title: String
    var body: String

    /// Matches in the title weigh three times those in the body.
    static let searchIndex = SearchIndex<Article>(tableName: "articleSearch", fields: [SearchIndex.Field("title", weight: 3), "body"])
}

/// A record keyed by a UUID, which engines store and read back in different forms.
@Columns
struct Sticker: Record, Equatable {
    static var tableName: String { "stickers" }
    var id: UUID
    var text: String

    static let searchIndex = SearchIndex<Sticker>(tableName: "stickerSearch", fields: ["text"])
}

/// A record whose text primary key is named like a column of the index's own table.
@Columns
struct Memo: Record, Equatable {
    static var tableName: String { "memos" }
    static var primaryKey: [String] { ["key"] }
    var key: String
    var text: String

    static let searchIndex = SearchIndex<Memo>(tableName: "memoSearch", fields: ["text"])
}

/// Full-text search: the same tokens, matches and ranks on every engine.
extension QueryChecks {
    static let search: [ConformanceCheck] = [
        ConformanceCheck("search: terms match tokens folded for case, diacritics and compatibility forms; punctuation and emoji separate", searchFolding),
        ConformanceCheck("search: all terms, any term and prefixes; a query without terms matches nothing", searchMatching),
        ConformanceCheck("search: the rank sums field weight times occurrences of matching tokens, ties by key", searchRanking),
        ConformanceCheck("search: updating replaces a record's tokens, deleting the record removes them, rebuilding refills", searchMaintenance),
        ConformanceCheck("search: a text key named like the index's own columns", searchTextKeys),
        ConformanceCheck("search: indexing many records at once gives each its tokens; a key given twice keeps its last texts; keys Swift calls equal stay two", searchManyAtOnce),
        ConformanceCheck("search: indexing again keeps the tokens of records whose texts did not change, and replaces changed, emptied or damaged ones",
                         searchIndexingAgain),
        ConformanceCheck("search: a weight out of range or a wrong number of texts is misuse", searchMisuse),
    ]

    static let articles: [Article] = [
        Article(id: 1, title: "Café crème", body: "Fresh milk, oat-milk and MILK."),
        Article(id: 2, title: "CAFE NOIR", body: "Straße 3.14 — naïve ﬁne 👍🏽 emoji😀test"),
        Article(id: 3, title: "milkshake", body: "Under_score C:\\temp 100% x²"),
        Article(id: 4, title: "Über alles", body: ""),
        Article(id: 5, title: "Long", body: String(repeating: "a", count: SearchTokenizer.maximumTokenLength + 1) + " short"),
    ]

    static func articleStore(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore(Store.Configuration())
        try await store.write { db in
            try DepotConformance.createTable(db, "articles", [("id", .autoIncrementingPrimaryKey, ""), ("title", .text, "NOT NULL"),
                                                              ("body", .text, "NOT NULL")])
            try db.createSearchIndex(Article.searchIndex, keyType: .autoIncrementingPrimaryKey)
            for article in articles {
                let stored = try db.insert(article)
                try db.updateSearchIndex(Article.searchIndex, key: stored.id, texts: [stored.title, stored.body])
            }
        }
        return store
    }

    static func found(_ store: Store, _ query: SearchQuery) async throws -> [Int64] {
        try await store.read { db in
            try db.fetchAll(Article.all.matching(query, in: Article.searchIndex)).compactMap(\.id)
        }
    }

    static func searchFolding(_ context: ConformanceContext) async throws {
        let store = try await articleStore(context)
        let cases: [(String, [Int64])] = [
            ("cafe", [1, 2]), ("CAFÉ", [1, 2]), ("crème", [1]), ("CREME", [1]),
            ("STRASSE", [2]), ("straße", [2]), ("naive", [2]), ("fine", [2]), ("ﬁne", [2]),
            ("3", [2]), ("14", [2]), ("3.14", [2]), ("emoji", [2]), ("test", [2]),
            ("score", [3]), ("under_score", [3]), ("temp", [3]), ("100", [3]), ("x2", [3]), ("x²", [3]),
            ("uber", [4]), ("ÜBER", [4]), ("short", [5]),
            (String(repeating: "a", count: SearchTokenizer.maximumTokenLength + 1), []),
        ]
        for (text, expected) in cases {
            try expectEqual(try await found(store, SearchQuery(text)), expected, "search for \(text)")
        }
    }

    static func searchMatching(_ context: ConformanceContext) async throws {
        let store = try await articleStore(context)
        try expectEqual(try await found(store, SearchQuery("milk")), [1], "an exact term: milkshake is another token")
        try expectEqual(try await found(store, SearchQuery("milk", prefixes: .lastTerm)), [1, 3], "a prefix")
        try expectEqual(try await found(store, SearchQuery("cafe milk")), [1], "all terms")
        try expectEqual(try await found(store, SearchQuery("cafe milk", matching: .anyTerm)), [1, 2], "any term")
        try expectEqual(try await found(store, SearchQuery("caf mil", prefixes: .lastTerm)), [], "only the last term is a prefix")
        try expectEqual(try await found(store, SearchQuery("caf mil", prefixes: .everyTerm)), [1], "every term a prefix")
        try expectEqual(try await found(store, SearchQuery("mil caf", matching: .anyTerm, prefixes: .everyTerm)), [1, 2, 3], "any prefix")
        try expectEqual(try await found(store, SearchQuery("noir creme", matching: .allTerms)), [], "terms in two records")
        try expectEqual(try await found(store, SearchQuery("")), [], "no text")
        try expectEqual(try await found(store, SearchQuery("👍 — %")), [], "no word")
        let combined = try await store.read { db in
            try db.fetchAll(Article.where { $0.id.matches(SearchQuery("cafe"), in: Article.searchIndex) || $0.title.eq("Long") }).compactMap(\.id)
        }
        try expectEqual(combined, [1, 2, 5], "a match combined with another condition")
        let counted = try await store.read { db in try db.fetchCount(Article.all.matching(SearchQuery("c", prefixes: .lastTerm), in: Article.searchIndex)) }
        try expectEqual(counted, 3, "counted: café, crème, cafe, c")
    }

    static func searchRanking(_ context: ConformanceContext) async throws {
        let store = try await articleStore(context)
        let query = SearchQuery("milk cafe", matching: .anyTerm, prefixes: .everyTerm)
        let ranked = try await store.read { db in
            try db.fetchAll(Article.all.matching(query, in: Article.searchIndex).orderedBySearchRank(query, in: Article.searchIndex)
                .select { ($0.id, $0.id.searchRank(query, in: Article.searchIndex)) })
        }
        try expectEqual(ranked.map(\.0), [1, 2, 3], "rank order, ties by key")
        try expectEqual(ranked.map(\.1), [6, 3, 3], "title matches weigh 3; milk occurs 3 times in article 1's body")
        let unmatched = try await store.read { db in
            try db.fetchAll(Article.all.select { ($0.id, $0.id.searchRank(SearchQuery("zebra"), in: Article.searchIndex)) })
        }
        try expectEqual(unmatched.map(\.1), [0, 0, 0, 0, 0], "no match ranks 0")
        let empty = try await store.read { db in try db.fetchAll(Article.all.select { $0.id.searchRank(SearchQuery(""), in: Article.searchIndex) }) }
        try expectEqual(empty, [0, 0, 0, 0, 0], "no term ranks 0")
        let unordered = try await store.read { db in
            try db.fetchAll(Article.all.orderedBySearchRank(SearchQuery(""), in: Article.searchIndex)).compactMap(\.id)
        }
        try expectEqual(unordered, [1, 2, 3, 4, 5], "ordered by the rank of no term: by key")
    }

    static func searchMaintenance(_ context: ConformanceContext) async throws {
        let store = try await articleStore(context)
        try await store.write { db in
            try db.updateSearchIndex(Article.searchIndex, key: Int64(3), texts: ["milk", ""])
        }
        try expectEqual(try await found(store, SearchQuery("milk")), [1, 3], "the new texts")
        try expectEqual(try await found(store, SearchQuery("milkshake")), [], "not the old ones")
        _ = try await store.write { db in try db.execute("DELETE FROM \(ident: "articles") WHERE \(ident: "id") = \(Int64(1))") }
        try expectEqual(try await found(store, SearchQuery("milk")), [3], "a deleted record's tokens go with it")
        let left = try await store.read { db in
            try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "articleSearch") WHERE \(ident: "key") = \(Int64(1))")
        }
        try expectEqual(left, 0, "no row of the deleted record")
        _ = try await store.write { db in
            try db.execute("INSERT INTO \(ident: "articles") (\(ident: "id"), \(ident: "title"), \(ident: "body")) VALUES (\(Int64(9)), \("zebra"), \(""))")
        }
        try expectEqual(try await found(store, SearchQuery("zebra")), [], "a record written past the index")
        try await store.write { db in try db.rebuildSearchIndex(Article.searchIndex) { [$0.title, $0.body] } }
        try expectEqual(try await found(store, SearchQuery("zebra")), [9], "rebuilt")
        try expectEqual(try await found(store, SearchQuery("milkshake")), [3], "rebuilt from the records")
        _ = try await expectError(.foreignKey, "a key with no record") {
            try await store.write { db in try db.updateSearchIndex(Article.searchIndex, key: Int64(77), texts: ["x", "y"]) }
        }
    }

    static func searchTextKeys(_ context: ConformanceContext) async throws {
        let store = try await context.makeStore(Store.Configuration())
        let ranked = try await store.write { db in
            try DepotConformance.createTable(db, "memos", [("key", .text, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
            try db.createSearchIndex(Memo.searchIndex, keyType: .text)
            for memo in [Memo(key: "a", text: "alpha beta"), Memo(key: "b", text: "beta, beta"), Memo(key: "c", text: "gamma")] {
                try db.insert(memo)
                try db.updateSearchIndex(Memo.searchIndex, key: memo.key, texts: [memo.text])
            }
            let query = SearchQuery("beta")
            return try db.fetchAll(Memo.all.matching(query, in: Memo.searchIndex).orderedBySearchRank(query, in: Memo.searchIndex)
                .select { ($0.key, $0.key.searchRank(query, in: Memo.searchIndex)) })
        }
        try expectEqual(ranked.map(\.0), ["b", "a"], "by rank")
        try expectEqual(ranked.map(\.1), [2, 1], "the rank of each memo, not of the index's own key column")
    }

    static func searchManyAtOnce(_ context: ConformanceContext) async throws {
        let store = try await context.makeStore(Store.Configuration())
        // 1,200 memos: more than one DELETE of old tokens and many INSERTs of new ones.
        let memos = (0..<1_200).map { Memo(key: "m\($0)", text: "common word\($0) \($0 % 7 == 0 ? "seventh" : "")") }
        let composed = Memo(key: "caf\u{E9}", text: "composed"), decomposed = Memo(key: "cafe\u{301}", text: "decomposed")
        try await store.write { db in
            try DepotConformance.createTable(db, "memos", [("key", .text, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
            try db.createSearchIndex(Memo.searchIndex, keyType: .text)
            try db.insert(contentsOf: memos + [composed, decomposed])
            try db.updateSearchIndex(Memo.searchIndex, entries: memos.map { (key: $0.key, texts: ["stale \($0.text)"]) })
            var entries = memos.map { (key: $0.key, texts: [$0.text]) }
            entries.append((key: "m5", texts: ["fifth last"]))
            entries += [(key: composed.key, texts: [composed.text]), (key: decomposed.key, texts: [decomposed.text])]
            try db.updateSearchIndex(Memo.searchIndex, entries: entries)
        }
        func keys(_ text: String) async throws -> [String] {
            try await store.read { db in try db.fetchAll(Memo.all.matching(SearchQuery(text), in: Memo.searchIndex).select { $0.key }) }.sorted()
        }
        try expectEqual(try await keys("common").count, 1_199, "every memo but the one given twice has its tokens")
        try expectEqual(try await keys("stale"), [], "the tokens of the first update are replaced")
        try expectEqual(try await keys("seventh").count, 172, "each memo its own tokens")
        try expectEqual(try await keys("word1199"), ["m1199"], "the last memo of the batch")
        try expectEqual(try await keys("fifth"), ["m5"], "a key given twice keeps its last texts")
        try expectEqual(try await keys("word5"), [], "and only those")
        try expectEqual(try await keys("composed"), [composed.key], "a composed key keeps its own tokens")
        try expectEqual(try await keys("decomposed"), [decomposed.key], "a decomposed key keeps its own")
        _ = try await expectError(.misuse, "an entry with one text too many") {
            try await store.write { db in
                try db.updateSearchIndex(Memo.searchIndex, entries: [(key: "m1", texts: ["changed"]), (key: "m2", texts: ["x", "y"])])
            }
        }
        try expectEqual(try await keys("changed"), [], "nothing of the refused batch is written")
    }

    /// Indexing skips records whose stored tokens are already the new ones
    /// (an edit of another column): it must never skip one whose tokens
    /// differ, whatever form the engine reads its key back in.
    static func searchIndexingAgain(_ context: ConformanceContext) async throws {
        let store = try await context.makeStore(Store.Configuration())
        let memos = (0..<600).map { Memo(key: "m\($0)", text: "same words \($0)") }
        let stickers = (0..<600).map { _ in Sticker(id: UUID(), text: "glossy round") }
        let memoSearch = Memo.searchIndex.tableName, stickerSearch = Sticker.searchIndex.tableName
        try await store.write { db in
            try DepotConformance.createTable(db, "memos", [("key", .text, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
            try db.createSearchIndex(Memo.searchIndex, keyType: .text)
            try DepotConformance.createTable(db, "stickers", [("id", .uuid, "PRIMARY KEY"), ("text", .text, "NOT NULL")])
            try db.createSearchIndex(Sticker.searchIndex, keyType: .uuid)
            try db.insert(contentsOf: memos)
            try db.insert(contentsOf: stickers)
            try db.updateSearchIndex(Memo.searchIndex, entries: memos.map { (key: $0.key, texts: [$0.text]) })
            try db.updateSearchIndex(Sticker.searchIndex, entries: stickers.map { (key: $0.id, texts: [$0.text]) })
            // Damage: a count changed, a token gone, a stray token (as a write that bypassed the index leaves).
            try db.execute("UPDATE \(ident: memoSearch) SET \(ident: "occurrences") = 7 WHERE \(ident: "key") = 'm1' AND \(ident: "token") = 'same'")
            try db.execute("DELETE FROM \(ident: memoSearch) WHERE \(ident: "key") = 'm2' AND \(ident: "token") = 'words'")
            try db.execute("DELETE FROM \(ident: stickerSearch) WHERE \(ident: "key") = \(stickers[3].id) AND \(ident: "token") = 'round'")
            try db.execute("INSERT INTO \(ident: stickerSearch) VALUES ('stray', \(stickers[4].id), 0, 1)")
        }
        let before = try await store.read { db in
            (try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: memoSearch)") ?? 0, try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: stickerSearch)") ?? 0)
        }
        try expectEqual(before.0, 1_800 - 1, "three tokens a memo, one deleted")
        try expectEqual(before.1, 1_200 - 1 + 1, "two tokens a sticker, one deleted, one stray")
        try await store.write { db in
            var entries = memos.map { (key: $0.key, texts: [$0.text]) }
            entries[5].texts = ["changed"]
            entries[6].texts = [""]
            try db.updateSearchIndex(Memo.searchIndex, entries: entries)
            try db.updateSearchIndex(Sticker.searchIndex, entries: stickers.map { (key: $0.id, texts: [$0.text]) })
        }
        func memoKeys(_ text: String) async throws -> [String] {
            try await store.read { db in try db.fetchAll(Memo.all.matching(SearchQuery(text), in: Memo.searchIndex).select { $0.key }) }.sorted()
        }
        func stickerCount(_ text: String) async throws -> Int {
            try await store.read { db in try db.fetchAll(Sticker.all.matching(SearchQuery(text), in: Sticker.searchIndex)) }.count
        }
        try expectEqual(try await memoKeys("same").count, 598, "every memo but the changed and the emptied")
        try expectEqual(try await memoKeys("words").count, 598, "the memo whose token was gone has it again")
        try expectEqual(try await memoKeys("changed"), ["m5"], "a changed text is indexed")
        try expectEqual(try await memoKeys("6"), [], "an emptied text has no tokens")
        let occurrences = try await store.read { db in
            try db.fetchOne(Int.self, "SELECT \(ident: "occurrences") FROM \(ident: memoSearch) WHERE \(ident: "key") = 'm1' AND \(ident: "token") = 'same'")
        }
        try expectEqual(occurrences, 1, "a damaged count is written again")
        try expectEqual(try await stickerCount("round"), 600, "the sticker whose token was gone has it again")
        try expectEqual(try await stickerCount("stray"), 0, "a stray token is gone")
        let after = try await store.read { db in
            (try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: memoSearch)") ?? 0, try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: stickerSearch)") ?? 0)
        }
        try expectEqual(after.0, 1_800 - 3 - 3 + 1, "no token twice: the changed memo has one, the emptied none")
        try expectEqual(after.1, 1_200, "two tokens a sticker")
    }

    static func searchMisuse(_ context: ConformanceContext) async throws {
        let store = try await articleStore(context)
        let heavy = SearchIndex<Article>(tableName: "articleSearch", fields: [SearchIndex.Field("title", weight: 1_001), "body"])
        _ = try await expectError(.misuse, "a weight past 1,000") {
            try await store.read { db in try db.fetchAll(Article.all.matching(SearchQuery("cafe"), in: heavy)) }
        }
        _ = try await expectError(.misuse, "one text for two fields") {
            try await store.write { db in try db.updateSearchIndex(Article.searchIndex, key: Int64(1), texts: ["only one"]) }
        }
        try expectEqual(try await found(store, SearchQuery("cafe")), [1, 2], "nothing changed")
    }
}

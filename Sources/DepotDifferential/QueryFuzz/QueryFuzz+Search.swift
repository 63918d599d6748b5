import Depot
import Foundation
import DepotTesting

/// Random texts with accents, case, punctuation, compatibility forms and
/// emoji, indexed and searched on both engines and in a model in Swift: the
/// same records, in the same order, with the same ranks.
extension QueryFuzz {
    static let searchWords = ["Café", "cafe", "CAFÉ", "cafe\u{301}", "crème", "creme", "milk", "MILK", "milkshake", "oat-milk", "Straße",
                              "STRASSE", "ß", "ﬁne", "fine", "naïve", "x²", "x2", "3.14", "314", "😀", "👍🏽test", "under_score", "100%",
                              "Über", "uber", "ÉCOLE", "école", "Σίσυφος", "ΣΊΣΥΦΟΣ", "東京", "한국어", "a", "ab", "abc", "İstanbul",
                              "istanbul", "C:\\temp", "\u{FEFF}", "'quoted'", "ＡＢＣ"]
    static let searchSeparators = [" ", " ", ", ", "-", "—", "\n", "😀", "", "\u{200D}", "."]

    static func searchText(_ g: inout Generator, words: Int) -> String {
        var text = ""
        for index in 0..<Int.random(in: 0...words, using: &g) {
            if index > 0 { text += g.pick(searchSeparators) }
            text += g.pick(searchWords)
        }
        return text
    }

    /// The model's rank: over each field's tokens that match a term, the
    /// field's weight times the token's occurrences there.
    static func modelRank(_ query: SearchQuery, _ texts: [String], weights: [Int]) -> Int {
        zip(texts, weights).reduce(0) { sum, field in
            sum + SearchTokenizer.tokens(in: field.0).filter { token in query.terms.contains { $0.matches(token) } }.count * field.1
        }
    }

    static func randomSearches(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = (environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000) / 4
        print("QueryFuzz (search): seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        var articles: [Int64: [String]] = [:]
        for id in Int64(1)...30 { articles[id] = [Self.searchText(&g, words: 3), Self.searchText(&g, words: 8)] }
        let index = Article.searchIndex
        let weights = index.fields.map(\.weight)
        let engines = try await run.makeEngines()
        defer { Task { await engines.close() } }
        let initial = articles.sorted(by: { $0.key < $1.key })
        for (_, store) in engines.both {
            try await store.write { db in
                try db.execute("CREATE TABLE \"articles\" (\"id\" \(type: .autoIncrementingPrimaryKey), \"title\" \(type: .text) NOT NULL, \"body\" \(type: .text) NOT NULL)")
                try db.createSearchIndex(index, keyType: .autoIncrementingPrimaryKey)
                for (id, texts) in initial {
                    try db.insert(Article(id: id, title: texts[0], body: texts[1]))
                    try db.updateSearchIndex(index, key: id, texts: texts)
                }
            }
        }
        let matchings: [SearchQuery.Matching] = [.allTerms, .anyTerm]
        let prefixes: [SearchQuery.Prefixes] = [.none, .lastTerm, .everyTerm]
        var disagreements = 0
        for step in 0..<count {
            if g.chance(10) {
                // A record's texts change: the index follows in the same transaction.
                let id = Int64.random(in: 1...30, using: &g)
                let texts = [Self.searchText(&g, words: 3), Self.searchText(&g, words: 8)]
                articles[id] = texts
                for (_, store) in engines.both {
                    try await store.write { db in
                        try db.update(Article(id: id, title: texts[0], body: texts[1]))
                        try db.updateSearchIndex(index, key: id, texts: texts)
                    }
                }
            }
            let text = Self.searchText(&g, words: 3)
            let query = SearchQuery(text, matching: g.pick(matchings), prefixes: g.pick(prefixes))
            let expected = articles.filter { query.matches($0.value) }
                .map { (id: $0.key, rank: Self.modelRank(query, $0.value, weights: weights)) }
                .sorted { $0.rank != $1.rank ? $0.rank > $1.rank : $0.id < $1.id }
                .map { "\($0.id):\($0.rank)" }
            for (name, store) in engines.both {
                let got = try await store.read { db in
                    try db.fetchAll(Article.all.matching(query, in: index).orderedBySearchRank(query, in: index)
                        .select { ($0.id, $0.id.searchRank(query, in: index)) })
                }.map { "\($0.0 ?? 0):\($0.1)" }
                if got != expected {
                    disagreements += 1
                    run.record("seed \(seed), query \(step): \(query.terms) \(query.matching): \(name) gave \(got), the model \(expected)")
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

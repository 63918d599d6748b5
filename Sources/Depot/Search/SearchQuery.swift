/// What a person searches for: the tokens of their text (by
/// ``SearchTokenizer``'s rules), each matched exactly or as a prefix, all of
/// them or any.
///
/// ```swift
/// let query = SearchQuery("oat MILK", prefixes: .lastTerm)   // "oat" and a token starting with "milk"
/// let found = try db.fetchAll(Reminder.all.matching(query, in: Reminder.searchIndex)
///     .orderedBySearchRank(query, in: Reminder.searchIndex))
/// ```
///
/// A record matches when every term (``Matching/allTerms``) or at least one
/// (``Matching/anyTerm``) matches a token of any of its indexed texts. A query
/// without terms (empty text, or only punctuation and emoji) matches nothing.
public struct SearchQuery: Sendable, Hashable {
    /// Whether a record needs every term or any one.
    public enum Matching: Sendable, Hashable {
        /// Every term matches a token of the record.
        case allTerms
        /// At least one term matches a token of the record.
        case anyTerm
    }

    /// Which terms match tokens that start with them.
    public enum Prefixes: Sendable, Hashable {
        /// Every term matches only the same token.
        case none
        /// The last term of the text matches every token it starts: search as you type.
        case lastTerm
        /// Every term matches every token it starts.
        case everyTerm
    }

    /// One term: a token, matched exactly or as a prefix.
    public struct Term: Sendable, Hashable {
        /// The token, folded as the index folds it.
        public let token: String
        /// Whether it matches every token that starts with it.
        public let isPrefix: Bool

        /// Whether this term matches a token of an indexed text.
        public func matches(_ other: String) -> Bool {
            isPrefix ? other.unicodeScalars.starts(with: token.unicodeScalars) : other.unicodeScalars.elementsEqual(token.unicodeScalars)
        }
    }

    /// The terms, in the order of the text, without repeats.
    public let terms: [Term]
    /// Whether a record needs every term or any one.
    public let matching: Matching

    /// The query for a person's text: its tokens are the terms.
    public init(_ text: String, matching: Matching = .allTerms, prefixes: Prefixes = .none) {
        let tokens = SearchTokenizer.tokens(in: text)
        var terms: [Term] = []
        for (index, token) in tokens.enumerated() {
            let isPrefix = prefixes == .everyTerm || (prefixes == .lastTerm && index == tokens.count - 1)
            let term = Term(token: token, isPrefix: isPrefix)
            if !terms.contains(term) { terms.append(term) }
        }
        self.terms = terms
        self.matching = matching
    }

    /// Whether a record whose indexed texts are `texts` matches: what the index
    /// answers, computed in Swift (to filter records in memory the same way).
    public func matches(_ texts: [String]) -> Bool {
        guard !terms.isEmpty else { return false }
        let tokens = texts.flatMap(SearchTokenizer.tokens(in:))
        switch matching {
        case .allTerms: return terms.allSatisfy { term in tokens.contains(where: term.matches) }
        case .anyTerm: return terms.contains { term in tokens.contains(where: term.matches) }
        }
    }

    /// Whether one token matches any term.
    func matchesAnyTerm(_ token: String) -> Bool {
        terms.contains { $0.matches(token) }
    }

    /// `text` with each word that matches a term between `open` and `close`:
    /// the highlight of a search result, the same whatever engine found it.
    ///
    /// ```swift
    /// SearchQuery("creme").highlight("Café crème brûlée", open: "[", close: "]")   // "Café [crème] brûlée"
    /// ```
    ///
    /// Caveat: `open` and `close` are inserted as they are; escape `text` first
    /// when the result is HTML.
    public func highlight(_ text: String, open: String, close: String) -> String {
        var result = String.UnicodeScalarView()
        var copied = text.unicodeScalars.startIndex
        SearchTokenizer.forEachWord(in: text) { range, token in
            guard matchesAnyTerm(token) else { return }
            result.append(contentsOf: text.unicodeScalars[copied..<range.lowerBound])
            result.append(contentsOf: open.unicodeScalars)
            result.append(contentsOf: text.unicodeScalars[range])
            result.append(contentsOf: close.unicodeScalars)
            copied = range.upperBound
        }
        result.append(contentsOf: text.unicodeScalars[copied...])
        return String(result)
    }
}

extension QueryRenderer {
    /// The alias of a search index's table in a rank's subquery.
    static let searchAlias = "depot_search"

    /// A full-text predicate (`key IN` the keys whose tokens match, once per
    /// term for all terms) or a rank (a correlated sum over the record's matching tokens).
    func renderSearch(_ key: QueryNode, _ search: QueryNode.SearchNode) throws {
        let weights = try search.weights.get()
        let terms = search.query.terms
        if search.isRank {
            guard !terms.isEmpty else {
                // Not a bare 0: ORDER BY 0 would name a column by position.
                text += "CAST(0 AS " + dialect.castTypeName(.integer) + ")"
                return
            }
            let alias = dialect.quote(identifier: Self.searchAlias) + "."
            let field = alias + dialect.quote(identifier: SearchIndexColumn.field)
            var score = "CASE " + field
            for (index, weight) in weights.enumerated() { score += " WHEN \(index) THEN \(weight)" }
            score += " ELSE 0 END * " + alias + dialect.quote(identifier: SearchIndexColumn.occurrences)
            text += "COALESCE((SELECT "
            text.append(dialect.integerSum(SQL(unsafeRaw: score)))
            text += " FROM "
            identifier(search.table)
            text += " AS "
            identifier(Self.searchAlias)
            text += " WHERE " + alias + dialect.quote(identifier: SearchIndexColumn.key) + " = "
            // The record's key is qualified: the index's own columns would hide an unqualified one.
            let (qualified, saved) = (qualifiesColumns, qualifiers)
            if !qualifiesColumns, let rootTable { qualifiers[0] = rootTable }
            qualifiesColumns = true
            defer { (qualifiesColumns, qualifiers) = (qualified, saved) }
            try render(key)
            text += " AND ("
            renderTermMatches(terms, qualifier: alias)
            text += ")), 0)"
            return
        }
        guard !terms.isEmpty else {
            text += dialect.booleanLiteral(false)
            return
        }
        let groups: [[SearchQuery.Term]] = search.query.matching == .allTerms ? terms.map { [$0] } : [terms]
        text += "("
        for (index, group) in groups.enumerated() {
            if index > 0 { text += " AND " }
            try render(key)
            text += " IN (SELECT "
            identifier(SearchIndexColumn.key)
            text += " FROM "
            identifier(search.table)
            text += " WHERE "
            renderTermMatches(group, qualifier: "")
            text += ")"
        }
        text += ")"
    }

    /// Whether a token matches any of `terms`: equal to it, or (a prefix)
    /// within the code-point range of the tokens that start with it.
    private func renderTermMatches(_ terms: [SearchQuery.Term], qualifier: String) {
        let token = qualifier + dialect.quote(identifier: SearchIndexColumn.token)
        for (index, term) in terms.enumerated() {
            if index > 0 { text += " OR " }
            if term.isPrefix {
                // Tokens never hold U+10FFFF (a noncharacter is no letter), so
                // every token that starts with the term sorts before term + U+10FFFF.
                let collated = dialect.binaryCollated(SQL(unsafeRaw: token), ordering: true)
                text += "("
                text.append(collated)
                text += " >= "
                bind(.text(term.token))
                text += " AND "
                text.append(collated)
                text += " < "
                bind(.text(term.token + "\u{10FFFF}"))
                text += ")"
            } else {
                text += token + " = "
                bind(.text(term.token))
            }
        }
    }
}

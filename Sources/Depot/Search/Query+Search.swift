extension QueryExpression {
    /// Whether the record whose key this is matches `query` in `index`.
    ///
    /// ```swift
    /// Reminder.where { $0.id.matches(SearchQuery("milk"), in: Reminder.searchIndex) || $0.isFlagged }
    /// ```
    public func matches<T>(_ query: SearchQuery, in index: SearchIndex<T>) -> QueryPredicate {
        QueryPredicate(.search(node, Self.searchNode(query, index, isRank: false)), type: .bool)
    }

    /// The rank of the record whose key this is for `query` in `index`: the
    /// sum, over its tokens that match a term, of their field's weight times
    /// their occurrences there; 0 when none matches.
    public func searchRank<T>(_ query: SearchQuery, in index: SearchIndex<T>) -> QueryExpression<Int> {
        QueryExpression<Int>(.search(node, Self.searchNode(query, index, isRank: true)), type: .integer)
    }

    static func searchNode<T>(_ query: SearchQuery, _ index: SearchIndex<T>, isRank: Bool) -> QueryNode.SearchNode {
        let weights: Result<[Int], DatabaseError>
        do {
            weights = .success(try index.checkedWeights())
        } catch let error as DatabaseError {
            weights = .failure(error)
        } catch {
            weights = .failure(DatabaseError.misuse("\(error)"))
        }
        return QueryNode.SearchNode(table: index.tableName, query: query, weights: weights, isRank: isRank)
    }
}

extension Query {
    /// The records that match `query` in `index`.
    ///
    /// ```swift
    /// let query = SearchQuery("oat milk", prefixes: .lastTerm)
    /// let found = try db.fetchAll(Reminder.where { !$0.isCompleted }.matching(query, in: Reminder.searchIndex))
    /// ```
    public func matching(_ query: SearchQuery, in index: SearchIndex<Root>) -> Query {
        var copy = self
        copy.filters.append(Self.search(query, index, isRank: false))
        return copy
    }

    /// Orders by rank for `query` in `index`, highest first, after any earlier
    /// order; records of equal rank follow the rest of the order, then the key.
    public func orderedBySearchRank(_ query: SearchQuery, in index: SearchIndex<Root>) -> Query {
        var copy = self
        copy.orderings.append(QueryExpression<Int>(node: Self.search(query, index, isRank: true)).descending())
        return copy
    }

    /// A search of the record's key column; for a composite key, one that
    /// fails with `misuse` when it renders.
    private static func search(_ query: SearchQuery, _ index: SearchIndex<Root>, isRank: Bool) -> QueryNode {
        var search = QueryExpression<Bool>.searchNode(query, index, isRank: isRank)
        let key: String
        do {
            key = try SearchIndex<Root>.keyColumn()
        } catch let error as DatabaseError {
            (key, search) = ("", QueryNode.SearchNode(table: search.table, query: query, weights: .failure(error), isRank: isRank))
        } catch {
            key = ""
        }
        return QueryNode(.search(.columnNamed(key), search), type: isRank ? .integer : .bool)
    }
}

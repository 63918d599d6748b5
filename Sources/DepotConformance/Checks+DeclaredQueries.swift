import Depot
import Foundation

extension Note {
    /// Notes whose rank is at least `minimum` and whose title does not contain `excluded`, best first.
    static let rankedAtLeast = DeclaredQuery { (minimum: QueryExpression<Int>, excluded: QueryExpression<String>) in
        Note.where { $0.rank >= minimum && $0.isPinned.isNotDistinct(from: true) || $0.rank > minimum }
            .where { $0.title.neq(excluded) }
            .order { $0.rank.descending() }
    }

    /// The note with this id.
    static let byID = DeclaredQuery { (id: QueryExpression<Int64>) in Note.where { $0.id.eq(id) } }
}

/// Queries declared once with parameters.
extension QueryChecks {
    static let declared: [ConformanceCheck] = [
        ConformanceCheck("query: a declared query binds new parameter values on every run and keeps its constants", declaredQueries),
    ]

    static func declaredQueries(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let (two, three, again, one, none) = try await store.read { db in
            (try db.fetchAll(Note.rankedAtLeast, 2, "zebra").map(\.id),
             try db.fetchAll(Note.rankedAtLeast, 3, "").map(\.id),
             try db.fetchAll(Note.rankedAtLeast, 2, "zebra").map(\.id),
             try db.fetchOne(Note.byID, 4)?.title,
             try db.fetchOne(Note.byID, 99))
        }
        let built = try await store.read { db in
            try db.fetchAll(Note.where { $0.rank >= 2 && $0.isPinned.isNotDistinct(from: true) || $0.rank > 2 }
                .where { $0.title.neq("zebra") }.order { $0.rank.descending() }).map(\.id)
        }
        try expectEqual(two, built, "the same rows as the query built with the values")
        try expectEqual(two, [8, 4, 1], "rank at least 2 and pinned, or above 2; not zebra; best first")
        try expectEqual(three, [8, 4], "other values, the same statement")
        try expectEqual(again, two, "the first values again")
        try expectEqual(one, "Éclair", "by id")
        try expect(none == nil, "no note 99")
        try await expectError(.misuse, "a parameter used in another query") {
            try await store.read { db in
                var leaked: QueryExpression<Int>?
                _ = DeclaredQuery { (rank: QueryExpression<Int>) in leaked = rank; return Note.all }
                guard let leaked else { return [Int64]() }
                return try db.fetchAll(Note.where { $0.rank.eq(leaked) }).map(\.id)
            }
        }
    }
}

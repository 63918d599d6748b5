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

    /// Notes whose rank times `Int.max` is above `threshold`: an overflow for
    /// any rank but 0 and 1, unless the threshold is NULL.
    static let rankTimesMaxAbove = DeclaredQuery { (threshold: QueryExpression<Int?>) in
        Note.where { ($0.rank * Int.max) > threshold }
    }

    /// Notes whose rank times `Int.max` is positive, and `flag`: an overflow
    /// for any rank but 0 and 1, unless the flag is false.
    static let rankTimesMaxPositiveAnd = DeclaredQuery { (flag: QueryExpression<Bool>) in
        Note.where { ($0.rank * Int.max) > QueryExpression<Int?>(0) && flag }
    }

    /// Notes whose rank times `Int.max` is positive, or `flag`: an overflow
    /// for any rank but 0 and 1, unless the flag is true.
    static let rankTimesMaxPositiveOr = DeclaredQuery { (flag: QueryExpression<Bool>) in
        Note.where { ($0.rank * Int.max) > QueryExpression<Int?>(0) || flag }
    }

    /// Notes whose rank minus `Int.min`, plus `offset`, is not NULL: an
    /// overflow for a positive rank, unless the offset is NULL.
    static let rankMinusMinPlus = DeclaredQuery { (offset: QueryExpression<Int?>) in
        Note.where { (($0.rank - Int.min) + offset).isNotNull() }
    }
}

/// Queries declared once with parameters.
extension QueryChecks {
    static let declared: [ConformanceCheck] = [
        ConformanceCheck("query: a declared query binds new parameter values on every run and keeps its constants", declaredQueries),
        ConformanceCheck("query: false AND, or true OR, a side that would overflow is decided without computing it, written in the query or as a parameter",
                         decidedConnective),
        ConformanceCheck("query: a NULL parameter beside arithmetic makes its operator NULL without computing the other side, on every run, "
                         + "as a NULL the query decides does; a value computes it, and its overflow fails", declaredNullParameter),
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

    static func declaredNullParameter(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        // PostgreSQL plans the first runs of a prepared statement with the values bound (and folds a
        // strict operator beside a NULL value), and may plan later runs once for any value (and then
        // computes the other side first): twelve runs meet both.
        for run in 1...12 {
            let (above, offset) = try await store.read { db in
                (try db.fetchAll(Note.rankTimesMaxAbove, nil).map(\.id), try db.fetchAll(Note.rankMinusMinPlus, nil).map(\.id))
            }
            try expectEqual(above, [], "run \(run): rank * Int.max > a NULL parameter")
            try expectEqual(offset, [], "run \(run): (rank - Int.min) + a NULL parameter")
            if run % 4 == 0 {
                try await expectError(.encoding, "run \(run): rank * Int.max > 0") {
                    try await store.read { db in try db.fetchAll(Note.rankTimesMaxAbove, 0).map(\.id) }
                }
                try await expectError(.encoding, "run \(run): (rank - Int.min) + 0") {
                    try await store.read { db in try db.fetchAll(Note.rankMinusMinPlus, 0).map(\.id) }
                }
            }
        }
    }

    static func decidedConnective(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let all = Note.samples.map(\.id)
        let written = try await store.read { db in
            (try db.fetchAll(Note.where { ($0.rank * Int.max) > QueryExpression<Int?>(0) && QueryPredicate.never }).map(\.id),
             try db.fetchAll(Note.where { ($0.rank * Int.max) > QueryExpression<Int?>(0) || QueryPredicate.always }).map(\.id))
        }
        try expectEqual(written.0, [], "rank * Int.max > 0 AND never")
        try expectEqual(written.1, all, "rank * Int.max > 0 OR always")
        // A Boolean value in the query is decided as the constants are; the other way, the side is computed.
        for (flag, isAnd) in [(false, true), (true, false), (true, true), (false, false)] {
            let query = Note.where { isAnd ? ($0.rank * Int.max) > QueryExpression<Int?>(0) && QueryExpression<Bool>(flag)
                : ($0.rank * Int.max) > QueryExpression<Int?>(0) || QueryExpression<Bool>(flag) }
            let what = "rank * Int.max > 0 \(isAnd ? "AND" : "OR") the value \(flag)"
            if flag != isAnd {
                let ids = try await store.read { db in try db.fetchAll(query).map(\.id) }
                try expectEqual(ids, flag ? all : [], what)
            } else {
                try await expectError(.encoding, what) { try await store.read { db in try db.fetchAll(query).map(\.id) } }
            }
        }
        for run in 1...12 {
            let (and, or) = try await store.read { db in
                (try db.fetchAll(Note.rankTimesMaxPositiveAnd, false).map(\.id), try db.fetchAll(Note.rankTimesMaxPositiveOr, true).map(\.id))
            }
            try expectEqual(and, [], "run \(run): rank * Int.max > 0 AND a false parameter")
            try expectEqual(or, all, "run \(run): rank * Int.max > 0 OR a true parameter")
            if run % 4 == 0 {
                try await expectError(.encoding, "run \(run): rank * Int.max > 0 AND a true parameter") {
                    try await store.read { db in try db.fetchAll(Note.rankTimesMaxPositiveAnd, true).map(\.id) }
                }
                try await expectError(.encoding, "run \(run): rank * Int.max > 0 OR a false parameter") {
                    try await store.read { db in try db.fetchAll(Note.rankTimesMaxPositiveOr, false).map(\.id) }
                }
            }
        }
    }
}

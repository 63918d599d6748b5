@_spi(Driver) import Depot
import Foundation

/// A record with a generated key and a unique name, for upserts.
@Columns
struct Badge: Record, Equatable {
    static var tableName: String { "badges" }
    var id: Int64?
    var name: String
    var color: Int
    var uses: Int
}

/// A copy of some of a note's columns, for inserts from a selection.
@Columns
struct NoteCopy: Record, Equatable {
    static var tableName: String { "noteCopies" }
    var id: Int64
    var title: String
}

/// Statements through typed columns: upserts on any unique target, inserts
/// that keep a conflicting row, inserts from a selection, and updates and
/// deletes that return the records.
extension QueryChecks {
    static let statements: [ConformanceCheck] = [
        ConformanceCheck("query: upsert on a unique column updates the chosen columns and keeps the key", upsertOnTarget),
        ConformanceCheck("query: insert ignoring a conflict keeps the stored row and returns nil; other constraints still fail", insertIgnoringConflict),
        ConformanceCheck("query: an upsert that clashes on a unique key other than its target fails as unique and changes no row", upsertClashingElsewhere),
        ConformanceCheck("query: upserts of one new target racing in two stores leave one row, and each returns it", racingUpserts),
        ConformanceCheck("query: updateAndFetchAll and deleteAndFetchAll return the records by primary key", returningStatements),
        ConformanceCheck("query: an insert from a selection writes its rows into the target's columns", insertFromSelection),
    ]

    static func badges(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore(Store.Configuration())
        try await store.write { db in
            try DepotConformance.createTable(db, "badges", [("id", .autoIncrementingPrimaryKey, ""), ("name", .text, "NOT NULL UNIQUE"),
                                                            ("color", .integer, "NOT NULL"), ("uses", .integer, "NOT NULL")])
        }
        return store
    }

    static func upsertOnTarget(_ context: ConformanceContext) async throws {
        let store = try await badges(context)
        let (first, second, third, all) = try await store.write { db in
            (try db.upsert(Badge(name: "home", color: 1, uses: 1), onConflict: { [$0.name] }),
             try db.upsert(Badge(name: "home", color: 2, uses: 5), onConflict: { [$0.name] }, updating: { [$0.color] }),
             try db.upsert(Badge(name: "home", color: 3, uses: 7), onConflict: { [$0.name] }),
             try db.fetchAll(Badge.all))
        }
        try expect(first.id != nil, "a generated key")
        try expectEqual(second, Badge(id: first.id, name: "home", color: 2, uses: 1), "only color updated, the key kept")
        try expectEqual(third, Badge(id: first.id, name: "home", color: 3, uses: 7), "every column but the target and the key")
        try expectEqual(all, [third], "one row")
        try await expectError(.syntax, "a target that is no unique constraint") {
            try await store.write { db in try db.upsert(Badge(name: "x", color: 1, uses: 1), onConflict: { [$0.color] }) }
        }
        try await expectError(.misuse, "no column to update") {
            try await store.write { db in try db.upsert(Badge(name: "x", color: 1, uses: 1), onConflict: { [$0.name] }, updating: { _ in [] }) }
        }
    }

    static func insertIgnoringConflict(_ context: ConformanceContext) async throws {
        let store = try await badges(context)
        let (first, again, other, all) = try await store.write { db in
            (try db.insert(Badge(name: "home", color: 1, uses: 1), ignoringConflictOn: { [$0.name] }),
             try db.insert(Badge(name: "home", color: 9, uses: 9), ignoringConflictOn: { [$0.name] }),
             try db.insert(Badge(name: "work", color: 2, uses: 0), ignoringConflictOn: { [$0.name] }),
             try db.fetchAll(Badge.order { $0.name }))
        }
        try expectEqual(first?.name, "home", "inserted")
        try expect(again == nil, "the conflict kept the stored row: \(String(describing: again))")
        try expectEqual(other?.name, "work", "another name is inserted")
        try expectEqual(all.map(\.color), [1, 2], "the stored row unchanged")
        try await expectError(.unique, "a conflict on the primary key, not the target") {
            try await store.write { db in try db.insert(Badge(id: first?.id, name: "new", color: 1, uses: 1), ignoringConflictOn: { [$0.name] }) }
        }
    }

    static func upsertClashingElsewhere(_ context: ConformanceContext) async throws {
        let store = try await badges(context)
        let (home, work) = try await store.write { db in
            (try db.insert(Badge(name: "home", color: 1, uses: 1)), try db.insert(Badge(name: "work", color: 2, uses: 2)))
        }
        // A new name with work's key: the target (name) matches no row; the key clashes.
        try await expectError(.unique, "a new name with another row's key") {
            try await store.write { db in try db.upsert(Badge(id: work.id, name: "gym", color: 9, uses: 9), onConflict: { [$0.name] }) }
        }
        try await expectError(.unique, "the same, keeping a conflicting row") {
            try await store.write { db in try db.insert(Badge(id: work.id, name: "gym", color: 9, uses: 9), ignoringConflictOn: { [$0.name] }) }
        }
        try expectEqual(try await store.read { db in try db.fetchAll(Badge.order { $0.name }) }, [home, work], "no row changed")
        // Home's name with work's key: the target matches home, whose columns but the key are updated.
        let updated = try await store.write { db in try db.upsert(Badge(id: work.id, name: "home", color: 7, uses: 7), onConflict: { [$0.name] }) }
        try expectEqual(updated, Badge(id: home.id, name: "home", color: 7, uses: 7), "the target's row updated, its key kept")
        try expectEqual(try await store.read { db in try db.fetchOne(Badge.where { $0.name.eq("work") }) }, Optional(work), "work unchanged")
    }

    static func racingUpserts(_ context: ConformanceContext) async throws {
        let store = try await badges(context)
        // An in-memory store's other store would be another database.
        let other = store.dialect.capabilities.concurrentReadsDuringWrite ? Store(driver: store.driver) : store
        defer { if other !== store { Task { await other.close() } } }
        // A `serialization` error (MariaDB may pick one racing insert as a
        // deadlock's victim) means "retry the transaction", as a caller would.
        @Sendable func upsert(_ store: Store, _ badge: Badge) async throws -> Badge {
            for _ in 1..<5 {
                do {
                    return try await store.write { db in try db.upsert(badge, onConflict: { [$0.name] }) }
                } catch let error as DatabaseError where error.kind == .serialization {
                    continue
                }
            }
            return try await store.write { db in try db.upsert(badge, onConflict: { [$0.name] }) }
        }
        for round in 0..<20 {
            let name = "race \(round)"
            async let first = upsert(store, Badge(name: name, color: 1, uses: 1))
            async let second = upsert(other, Badge(name: name, color: 2, uses: 2))
            let (a, b) = try await (first, second)
            try expectEqual(a.id, b.id, "\(name): both return the one row")
        }
        let rows = try await store.read { db in try db.fetchAll(Badge.all) }
        try expectEqual(rows.count, 20, "one row per name")
    }

    static func returningStatements(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let (updated, deleted, left) = try await store.write { db in
            (try db.updateAndFetchAll(Note.where { $0.rank > 1 }) { [$0.isPinned.to(true), $0.rank.to($0.rank * 10)] },
             try db.deleteAndFetchAll(Note.where { $0.rank.isNull() || $0.title.eq("") }),
             try db.fetchAll(Note.all).map(\.id))
        }
        try expectEqual(updated.map(\.id), [1, 4, 6, 8], "updated, by primary key")
        try expectEqual(updated.map(\.rank), [20, 30, 20, 50], "as stored afterwards")
        try expect(updated.allSatisfy(\.isPinned), "every returned record pinned")
        try expectEqual(deleted.map(\.id), [2, 5, 7], "deleted, by primary key")
        try expectEqual(deleted.map(\.title), ["Apple", "éclair", ""], "as they were")
        try expectEqual(left, [1, 3, 4, 6, 8], "the rest stays")
    }

    static func insertFromSelection(_ context: ConformanceContext) async throws {
        let store = try await notes(context)
        let (count, copies) = try await store.write { db in
            try DepotConformance.createTable(db, "noteCopies", [("id", .integer, "PRIMARY KEY"), ("title", .text, "NOT NULL")])
            return (try db.insert(Note.where { $0.isPinned }.select(into: NoteCopy.self) { ($0.id * 100, $0.title + "*") }),
                    try db.fetchAll(NoteCopy.all))
        }
        try expectEqual(count, 3, "three pinned notes")
        try expectEqual(copies, [NoteCopy(id: 100, title: "apple*"), NoteCopy(id: 400, title: "Éclair*"), NoteCopy(id: 600, title: "zebra*")], "copied")
    }
}

@testable import Depot
import Foundation
import Testing

/// Everything the core writes goes through the backend's dialect.
@Suite struct FakeDialectTests {
    struct Note: Record, Equatable {
        static let tableName = "notes"
        var id: Int64?
        var title: String
        var pinned: Bool
    }

    func store() -> (Store, FakeLog) {
        let log = FakeLog()
        return (Store(driver: FakeDriver(log: log)), log)
    }

    @Test func renderingUsesTheDialectForPlaceholdersIdentifiersAndTypes() throws {
        let sql: SQL = "CREATE TABLE \(ident: "a]b") (\(ident: "x") \(type: .date)); SELECT \(1), \("two")"
        let (text, values) = try sql.rendered(for: OddDialect())
        #expect(text == "CREATE TABLE [a]]b] ([x] ODD_DATE); SELECT :p1, :p2")
        #expect(values == [.integer(1), .text("two")])
    }

    @Columns
    struct Task: Record {
        static let tableName = "tasks"
        var id: Int64
        var title: String
        var rank: Int?
        var done: Bool
    }

    @Test func theBuilderSpellsEveryEngineSpecificPartThroughTheDialect() async throws {
        let (store, log) = store()
        _ = try await store.read { db in
            try db.fetchAll(Task.where { $0.title.contains("50%", caseInsensitive: true) || $0.rank.isDistinct(from: 3) || $0.id.in([]) }
                .order { [$0.rank.ascending(nulls: .first), $0.title.descending()] })
        }
        _ = try await store.read { db in
            try db.fetchOne(Task.all.select { Aggregates.count(where: $0.done) })
        }
        let sql = log.all.joined(separator: "\n")
        #expect(sql.contains("MATCHES(LOWER_AZ([title]), :p1, :p2)"), "\(sql)")
        #expect(sql.contains("NOT [rank] <=> :p3"), "\(sql)")
        #expect(sql.contains("1=0"), "\(sql)")
        #expect(sql.contains("ORDER BY ([rank] IS NULL) DESC, [rank] ASC, (BYTES([title]) IS NULL) ASC, BYTES([title]) DESC"), "\(sql)")
        #expect(sql.contains("count(CASE WHEN [done] THEN 1 END)"), "\(sql)")
        for standard in ["FILTER", "DISTINCT FROM", "NULLS", "TRUE", "FALSE", " LIKE ", "ESCAPE"] {
            #expect(!sql.contains(standard), "the renderer wrote \(standard) itself: \(sql)")
        }
    }

    @Test func placeholdersAreNumberedInTheOrderTheDialectWritesItsOperands() async throws {
        let (store, log) = store()
        // FIND(needle, text): the needle is bound after the text's value but written before it.
        for (suffix, needle) in [("x", "y"), ("u", "v")] {
            _ = try await store.read { db in try db.fetchAll(Task.where { ($0.title + suffix).contains(needle) }) }
        }
        let finds = log.all.filter { $0.contains("FIND(") }
        #expect(finds.count == 2 && finds.allSatisfy { $0.contains("(FIND(:p1, ([title] || :p2)) > 0)") }, "\(finds)")
        #expect(finds.first?.hasSuffix("<- TEXT 'y', TEXT 'x'") == true, "\(finds)")
        // The second run reuses the shape's text and collects only its values: in the same order.
        #expect(finds.last?.hasSuffix("<- TEXT 'v', TEXT 'u'") == true, "\(finds)")
        log.clear()
        // An empty needle repeats its operand: its value is bound once per placeholder.
        _ = try await store.read { db in try db.fetchAll(Task.where { ($0.title + "x").contains("") }) }
        let repeated = log.all.first { $0.contains("||") } ?? ""
        #expect(repeated.contains("(([title] || :p1) = ([title] || :p2))") && repeated.hasSuffix("<- TEXT 'x', TEXT 'x'"), "\(repeated)")
    }

    @Test func writesRunInsideTheDialectsTransaction() async throws {
        let (store, log) = store()
        try await store.write { db in try db.execute("DELETE FROM \(ident: "notes") WHERE \(ident: "id") = \(7)") }
        #expect(log.all == ["ODD BEGIN WRITE", "DELETE FROM [notes] WHERE [id] = :p1 <- INTEGER 7", "COMMIT"])
        log.clear()
        try await store.read { db in _ = try db.fetchAll(Row.self, "SELECT 1") }
        #expect(log.all == ["ODD BEGIN READ", "SELECT 1", "COMMIT"])
    }

    @Test func aThrowingWriteRollsBack() async throws {
        let (store, log) = store()
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await store.write { db in
                try db.execute("SELECT 1")
                throw Boom()
            }
        }
        #expect(log.all == ["ODD BEGIN WRITE", "SELECT 1", "ROLLBACK"])
    }

    @Test func insertLeavesOutANilKeyAndQuotesEveryName() async throws {
        let (store, log) = store()
        log.responses = [("INSERT", ["id", "title", "pinned"], [[.integer(5), .text("a"), .integer(1)]])]
        let saved = try await store.write { db in try db.insert(Note(id: nil, title: "a", pinned: true)) }
        #expect(saved == Note(id: 5, title: "a", pinned: true))
        #expect(log.all[1] == "INSERT INTO [notes] ([title], [pinned]) VALUES (:p1, :p2) RETURNING * <- TEXT 'a', BOOLEAN true")
    }

    @Test func upsertUpdatesEveryColumnButTheKey() async throws {
        let (store, log) = store()
        log.responses = [("INSERT", ["id", "title", "pinned"], [[.integer(1), .text("a"), .bool(false)]])]
        try await store.write { db in try db.upsert(Note(id: 1, title: "a", pinned: false)) }
        #expect(log.all[1] == "INSERT INTO [notes] ([id], [title], [pinned]) VALUES (:p1, :p2, :p3) ON CONFLICT ([id]) DO UPDATE SET [title] = excluded.[title], [pinned] = excluded.[pinned] RETURNING * <- INTEGER 1, TEXT 'a', BOOLEAN false")
    }

    @Test func updateWritesNilAsNull() async throws {
        struct Dated: Record { static let tableName = "d"; var id: Int64; var due: Date? }
        let (store, log) = store()
        try await store.write { db in try db.update(Dated(id: 3, due: nil)) }
        #expect(log.all[1] == "UPDATE [d] SET [due] = :p1 WHERE [id] = :p2 <- NULL, INTEGER 3")
    }

    @Test func batchInsertsGroupRowsBelowTheBoundValueLimit() async throws {
        let (store, log) = store()
        // The odd dialect takes 3 rows a statement and 10 values: 2 columns → 3 rows, then the rest.
        let notes = (1...4).map { Note(id: nil, title: "n\($0)", pinned: $0 == 1) }
        try await store.write { db in try db.insert(contentsOf: notes) }
        #expect(log.all == [
            "ODD BEGIN WRITE",
            "SAVEPOINT depot_savepoint_1",
            "INSERT INTO [notes] ([title], [pinned]) VALUES (:p1, :p2), (:p3, :p4), (:p5, :p6) <- TEXT 'n1', BOOLEAN true, TEXT 'n2', BOOLEAN false, TEXT 'n3', BOOLEAN false",
            "INSERT INTO [notes] ([title], [pinned]) VALUES (:p1, :p2) <- TEXT 'n4', BOOLEAN false",
            "RELEASE SAVEPOINT depot_savepoint_1",
            "COMMIT",
        ])
    }

    @Test func anIsolationLevelReachesTheDialect() async throws {
        let (store, log) = store()
        try await store.write(isolation: .serializable) { _ in }
        #expect(log.all.first == "ODD BEGIN WRITE SERIALIZABLE")
    }

    @Test func savepointsNestAndRollBackAlone() async throws {
        let (store, log) = store()
        struct Boom: Error {}
        try await store.write { db in
            try db.savepoint { db in
                try? db.savepoint { _ in throw Boom() }
            }
        }
        #expect(log.all == [
            "ODD BEGIN WRITE",
            "SAVEPOINT depot_savepoint_1",
            "SAVEPOINT depot_savepoint_2",
            "ROLLBACK TO SAVEPOINT depot_savepoint_2",
            "RELEASE SAVEPOINT depot_savepoint_2",
            "RELEASE SAVEPOINT depot_savepoint_1",
            "COMMIT",
        ])
    }

    @Test func migrationsRecordThemselvesWithDialectTypes() async throws {
        let (store, log) = store()
        var migrator = Migrator()
        migrator.register("one") { db in try db.execute("CREATE TABLE \(ident: "t") (\(ident: "c") \(type: .uuid))") }
        log.responses = [("SELECT [name]", ["name"], [])]
        try await migrator.migrate(store)
        let statements = log.all
        #expect(statements.contains { $0.hasPrefix("CREATE TABLE IF NOT EXISTS [depotMigrations] (\n    \"name\" ODD_TEXT NOT NULL PRIMARY KEY") })
        #expect(statements.contains("CREATE TABLE [t] ([c] ODD_UUID)"))
        #expect(statements.contains { $0.hasPrefix("INSERT INTO [depotMigrations] (\"name\", \"position\", \"appliedAt\", \"checksum\")\nVALUES (:p1, :p2, :p3, :p4) <- TEXT 'one', INTEGER 0, DATE ") && $0.hasSuffix(", NULL") },
                "a closure without a revision records no checksum: \(statements)")
    }

    @Test func engineErrorsGainTheSQLButNotTheValues() async throws {
        let (store, log) = store()
        log.failures = [("INSERT", DatabaseError(.unique, "duplicate", engineCode: "ODD-1"))]
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.execute("INSERT INTO \(ident: "t") VALUES (\("secret"))") }
        }
        #expect(error?.description == "unique error [ODD-1]: duplicate (sql: INSERT INTO [t] VALUES (:p1))")
    }

    @Test func decodingErrorsFromAFetchNameTheCellAndTheSQL() async throws {
        let (store, log) = store()
        log.responses = [("SELECT", ["id", "title", "pinned"], [[.integer(1), .null, .integer(0)]])]
        let error = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.fetchAll(Note.self, "SELECT * FROM \(ident: "notes")") }
        }
        #expect(error?.description == "decoding error: NULL cannot be decoded as non-optional String (column: title (index 1), coding path: title, sql: SELECT * FROM [notes])")
    }
}

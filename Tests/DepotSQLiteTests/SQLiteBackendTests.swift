import CSQLite
import Depot
import DepotSQLite
import Foundation
import Testing

/// What the SQLite backend promises beyond the shared contract.
@Suite struct SQLiteBackendTests {
    @Test func aWriteBlockedByAnotherConnectionFailsWithBusyAfterTheTimeout() async throws {
        let path = try temporaryDatabasePath()
        var quick = SQLiteConfiguration()
        quick.busyTimeout = .milliseconds(200)
        let first = try Store.sqlite(at: path)
        let second = try Store.sqlite(at: path, quick)
        try await first.write { db in try db.execute("CREATE TABLE \(ident: "t") (\(ident: "x") INTEGER)") }

        let (holding, holdingContinuation) = AsyncStream<Void>.makeStream()
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await first.write { db in
                try db.execute("INSERT INTO \(ident: "t") VALUES (\(1))")
                holdingContinuation.yield()
                _ = release.wait(timeout: .now() + 600)
            }
        }
        for await _ in holding { break }
        let error = await #expect(throws: DatabaseError.self) {
            try await second.write { db in try db.execute("INSERT INTO \(ident: "t") VALUES (\(2))") }
        }
        #expect(error?.kind == .busy)
        #expect(error?.engineCode == "SQLITE_BUSY (5)")
        release.signal()
        try await holder.value
        // Once the lock is free the same write goes through: nothing was dropped silently.
        try await second.write { db in try db.execute("INSERT INTO \(ident: "t") VALUES (\(2))") }
        let values = try await second.read { db in try db.fetchAll(Int.self, "SELECT \(ident: "x") FROM \(ident: "t") ORDER BY 1") }
        #expect(values == [1, 2])
        await first.close()
        await second.close()
    }

    @Test func aReadOnlyStoreReadsAnotherProgramsFileAndLeavesItByteForByteWithNoFileBeside() async throws {
        let path = try temporaryDatabasePath("theirs.sqlite")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        // Their file, in the rollback-journal mode, made by SQLite itself.
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('theirs')", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var looking = SQLiteConfiguration()
        looking.isReadOnly = true
        let store = try Store.sqlite(at: path, looking)
        let bodies = try await store.read { db in try db.fetchAll(String.self, "SELECT body FROM notes") }
        #expect(bodies == ["theirs"])
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.execute("INSERT INTO notes VALUES ('ours')") }
        }
        #expect(error?.engineCode?.hasPrefix("SQLITE_READONLY") == true, "\(String(describing: error))")
        await store.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the same bytes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["theirs.sqlite"], "no -wal, -shm or -journal beside it")
        // A name where there is no file: nothing is made.
        let nowhere = folder.appendingPathComponent("none.sqlite").path
        #expect(throws: DatabaseError.self) { try Store.sqlite(at: nowhere, looking) }
        #expect(!FileManager.default.fileExists(atPath: nowhere))
    }

    @Test func fileStoresRunInWALModeWithForeignKeysOnEveryConnection() async throws {
        let store = try Store.sqlite(at: try temporaryDatabasePath())
        let mode = try await store.write { db in try db.fetchOne(String.self, "PRAGMA journal_mode") }
        #expect(mode == "wal")
        let readerKeys = try await store.read { db in try db.fetchOne(Int.self, "PRAGMA foreign_keys") }
        let writerKeys = try await store.write { db in try db.fetchOne(Int.self, "PRAGMA foreign_keys") }
        #expect(readerKeys == 1 && writerKeys == 1)
        await store.close()
    }

    @Test func strictTablesTakeEveryMappedType() async throws {
        struct Everything: Record, Equatable {
            static let tableName = "everything"
            var id: Int64?
            var flag: Bool
            var count: Int
            var ratio: Double
            var title: String
            var bytes: Data
            var when: Date
            var uuid: UUID
            var nested: [String: Int]
            var amount: Decimal
        }
        let store = Store.sqliteInMemory()
        let value = Everything(id: nil, flag: true, count: -3, ratio: 0.5, title: "t", bytes: Data([1]),
                               when: Date(timeIntervalSince1970: 1_000_000.25), uuid: UUID(), nested: ["a": 1],
                               amount: Decimal(string: "10.01")!)
        let saved = try await store.write { db in
            try db.execute("""
                CREATE TABLE "everything" ("id" \(type: .autoIncrementingPrimaryKey), "flag" \(type: .bool) NOT NULL,
                  "count" \(type: .integer) NOT NULL, "ratio" \(type: .double) NOT NULL, "title" \(type: .text) NOT NULL,
                  "bytes" \(type: .blob) NOT NULL, "when" \(type: .date) NOT NULL, "uuid" \(type: .uuid) NOT NULL,
                  "nested" \(type: .json) NOT NULL, "amount" \(type: .decimal) NOT NULL) STRICT
                """)
            return try db.insert(value)
        }
        var expected = value
        expected.id = saved.id
        #expect(saved == expected)
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.execute("UPDATE \(ident: "everything") SET \(ident: "count") = \("many")") }
        }
        #expect(error?.engineCode == "SQLITE_CONSTRAINT_DATATYPE (3091)")
    }

    @Test func storedDatesWorkWithSQLitesDateFunctionsAndSortAsText() async throws {
        let store = Store.sqliteInMemory()
        let dates = [Date(timeIntervalSince1970: 1_709_296_496.5), Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: 86_400 * 365)]
        let rows = try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "d") (\(ident: "at") \(type: .date))")
            for date in dates { try db.execute("INSERT INTO \(ident: "d") VALUES (\(date))") }
            return try db.fetchAll(Row.self, """
                SELECT strftime('%Y-%m-%d %H:%M:%f', "at") AS "formatted", "at" < \(Date(timeIntervalSince1970: 0)) AS "beforeEpoch"
                FROM "d" ORDER BY "at"
                """)
        }
        #expect(rows.map { $0["formatted"] } == [.text("1969-12-31 23:59:59.000"), .text("1971-01-01 00:00:00.000"), .text("2024-03-01 12:34:56.500")])
        #expect(rows.map { $0["beforeEpoch"] } == [.integer(1), .integer(0), .integer(0)])
    }

    @Test func aColumnFilledByCurrentTimestampDecodesAsADate() async throws {
        let store = Store.sqliteInMemory()
        let date = try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "d") (\(ident: "id") INTEGER PRIMARY KEY, \(ident: "at") TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)")
            try db.execute("INSERT INTO \(ident: "d") (\(ident: "id")) VALUES (\(1))")
            return try db.fetchOne(Date.self, "SELECT \(ident: "at") FROM \(ident: "d")")
        }
        #expect(abs((date ?? .distantPast).timeIntervalSinceNow) < 3600)
    }

    @Test func textThatIsNotUTF8IsADecodingError() async throws {
        let store = Store.sqliteInMemory()
        let error = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.fetchOne(String.self, "SELECT CAST(x'ff41' AS TEXT) AS \(ident: "bad")") }
        }
        #expect(error?.kind == .decoding)
        #expect(error?.column == "bad")
    }

    @Test func aFileThatIsNotADatabaseOrCannotBeCreatedIsAConnectionError() throws {
        let path = try temporaryDatabasePath("not-a-database.txt")
        try Data(String(repeating: "hello, not sqlite ", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: DatabaseError.self) { try Store.sqlite(at: path) }
        #expect(error?.kind == .connection)
        #expect(error?.message.contains("not-a-database.txt") == true, "\(String(describing: error))")
        let missing = "/nonexistent-\(UUID().uuidString)/db.sqlite"
        #expect(throws: DatabaseError.self) { try Store.sqlite(at: missing) }
    }

    @Test func inMemoryStoresAreSeparate() async throws {
        let a = Store.sqliteInMemory()
        let b = Store.sqliteInMemory()
        try await a.write { db in try db.execute("CREATE TABLE \(ident: "only_in_a") (\(ident: "x") INTEGER)") }
        await #expect(throws: DatabaseError.self) {
            try await b.read { db in try db.fetchAll(Row.self, "SELECT * FROM \(ident: "only_in_a")") }
        }
    }

    @Test func theSystemLibraryIsTheOneInUse() {
        #expect(Store.sqliteVersion.hasPrefix("3."))
    }
}

@Suite struct SQLiteSchemaChangeTests {
    @Test func aCachedSelectStarSeesColumnsAddedLater() async throws {
        struct Before: Decodable, Sendable { var a: Int }
        struct After: Decodable, Sendable { var a: Int; var b: String? }
        let store = Store.sqliteInMemory()
        let before = try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "t") (\(ident: "a") INTEGER)")
            try db.execute("INSERT INTO \(ident: "t") VALUES (\(1))")
            return try db.fetchAll(Before.self, "SELECT * FROM \(ident: "t")")
        }
        #expect(before.map(\.a) == [1])
        let after = try await store.write { db in
            try db.execute("ALTER TABLE \(ident: "t") ADD COLUMN \(ident: "b") TEXT")
            try db.execute("UPDATE \(ident: "t") SET \(ident: "b") = \("x")")
            return try db.fetchAll(After.self, "SELECT * FROM \(ident: "t")")
        }
        #expect(after.map(\.b) == ["x"])
    }
}

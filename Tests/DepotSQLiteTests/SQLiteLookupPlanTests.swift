@testable import DepotSQLite
import Foundation
import Testing

/// Which compiled programs `find` may stop after one row of: only those whose
/// every instruction runs once at most, which SQLite writes for a lookup by a
/// key it holds unique.
@Suite struct SQLiteLookupPlanTests {
    static let schema = """
        CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, score REAL NOT NULL);
        CREATE TABLE coded (code TEXT PRIMARY KEY, title TEXT);
        CREATE TABLE plain (code TEXT NOT NULL, title TEXT);
        CREATE TABLE indexed (code TEXT NOT NULL, title TEXT);
        CREATE UNIQUE INDEX indexed_code ON indexed (code);
        CREATE TABLE partial (code TEXT NOT NULL, title TEXT);
        CREATE UNIQUE INDEX partial_code ON partial (code) WHERE title IS NOT NULL;
        CREATE TABLE nocase (code TEXT NOT NULL COLLATE NOCASE, title TEXT);
        CREATE UNIQUE INDEX nocase_code ON nocase (code COLLATE BINARY);
        CREATE TABLE clustered (code TEXT PRIMARY KEY, title TEXT) WITHOUT ROWID;
        """

    func connection() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: ":memory:", role: .writer, configuration: SQLiteConfiguration(), isMemory: true)
        try connection.execute(script: Self.schema)
        return connection
    }

    @Test(arguments: [
        "SELECT * FROM items WHERE id = ?",
        "SELECT * FROM coded WHERE code = ?",
        "SELECT * FROM indexed WHERE code = ?",
        "SELECT * FROM clustered WHERE code = ?",
    ])
    func aLookupByAKeyTheEngineHoldsUniqueReturnsOneRowAtMost(_ sql: String) throws {
        #expect(try connection().compilesToOneRowAtMost(sql))
    }

    @Test(arguments: [
        // No constraint: two rows may share the key.
        "SELECT * FROM plain WHERE code = ?",
        // A partial index is unique only where its condition holds.
        "SELECT * FROM partial WHERE code = ?",
        // Unique as bytes, compared without case: 'a' and 'A' both match.
        "SELECT * FROM nocase WHERE code = ?",
        // Loops: over a list, a range, a whole table, a join.
        "SELECT * FROM items WHERE id IN (?, ?)",
        "SELECT * FROM items WHERE id >= ?",
        "SELECT * FROM items",
        "SELECT * FROM items JOIN coded ON coded.title = items.title WHERE items.id = ?",
        // A unique key under an OR, or next to another lookup.
        "SELECT * FROM items WHERE id = ? OR title = ?",
        "SELECT * FROM items WHERE id = ? UNION ALL SELECT * FROM items WHERE id = ?",
        // Not a query at all, or not one that compiles.
        "DELETE FROM items WHERE id = ?",
        "SELECT * FROM missing WHERE id = ?",
    ])
    func anyOtherProgramMayReturnMore(_ sql: String) throws {
        #expect(try !connection().compilesToOneRowAtMost(sql))
    }

    @Test func lookingAtAProgramRunsNothingAndRecordsNoWrite() throws {
        let connection = try connection()
        _ = connection.takeWrittenTables()
        #expect(!connection.compilesToOneRowAtMost("INSERT INTO items (title, score) VALUES ('a', 1)"))
        #expect(connection.takeWrittenTables().isEmpty, "an EXPLAIN writes nothing, so it leaves no written table behind")
    }
}

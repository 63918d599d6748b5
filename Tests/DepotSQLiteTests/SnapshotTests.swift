import Depot
import DepotSQLite
import DepotTesting
import Foundation
import Testing

/// DepotTesting's snapshot tables: aligned, exact, one line per row.
@Suite struct SnapshotTests {
    @Test func rowsBecomeAnAlignedTableWithEveryValueExact() async throws {
        let store = Store.sqliteInMemory()
        let table = try await store.write { db -> String in
            try db.execute("CREATE TABLE lists (id INTEGER PRIMARY KEY, title TEXT, score REAL, image BLOB)")
            try db.execute("INSERT INTO lists VALUES (1, 'Inbox', 0.1, x'00FF'), (22, NULL, -2.5, NULL), (3, \("two\nlines\t\\ end"), 1e300, x'')")
            return try db.snapshot("SELECT id, title, score, image FROM lists ORDER BY id")
        }
        #expect(table == #"""
            id | title              | score  | image
            ---+--------------------+--------+--------
            1  | Inbox              | 0.1    | x'00FF'
            3  | two\nlines\t\\ end | 1e+300 | x''
            22 | NULL               | -2.5   | NULL
            """#)
        await store.close()
    }

    @Test func noRowsIsTheHeaderAlone() async throws {
        let store = Store.sqliteInMemory()
        let table = try await store.read { db in try db.fetchAll(Row.self, "SELECT 1 AS a WHERE 0") }
        #expect(Snapshot.table(table, columns: ["a", "b"]) == "a | b\n--+--")
        #expect(Snapshot.cell(.date(Date(timeIntervalSince1970: 0.000_001))) == "1970-01-01 00:00:00.000001")
        await store.close()
    }
}

@testable import Depot
import Foundation
import Testing

@Suite struct SQLTests {
    let dialect = OddDialect()

    @Test func everyPlainInterpolationIsBoundEvenALiteral() throws {
        let name = "O'Brien"
        let sql: SQL = "SELECT * FROM t WHERE a = \(name) AND b = \("x'; DROP TABLE t; --") AND c = \(3)"
        let (text, values) = try sql.rendered(for: dialect)
        #expect(text == "SELECT * FROM t WHERE a = :p1 AND b = :p2 AND c = :p3")
        #expect(values == [.text("O'Brien"), .text("x'; DROP TABLE t; --"), .integer(3)])
    }

    @Test func optionalsBindNullAndEnumsTheirRawValue() throws {
        enum Level: Int, Codable { case high = 9 }
        let missing: Date? = nil
        let (_, values) = try SQL("\(missing) \(Level.high) \(Optional(Level.high))").rendered(for: dialect)
        #expect(values == [.null, .integer(9), .integer(9)])
    }

    @Test func listsAndFragmentsCompose() throws {
        let filter: SQL = "\(ident: "id") IN \(list: [1, 2, 3])"
        let sql: SQL = "SELECT 1 WHERE \(filter) AND \(ident: "x") IN \(list: [String]())"
        let (text, values) = try sql.rendered(for: dialect)
        #expect(text == "SELECT 1 WHERE [id] IN (:p1, :p2, :p3) AND [x] IN (NULL)")
        #expect(values.count == 3)
        #expect(sql.description == "SELECT 1 WHERE \"id\" IN (?, ?, ?) AND \"x\" IN (NULL)")
    }

    @Test func unsafeRawIsPastedAsIs() throws {
        let order = "DESC"
        let (text, values) = try SQL("ORDER BY x \(unsafeRaw: order)").rendered(for: dialect)
        #expect(text == "ORDER BY x DESC" && values.isEmpty)
    }

    @Test func aValueThatCannotBeEncodedFailsWhenRendered() {
        #expect(throws: DatabaseError.self) { try SQL("SELECT \(Double.nan)").rendered(for: dialect) }
        #expect(throws: DatabaseError.self) { try SQL("SELECT \(UInt64.max)").rendered(for: dialect) }
    }
}

@Suite struct ValueAndErrorTextTests {
    @Test func valuesDescribeThemselvesShortly() {
        #expect(Value.text(String(repeating: "a", count: 100)).description == "TEXT '\(String(repeating: "a", count: 40))…' (100 bytes)")
        #expect(Value.text("it's").description == "TEXT 'it''s'")
        #expect(Value.blob(Data(repeating: 0xab, count: 20)).description == "BLOB x'abababababababababababababababab…' (20 bytes)")
        #expect(Value.date(Date(timeIntervalSince1970: 0)).description == "DATE 1970-01-01 00:00:00")
    }

    @Test func databaseErrorsReadAsOneLine() {
        var error = DatabaseError(.unique, "UNIQUE constraint failed: lists.title", engineCode: "SQLITE_CONSTRAINT_UNIQUE (2067)",
                                  table: "lists", column: "title", sql: "INSERT INTO lists VALUES (?1)")
        #expect(error.description == "unique error [SQLITE_CONSTRAINT_UNIQUE (2067)]: UNIQUE constraint failed: lists.title (table: lists, column: title, sql: INSERT INTO lists VALUES (?1))")
        error.boundValues = [.text("Groceries")]
        #expect(error.description.hasSuffix("values: [TEXT 'Groceries'])"))
    }

    @Test func snakeCaseConversions() {
        let cases = ["id": "id", "dueDate": "due_date", "remindersListID": "reminders_list_id", "URL": "url",
                     "isURLValid": "is_url_valid", "already_snake": "already_snake", "value2": "value2", "a1B": "a1_b"]
        for (key, column) in cases {
            #expect(KeyStrategy.snakeCase.columnName(for: key) == column, "\(key)")
        }
    }
}

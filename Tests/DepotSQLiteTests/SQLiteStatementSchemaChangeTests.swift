@testable import DepotSQLite
import Foundation
import Testing

/// SQLite's own word for a schema change: the authorizer's actions while it
/// compiles a statement, whatever the statement's text begins with. (A
/// `CREATE TABLE IF NOT EXISTS` of a table that exists says yes: a re-prepare
/// is all a wrong yes costs.)
@Suite struct SQLiteStatementSchemaChangeTests {
    func connection() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: ":memory:", role: .writer, configuration: SQLiteConfiguration(), isMemory: true)
        try connection.execute(script: """
            CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT);
            CREATE VIEW titles AS SELECT title FROM items;
            CREATE TRIGGER items_touch AFTER UPDATE ON items BEGIN SELECT 1; END;
            CREATE INDEX items_title ON items (title)
            """)
        return connection
    }

    @Test(arguments: [
        "CREATE TABLE other (id INTEGER)",
        "-- a note first\nCREATE TABLE other (id INTEGER)",
        "/* a note */ alter TABLE items ADD COLUMN extra TEXT",
        "\n\n  drop VIEW titles",
        "DROP TRIGGER items_touch",
        "DROP INDEX items_title",
        "CREATE TEMP TABLE scratch (x)",
        "CREATE VIEW again AS SELECT 1",
        "ALTER TABLE items RENAME TO renamed",
    ])
    func aStatementThatChangesTheSchemaSaysSo(_ sql: String) throws {
        let statement = try connection().prepare(sql)
        #expect(statement.changedSchema, "\(sql.debugDescription) changes the schema")
    }

    @Test(arguments: [
        "INSERT INTO items (title) VALUES ('a')",
        "UPDATE items SET title = 'b'",
        "DELETE FROM items",
        "SELECT * FROM titles",
        "-- CREATE TABLE x (y)\nSELECT 1",
        "SELECT 'DROP TABLE items'",
    ])
    func aStatementThatChangesNoSchemaSaysSo(_ sql: String) throws {
        let statement = try connection().prepare(sql)
        #expect(!statement.changedSchema, "\(sql.debugDescription) changes no schema")
    }
}

import Depot
import Foundation

/// Keys mean the same on every engine: a generated key is never given twice,
/// a nil key is generated or refused, and a URL reads back as stored.
enum KeyChecks {
    struct Counted: Record, Equatable {
        static var tableName: String { "counted" }
        var id: Int64?
        var name: String
    }

    struct OnlyKey: Record, Equatable {
        static var tableName: String { "only_key" }
        var id: Int64?
    }

    struct TextKeyed: Record, Equatable {
        static var tableName: String { "text_keyed" }
        var id: String?
        var name: String
    }

    struct Link: Decodable {
        var link: URL
    }

    /// A record whose table has no column named by the default key, `id`.
    struct Unkeyed: Record, Equatable {
        static var tableName: String { "unkeyed" }
        var value: String
    }

    /// A record keyed by a column of another name, with keys it gives.
    struct Coded: Record, Equatable {
        static var tableName: String { "coded" }
        static var primaryKey: [String] { ["code"] }
        var code: Int64
        var label: String
    }

    /// A record keyed by two integer columns.
    struct Paired: Record, Equatable {
        static var tableName: String { "paired" }
        static var primaryKey: [String] { ["left", "right"] }
        var left: Int64
        var right: Int64
        var label: String
    }

    /// A record that declares no key at all.
    struct Keyless: Record, Equatable {
        static var tableName: String { "keyless" }
        static var primaryKey: [String] { [] }
        var note: String
        var count: Int64
    }

    static let all: [ConformanceCheck] = [
        // Ported from peers' suites (sqlx, GRDB, sql-kit): records on tables that are not keyed by `id`.
        ConformanceCheck("records: a record whose table has no column named by its default key is inserted and read back") { context in
            let store = try await context.makeStore()
            let rows = try await store.write { db in
                try createTable(db, "unkeyed", [("value", .text, "NOT NULL")])
                try db.insert(Unkeyed(value: "foo"))
                try db.insert(contentsOf: [Unkeyed(value: "bar"), Unkeyed(value: "foo")])
                _ = try db.insertWithoutReturning(Unkeyed(value: "baz"))
                return try db.fetchAll(Unkeyed.self, "SELECT * FROM \(ident: "unkeyed") ORDER BY \(ident: "value")")
            }
            try expectEqual(rows.map(\.value), ["bar", "baz", "foo", "foo"], "the rows of a table without an id column")
        },
        ConformanceCheck("records: a key of another name, of two columns, or none at all: insert, find, update and delete") { context in
            let store = try await context.makeStore()
            let (coded, paired, keyless) = try await store.write { db in
                try createTable(db, "coded", [("code", .integer, "PRIMARY KEY"), ("label", .text, "NOT NULL")])
                try db.execute("""
                    CREATE TABLE \(ident: "paired") (\(ident: "left") \(type: .integer) NOT NULL, \(ident: "right") \(type: .integer) NOT NULL,
                        \(ident: "label") \(type: .text) NOT NULL, PRIMARY KEY (\(ident: "left"), \(ident: "right")))
                    """)
                try createTable(db, "keyless", [("note", .text, "NOT NULL"), ("count", .integer, "NOT NULL")])
                try db.insert(Coded(code: 7, label: "seven"))
                try db.insert(Coded(code: 3, label: "three"))
                try db.update(Coded(code: 7, label: "SEVEN"))
                try db.insert(Paired(left: 1, right: 2, label: "one-two"))
                try db.insert(Paired(left: 2, right: 1, label: "two-one"))
                _ = try db.delete(Paired(left: 1, right: 2, label: "one-two"))
                try db.insert(Keyless(note: "a", count: 1))
                try db.insert(Keyless(note: "a", count: 1))
                let coded = try db.find(Coded.self, id: Int64(7))
                let paired = try db.fetchAll(Paired.self, "SELECT * FROM \(ident: "paired") ORDER BY \(ident: "left")")
                let keyless = try db.fetchAll(Keyless.self, "SELECT * FROM \(ident: "keyless")")
                return (coded, paired, keyless)
            }
            try expectEqual(coded, Coded(code: 7, label: "SEVEN"), "a record found and updated by a key named code")
            try expectEqual(paired, [Paired(left: 2, right: 1, label: "two-one")], "records keyed by two columns after a delete")
            try expectEqual(keyless, [Keyless(note: "a", count: 1), Keyless(note: "a", count: 1)], "a record without a key, inserted twice")
        },
        ConformanceCheck("records: a generated key is never given twice, even after every row is deleted") { context in
            let store = try await context.makeStore()
            let (before, after) = try await store.write { db -> ([Int64], [Int64]) in
                try createTable(db, "counted", [("id", .autoIncrementingPrimaryKey, ""), ("name", .text, "NOT NULL")])
                let before = try (0..<3).map { try db.insert(Counted(id: nil, name: "first \($0)")).id ?? -1 }
                try db.execute("DELETE FROM \(ident: "counted")")
                let after = try (0..<2).map { try db.insert(Counted(id: nil, name: "second \($0)")).id ?? -1 }
                return (before, after)
            }
            let largest = before.max() ?? 0
            try expect(after.allSatisfy { $0 > largest }, "keys after deleting every row: \(after), given before: \(before)")
            // And across accesses: the largest row deleted alone.
            let again = try await store.write { db -> Int64 in
                try db.execute("DELETE FROM \(ident: "counted") WHERE \(ident: "id") = \(after.max() ?? 0)")
                return try db.insert(Counted(id: nil, name: "third")).id ?? -1
            }
            try expect(again > (after.max() ?? 0), "a key after deleting the largest row: \(again), given before: \(after)")
        },
        ConformanceCheck("records: upsert of a record whose only column is a nil key inserts a new row") { context in
            let store = try await context.makeStore()
            let (first, second, count) = try await store.write { db in
                try createTable(db, "only_key", [("id", .autoIncrementingPrimaryKey, "")])
                let first = try db.upsert(OnlyKey(id: nil))
                let second = try db.upsert(OnlyKey(id: nil))
                let count = try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "only_key")") ?? -1
                return (first, second, count)
            }
            try expect(first.id != nil && second.id != nil && first.id != second.id, "two upserts of a nil key gave \(first.id as Any) and \(second.id as Any)")
            try expectEqual(count, 2, "rows after two upserts of a nil key")
            let again = try await store.write { db in try db.upsert(OnlyKey(id: first.id)) }
            try expectEqual(again, first, "an upsert of an existing key-only row")
        },
        ConformanceCheck("records: a nil key the engine cannot generate is a notNull error, and nothing is stored") { context in
            let store = try await context.makeStore()
            try await store.write { db in try createTable(db, "text_keyed", [("id", .text, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            for (name, write) in [("insert", { @Sendable (db: Database) throws in _ = try db.insert(TextKeyed(id: nil, name: "x")) }),
                                  ("upsert", { @Sendable (db: Database) throws in _ = try db.upsert(TextKeyed(id: nil, name: "x")) })] {
                let error = try await expectError(.notNull, "\(name) of a nil text key") {
                    try await store.write { db in try write(db) }
                }
                try expect(error.column == "id" || error.message.contains("id"), "the error names the key column: \(error)")
                let kept = try await store.write { db -> Int in
                    try? db.savepoint { db in try write(db) }
                    return try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "text_keyed")") ?? -1
                }
                try expectEqual(kept, 0, "rows stored by a failed \(name) in a savepoint")
            }
        },
        ConformanceCheck("values: a URL reads back as the exact text stored, or is a decoding error; never from JSON") { context in
            let store = try await context.makeStore()
            let url = try await store.read { db in try db.fetchOne(Link.self, "SELECT \("https://example.com/a%20b?q=1#f") AS \(ident: "link")")?.link }
            try expectEqual(url?.absoluteString, "https://example.com/a%20b?q=1#f", "a URL read from text")
            // (A decimal with trailing zeros is not here: PostgreSQL's numeric reads as a
            // Decimal, which keeps no scale, so as text it loses them, for String as for URL.)
            let stored: [(String, ColumnType, String)] = [("a UUID", .uuid, "0a1b2c3d-0000-4000-8000-000000000001"), ("JSON", .json, "null"),
                                                          ("JSON text", .json, "\"https://example.com/\"")]
            for (what, type, literal) in stored {
                let outcome = try await store.write { db -> Result<URL?, DatabaseError> in
                    try db.execute("DROP TABLE IF EXISTS \(ident: "links")")
                    try createTable(db, "links", [("id", .integer, "PRIMARY KEY"), ("link", type, "")])
                    try db.execute("INSERT INTO \(ident: "links") VALUES (1, CAST(\(literal) AS \(castType: type)))")
                    do {
                        return .success(try db.savepoint { db in try db.fetchOne(Link.self, "SELECT \(ident: "link") FROM \(ident: "links")")?.link })
                    } catch let error as DatabaseError {
                        return .failure(error)
                    }
                }
                switch outcome {
                case .success(let url):
                    try expectEqual(url?.absoluteString, literal, "a URL read from \(what) stored as text")
                case .failure(let error):
                    try expectEqual(error.kind, .decoding, "reading a URL from \(what): \(error)")
                    try expectEqual(error.column, "link", "the column named by the error")
                }
            }
        },
    ]
}

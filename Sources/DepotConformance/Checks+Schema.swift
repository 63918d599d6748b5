import Depot
import Foundation

/// What migrations made, read back; and a schema check that names every
/// way a model and its tables can drift apart.
enum SchemaChecks {
    @Columns
    struct Gadget: Record, Equatable {
        static var tableName: String { "gadgets" }
        var id: Int64
        var name: String
        var weight: Double?
        var madeAt: Date
    }

    /// The gadgets table as the model reads it, with one change: a column renamed, added, retyped or made nullable.
    static func gadgets(_ db: Database, renaming: (String, String)? = nil, adding: String? = nil, retyping: (String, ColumnType)? = nil, nullable: String? = nil) throws {
        var columns: [(String, ColumnType, String)] = [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL"), ("weight", .double, ""), ("madeAt", .date, "NOT NULL")]
        columns = columns.map { column in
            var (name, type, constraints) = column
            if let (from, to) = renaming, name == from { name = to }
            if let (target, newType) = retyping, name == target { type = newType }
            if name == nullable { constraints = "" }
            return (name, type, constraints)
        }
        if let adding { columns.append((adding, .text, "NOT NULL")) }
        try createTable(db, "gadgets", columns)
    }

    static func check() -> SchemaCheck {
        var check = SchemaCheck()
        check.add(Gadget.self)
        check.add(query: "heavy gadgets") { db in _ = try db.fetchAll(Gadget.where { $0.weight > 1.5 }.order { $0.name }) }
        return check
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("migrations: the tables a migration made read back as columns, NULLs, primary keys and indexes") { context in
            let store = try await context.makeStore()
            let (shelves, names, missing) = try await store.write { db in
                let key: SQL = "\(unsafeRaw: db.dialect.keyTextTypeName)"
                try db.execute("""
                    CREATE TABLE \(ident: "shelves") (\(ident: "room") \(type: .integer) NOT NULL, \(ident: "place") \(type: .integer) NOT NULL,
                      \(ident: "label") \(key), \(ident: "code") \(key) NOT NULL, PRIMARY KEY (\(ident: "place"), \(ident: "room")),
                      CONSTRAINT \(ident: "shelves_code") UNIQUE (\(ident: "code")))
                    """)
                try db.execute("CREATE INDEX \(ident: "shelves_by_label") ON \(ident: "shelves") (\(ident: "label"), \(ident: "room"))")
                return (try db.tableSchema("shelves"), try db.tableNames(), try db.tableSchema("no_such_table"))
            }
            guard let shelves else { throw ConformanceFailure("tableSchema found no shelves table") }
            try expect(names.contains("shelves"), "tableNames holds shelves: \(names)")
            try expect(missing == nil, "a table that is not there has no schema: \(String(describing: missing))")
            try expectEqual(shelves.columns.map(\.name), ["room", "place", "label", "code"], "the columns, in order")
            try expectEqual(shelves.columns.map(\.isNotNull), [true, true, false, true], "NOT NULL of each column")
            try expectEqual(shelves.primaryKey, ["place", "room"], "the primary key, in its order")
            let indexes = shelves.indexes.filter { $0.columns != ["code"] || $0.isUnique }
            try expect(shelves.indexes.contains { $0.isUnique && $0.columns == ["code"] }, "the unique constraint is a unique index: \(shelves.indexes)")
            try expect(indexes.contains { $0.name == "shelves_by_label" && !$0.isUnique && $0.columns == ["label", "room"] }, "the index, its columns in order: \(shelves.indexes)")
            try expect(!shelves.indexes.contains { $0.columns == ["place", "room"] }, "the primary key's index is left out: \(shelves.indexes)")
        },
        ConformanceCheck("migrations: a schema check names a renamed property, a column the model lacks, a changed type and a NULL the model cannot read, with both sides") { context in
            let cases: [(String, @Sendable (Database) throws -> Void, [String])] = [
                ("the model's own table", { db in try gadgets(db) }, []),
                ("a column renamed without the model", { db in try gadgets(db, renaming: ("name", "title")) },
                 ["table gadgets, column name: Gadget reads it; the table has no such column", "table gadgets, column title: the table has it", "query heavy gadgets:"]),
                ("a column the model does not have", { db in try gadgets(db, adding: "color") },
                 ["table gadgets, column color: the table has it (", "NOT NULL); Gadget does not read it"]),
                ("a column of another type", { db in try gadgets(db, retyping: ("weight", .text)) },
                 ["table gadgets, column weight: Gadget reads floating point (double); the table declares "]),
                ("a NULL the model cannot read", { db in try gadgets(db, nullable: "madeAt") },
                 ["table gadgets, column madeAt: Gadget never holds nil (a property that is not optional); the table allows NULL"]),
            ]
            let check = check()
            var snapshots: [String: String] = [:]
            for (name, migrate, expected) in cases {
                let store = try await context.makeStore()
                try await store.write { db in try migrate(db) }
                let (differences, snapshot) = try await store.read { db in (try check.differences(db), try SchemaCheck.snapshot(db)) }
                snapshots[name] = snapshot
                if expected.isEmpty {
                    try expectEqual(differences, [], "\(name): the differences")
                }
                for piece in expected {
                    try expect(differences.contains { $0.contains(piece) }, "\(name): a difference says \"\(piece)\": \(differences)")
                }
                // A query over a retyped column may fail too on a strict engine (text > double): that is the query's line.
                let tableLines = differences.filter { !$0.hasPrefix("query ") }
                try expect(tableLines.count <= expected.filter { !$0.hasPrefix("query ") }.count, "\(name): only these differences: \(differences)")
            }
            // Against the model's own table as a snapshot, a retyped column is named with both sides.
            let drift = SchemaCheck.differences(snapshot: snapshots["a column of another type"] ?? "", expected: snapshots["the model's own table"] ?? "")
            try expectEqual(drift.count, 1, "one line differs from the snapshot: \(drift)")
            try expect(drift.first?.hasPrefix("table gadgets, column weight: the snapshot has \"column weight ") == true, "\(drift)")
            let added = SchemaCheck.differences(snapshot: snapshots["a column the model does not have"] ?? "", expected: snapshots["the model's own table"] ?? "")
            try expect(added.count == 1 && added.first?.hasPrefix("table gadgets, column color: the database has \"column color ") == true, "\(added)")
        },
    ]
}

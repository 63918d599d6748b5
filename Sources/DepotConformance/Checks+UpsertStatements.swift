import Depot

/// `Database.insert(into:columns:_:onConflict:)`: an upsert of many rows
/// with expressions, one meaning on every engine.
enum UpsertStatementChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("sql: an upsert statement inserts or updates rows by its target; an assignment reads the stored row as it was and the inserted values", updates),
        ConformanceCheck("sql: an upsert statement that does nothing keeps the stored rows, from VALUES and from a SELECT", keeps),
        ConformanceCheck("sql: an upsert statement whose target is no unique key is syntax; a clash on another unique key changes no row", refusals),
    ]

    struct Counter: Decodable, Equatable { var name: String; var count: Int64; var seen: Int64 }

    static func countersStore(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in
            try db.execute("""
                CREATE TABLE \(ident: "counters") (\(ident: "name") \(keyType: .text) PRIMARY KEY, \(ident: "count") \(type: .integer) NOT NULL,
                    \(ident: "seen") \(type: .integer) NOT NULL)
                """)
            try db.execute("INSERT INTO \(ident: "counters") VALUES ('a', 1, 0), ('b', 2, 0)")
        }
        return store
    }

    static func counters(_ store: Store) async throws -> [Counter] {
        try await store.read { db in
            try db.fetchAll(Counter.self, "SELECT \(ident: "name"), \(ident: "count"), \(ident: "seen") FROM \(ident: "counters") ORDER BY \(ident: "name")")
        }
    }

    static func updates(_ context: ConformanceContext) async throws {
        let store = try await countersStore(context)
        try await store.write { db in
            // `count` is set first; `seen` still reads the stored count, as it was before the statement.
            try db.insert(into: "counters", columns: ["name", "count", "seen"], "VALUES ('a', 10, 0), ('c', 3, 0)", onConflict: .update(["name"], set: [
                .init("count", "\(ident: "counters").\(ident: "count") + \(inserted: "count")"),
                .init("seen", "\(ident: "counters").\(ident: "count")"),
            ]))
        }
        try expectEqual(try await counters(store), [Counter(name: "a", count: 11, seen: 1), Counter(name: "b", count: 2, seen: 0), Counter(name: "c", count: 3, seen: 0)],
                        "the counters after adding to a and inserting c")
        try await store.write { db in
            try db.insert(into: "counters", columns: ["name", "count", "seen"], "VALUES (\("b"), \(Int64(7)), \(Int64(5)))",
                          onConflict: .update(["name"], setting: ["count", "seen"]))
            // No assignment: the stored row stays as it is.
            try db.insert(into: "counters", columns: ["name", "count", "seen"], "VALUES ('c', 99, 99)", onConflict: .update(["name"], set: []))
        }
        try expectEqual(try await counters(store), [Counter(name: "a", count: 11, seen: 1), Counter(name: "b", count: 7, seen: 5), Counter(name: "c", count: 3, seen: 0)],
                        "the counters after setting b to the inserted values and updating c with nothing")
    }

    static func keeps(_ context: ConformanceContext) async throws {
        let store = try await countersStore(context)
        try await store.write { db in
            try db.insert(into: "counters", columns: ["name", "count", "seen"], "VALUES ('a', 10, 10), ('d', 4, 0)", onConflict: .doNothing(["name"]))
            // From a SELECT (with a WHERE: SQLite's parser would take ON CONFLICT for a join's ON without one).
            try db.insert(into: "counters", columns: ["name", "count", "seen"], """
                SELECT \(ident: "name") || 'x', \(ident: "count"), 1 FROM \(ident: "counters") WHERE \(ident: "count") < 3
                UNION ALL SELECT 'b', 50, 50 FROM \(ident: "counters") WHERE \(ident: "name") = 'a'
                """, onConflict: .doNothing(["name"]))
        }
        try expectEqual(try await counters(store), [
            Counter(name: "a", count: 1, seen: 0), Counter(name: "ax", count: 1, seen: 1), Counter(name: "b", count: 2, seen: 0),
            Counter(name: "bx", count: 2, seen: 1), Counter(name: "d", count: 4, seen: 0),
        ], "the counters after inserts that keep what is stored")
    }

    static func refusals(_ context: ConformanceContext) async throws {
        let store = try await countersStore(context)
        try await expectError(.syntax, "an upsert whose target is no unique key") {
            try await store.write { db in
                try db.insert(into: "counters", columns: ["name", "count", "seen"], "VALUES ('a', 5, 5)", onConflict: .update(["count"], setting: ["seen"]))
            }
        }
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "tags") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: "label") \(keyType: .text) NOT NULL UNIQUE)")
            try db.execute("INSERT INTO \(ident: "tags") VALUES (1, 'red'), (2, 'blue')")
        }
        // id 3 is new, but its label clashes with row 1's: no engine may take that for a conflict of the target.
        let error = try await expectAnyError("an upsert clashing on a unique key other than its target") {
            try await store.write { db in
                try db.insert(into: "tags", columns: ["id", "label"], "VALUES (3, 'red')", onConflict: .update(["id"], setting: ["label"]))
            }
        }
        try expect(error.kind == .unique || error.kind == .misuse, "the clash on another unique key is unique (or misuse where the engine's clause cannot tell): \(error)")
        let labels = try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "label") FROM \(ident: "tags") ORDER BY \(ident: "id")") }
        try expectEqual(labels, ["red", "blue"], "the tags after the refused upsert")
    }

    /// The error `body` throws, whatever its kind.
    static func expectAnyError<T>(_ what: String, _ body: () async throws -> T) async throws -> DatabaseError {
        do {
            let value = try await body()
            throw ConformanceFailure("\(what): expected an error, but it succeeded with \(value)")
        } catch let error as DatabaseError {
            return error
        }
    }
}

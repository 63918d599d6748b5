import Depot
import Foundation

/// Interpolated values are bound, identifiers quoted, statements reusable.
enum SQLChecks {
    static let attacks = [
        "'; DROP TABLE \"boxes\"; --",
        "Robert'); DROP TABLE boxes;--",
        "\" OR 1=1 --",
        "1; DELETE FROM boxes",
        "?1 $1 :name @name",
        "\\'; SELECT 1; --",
        "%_\\",
    ]

    static let all: [ConformanceCheck] = [
        ConformanceCheck("sql: injection attempts are stored and matched verbatim") { context in
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .text, attacks), attacks, "hostile strings")
            for (index, attack) in attacks.enumerated() {
                let id = try await store.read { db in
                    try db.fetchOne(Int64.self, "SELECT \(ident: "id") FROM \(ident: "boxes") WHERE \(ident: "value") = \(attack)")
                }
                try expectEqual(id, Int64(index + 1), "looking up \(attack)")
            }
        },
        ConformanceCheck("sql: identifiers keep their case and may hold quotes") { context in
            let store = try await context.makeStore()
            let table = "Weird \"Table\" Name"
            let rows = try await store.write { db in
                try db.execute("CREATE TABLE \(ident: table) (\(ident: "camelCase") \(type: .integer), \(ident: "lower") \(type: .text))")
                try db.execute("INSERT INTO \(ident: table) (\(ident: "camelCase"), \(ident: "lower")) VALUES (\(1), \("x"))")
                return try db.fetchAll(Row.self, "SELECT * FROM \(ident: table)")
            }
            try expectEqual(rows.first?.columns.names, ["camelCase", "lower"], "column names as declared")
            try expectEqual(rows.first?["camelCase"], .integer(1), "the camelCase column's value")
        },
        ConformanceCheck("sql: refreshing the planner's statistics in a write, of tables named with quotes, changes no row") { context in
            let store = try await context.makeStore()
            _ = try await roundTrip(store, .integer, Array(1...300))
            let table = "Weird \"Stats\" Table"
            let (count, sum) = try await store.write { db in
                try db.execute("CREATE TABLE \(ident: table) (\(ident: "n") \(type: .integer))")
                try db.execute("INSERT INTO \(ident: table) SELECT \(ident: "value") FROM \(ident: "boxes")")
                try db.refreshStatistics(of: ["boxes", table])
                // The transaction goes on after the refresh.
                try db.execute("INSERT INTO \(ident: table) VALUES (\(1_000))")
                return (try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: table)"), try db.fetchOne(Int.self, "SELECT sum(\(ident: "n")) FROM \(ident: table)"))
            }
            try expectEqual(count, 301, "rows after the refresh")
            try expectEqual(sum, 45_150 + 1_000, "their values")
            try await store.write { db in try db.refreshStatistics(of: []) }
        },
        ConformanceCheck("sql: IN lists bind each value; an empty list matches nothing") { context in
            let store = try await context.makeStore()
            _ = try await roundTrip(store, .integer, [10, 20, 30, 40])
            let some = try await store.read { db in
                try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "boxes") WHERE \(ident: "value") IN \(list: [20, 40]) ORDER BY \(ident: "id")")
            }
            try expectEqual(some, [2, 4], "ids with values in [20, 40]")
            let none = try await store.read { db in
                try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "boxes") WHERE \(ident: "value") IN \(list: [Int]())")
            }
            try expectEqual(none, [], "ids with values in []")
        },
        ConformanceCheck("sql: one statement runs many times with different values") { context in
            let store = try await context.makeStore()
            _ = try await roundTrip(store, .integer, Array(1...50))
            let sums = try await store.read { db in
                try (1...50).map { n in try db.fetchOne(Int.self, "SELECT \(ident: "value") FROM \(ident: "boxes") WHERE \(ident: "id") = \(n)") ?? -1 }
            }
            try expectEqual(sums, Array(1...50), "values read by a reused statement")
        },
        ConformanceCheck("sql: invalid SQL is a syntax error that quotes the statement") { context in
            let store = try await context.makeStore()
            let error = try await expectError(.syntax, "running SELEKT") {
                try await store.read { db in try db.execute("SELEKT 1") }
            }
            try expectEqual(error.sql, "SELEKT 1", "the SQL in the error")
            try expect(error.engineCode != nil, "the error carries the engine's code: \(error)")
            try await expectError(.syntax, "querying a table that does not exist") {
                try await store.read { db in try db.fetchAll(Row.self, "SELECT * FROM \(ident: "nowhere")") }
            }
        },
        ConformanceCheck("sql: a script runs several statements but binds nothing") { context in
            let store = try await context.makeStore()
            let count = try await store.write { db in
                try db.execute(script: """
                    CREATE TABLE "a" ("x" \(type: .integer));
                    INSERT INTO "a" VALUES (1);
                    INSERT INTO "a" VALUES (2);
                    """)
                return try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "a")")
            }
            try expectEqual(count, 2, "rows inserted by the script")
            try await expectError(.misuse, "a script with a bound value") {
                try await store.write { db in try db.execute(script: "INSERT INTO \(ident: "a") VALUES (\(3))") }
            }
        },
        ConformanceCheck("sql: a schema change the engine runs refreshes what the connection keeps, however its text begins") { context in
            // The connection keeps prepared statements and facts about tables; a schema change
            // must reach them whether it begins with a comment, a blank line or a lowercase word.
            let store = try await context.makeStore()
            try await store.write { db in
                try db.execute("CREATE TABLE \(ident: "widened") (\(ident: "a") \(type: .integer) PRIMARY KEY)")
                try db.execute("INSERT INTO \(ident: "widened") (\(ident: "a")) VALUES (\(1))")
            }
            let select: SQL = "SELECT * FROM \(ident: "widened") ORDER BY \(ident: "a")"
            for (number, lead) in ["-- widen the table\n", "/* widen */ ", "\n\n", "/* a\nlonger note */\n-- and a line\n"].enumerated() {
                let column = "b\(number)"
                let rows = try await store.write { db -> [Row] in
                    _ = try db.fetchAll(Row.self, select) // prepared and kept
                    try db.execute(SQL(unsafeRaw: lead) + "alter TABLE \(ident: "widened") ADD \(ident: column) \(type: .integer)")
                    try db.execute("UPDATE \(ident: "widened") SET \(ident: column) = \(Int64(number))")
                    return try db.fetchAll(Row.self, select)
                }
                try expectEqual(rows.first?.columns.names, ["a"] + (0...number).map { "b\($0)" }, "columns of SELECT * after a schema change led by \(lead.debugDescription)")
                try expectEqual(rows.first?[column], .integer(Int64(number)), "the new column's value")
            }
        },
    ]
}

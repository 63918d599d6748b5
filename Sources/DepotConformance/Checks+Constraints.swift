import Depot
import Foundation

/// Constraint violations land in the same category on every engine.
enum ConstraintChecks {
    static func parentsAndChildren(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in
            try db.execute(script: """
                CREATE TABLE "parents" (
                    "id" \(type: .integer) PRIMARY KEY,
                    "name" \(type: .text) NOT NULL UNIQUE,
                    "age" \(type: .integer),
                    CONSTRAINT "age_is_positive" CHECK ("age" > 0));
                CREATE TABLE "children" (
                    "id" \(type: .integer) PRIMARY KEY,
                    "parentID" \(type: .integer) NOT NULL REFERENCES "parents" ("id") ON DELETE CASCADE);
                """)
            try db.execute("INSERT INTO \(ident: "parents") VALUES (\(1), \("Ada"), \(36))")
            try db.execute("INSERT INTO \(ident: "children") VALUES (\(1), \(1))")
        }
        return store
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("constraints: a duplicate unique value is a unique error") { context in
            let store = try await parentsAndChildren(context)
            try await expectError(.unique, "inserting a second Ada") {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "parents") VALUES (\(2), \("Ada"), \(1))") }
            }
            try await expectError(.unique, "inserting a duplicate primary key") {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "parents") VALUES (\(1), \("Bob"), \(1))") }
            }
        },
        ConformanceCheck("constraints: foreign keys are enforced: an orphan row is a foreignKey error") { context in
            let store = try await parentsAndChildren(context)
            try await expectError(.foreignKey, "inserting a child of a missing parent") {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "children") VALUES (\(2), \(99))") }
            }
            // Readers are connections too: enforcement must not depend on which one runs the write.
            let children = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "children")") }
            try expectEqual(children, 1, "children after the refused insert")
        },
        ConformanceCheck("constraints: ON DELETE CASCADE deletes the children") { context in
            let store = try await parentsAndChildren(context)
            let remaining = try await store.write { db in
                try db.execute("DELETE FROM \(ident: "parents") WHERE \(ident: "id") = \(1)")
                return try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "children")")
            }
            try expectEqual(remaining, 0, "children left after deleting their parent")
        },
        ConformanceCheck("constraints: NULL in a NOT NULL column is a notNull error") { context in
            let store = try await parentsAndChildren(context)
            try await expectError(.notNull, "inserting a parent without a name") {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "parents") VALUES (\(2), \(String?.none), \(1))") }
            }
        },
        ConformanceCheck("constraints: a failed CHECK is a check error naming the constraint") { context in
            let store = try await parentsAndChildren(context)
            let error = try await expectError(.check, "inserting a parent aged -1") {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "parents") VALUES (\(2), \("Bob"), \(-1))") }
            }
            try expectEqual(error.constraint, "age_is_positive", "the constraint named in the error")
        },
    ]
}

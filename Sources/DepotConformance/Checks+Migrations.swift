import Depot
import Foundation
import InMemoryTracing

/// Migrations run once each, in order, each in its own transaction.
enum MigrationChecks {
    static func base() -> Migrator {
        var migrator = Migrator()
        migrator.register("create lists") { db in
            try db.execute("CREATE TABLE \(ident: "lists") (\(ident: "id") \(type: .autoIncrementingPrimaryKey), \(ident: "title") \(type: .text) NOT NULL)")
        }
        migrator.register("seed inbox") { db in
            try db.execute("INSERT INTO \(ident: "lists") (\(ident: "title")) VALUES (\("Inbox"))")
        }
        return migrator
    }

    static func titles(_ store: Store) async throws -> [String] {
        try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "title") FROM \(ident: "lists") ORDER BY \(ident: "id")") }
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("migrations: apply once, in order; running again is a no-op") { context in
            let store = try await context.makeStore()
            let migrator = base()
            try await migrator.migrate(store)
            try await migrator.migrate(store)
            try expectEqual(try await titles(store), ["Inbox"], "lists after migrating twice")
            try expectEqual(try await migrator.appliedMigrations(store), ["create lists", "seed inbox"], "applied migrations")
            var extended = base()
            extended.register("add work") { db in try db.execute("INSERT INTO \(ident: "lists") (\(ident: "title")) VALUES (\("Work"))") }
            try await extended.migrate(store)
            try expectEqual(try await titles(store), ["Inbox", "Work"], "lists after a new migration")
        },
        ConformanceCheck("migrations: a database with every migration applied is checked by a read, without a write") { context in
            // A write would take the write lock at every start, and fail on a database that cannot be written.
            let tracer = InMemoryTracer()
            var configuration = Store.Configuration()
            configuration.tracer = tracer
            let store = try await context.makeStore(configuration)
            let migrator = base()
            try await migrator.migrate(store)
            try expect(tracer.finishedSpans.contains { $0.operationName == "depot.write" }, "the first migration wrote")
            tracer.clearAll()
            try await migrator.migrate(store)
            try expectEqual(tracer.finishedSpans.filter { $0.operationName == "depot.write" }.count, 0, "writes when nothing was left to apply")
            try expectEqual(tracer.finishedSpans.filter { $0.operationName == "depot.read" }.count, 1, "reads when nothing was left to apply")
            // One migration more: written as before.
            var extended = base()
            extended.register("add work") { db in try db.execute("INSERT INTO \(ident: "lists") (\(ident: "title")) VALUES (\("Work"))") }
            try await extended.migrate(store)
            try expectEqual(try await titles(store), ["Inbox", "Work"], "lists after a new migration")
        },
        ConformanceCheck("migrations: a failing migration rolls back whole and names itself", requires: .transactionalSchemaChanges) { context in
            let store = try await context.makeStore()
            var migrator = base()
            migrator.register("broken") { db in
                try db.execute("INSERT INTO \(ident: "lists") (\(ident: "title")) VALUES (\("half done"))")
                try db.execute("INSERT INTO \(ident: "nowhere") VALUES (1)")
            }
            let error = try await expectError(.migration, "running a broken migration") { try await migrator.migrate(store) }
            try expectMentions(error.message, ["broken"], "the migration error")
            try expectEqual(try await titles(store), ["Inbox"], "lists after the failed migration (its insert rolled back)")
            try expectEqual(try await base().appliedMigrations(store), ["create lists", "seed inbox"], "applied migrations")
        },
        ConformanceCheck("migrations: five migrators racing on one database apply each migration once, and none fails") { context in
            // On a server each runs on its own connection, as separate processes would.
            let store = try await context.makeStore()
            var migrator = base()
            migrator.register("create log") { db in
                try db.execute("CREATE TABLE \(ident: "log") (\(ident: "entry") \(type: .text) NOT NULL)")
            }
            migrator.register("write log") { db in
                try db.execute("INSERT INTO \(ident: "log") (\(ident: "entry")) VALUES (\("applied"))")
            }
            let racing = migrator
            let failures = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        do { try await racing.migrate(store); return nil } catch { return "\(error)" }
                    }
                }
                return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
            }
            try expectEqual(failures, [], "migrators that failed")
            try expectEqual(try await titles(store), ["Inbox"], "lists seeded once")
            let log = try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "entry") FROM \(ident: "log")") }
            try expectEqual(log, ["applied"], "the log written once")
            try expectEqual(try await migrator.appliedMigrations(store), ["create lists", "seed inbox", "create log", "write log"], "applied migrations")
        },
        ConformanceCheck("migrations: a recorded migration that is not registered is an error") { context in
            let store = try await context.makeStore()
            try await base().migrate(store)
            var renamed = Migrator()
            renamed.register("create lists") { _ in }
            renamed.register("seed the inbox") { _ in }
            let error = try await expectError(.migration, "migrating with a renamed migration") { try await renamed.migrate(store) }
            try expectMentions(error.message, ["unknown migration", "seed inbox"], "the migration error")
            var reordered = Migrator()
            reordered.register("seed inbox") { _ in }
            reordered.register("create lists") { _ in }
            try await expectError(.migration, "migrating with reordered migrations") { try await reordered.migrate(store) }
            var twice = Migrator()
            twice.register("same") { _ in }
            twice.register("same") { _ in }
            try await expectError(.migration, "registering a name twice") { try await twice.migrate(store) }
        },
    ]
}

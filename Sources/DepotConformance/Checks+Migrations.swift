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
        ConformanceCheck("migrations: a failing migration that changed the schema stays pending; its schema changes remain only where they commit at once") { context in
            let store = try await context.makeStore()
            var migrator = base()
            migrator.register("half a schema") { db in
                try DepotConformance.createTable(db, "drafts", [("id", .integer, "PRIMARY KEY")])
                try db.execute("INSERT INTO \(ident: "drafts") (\(ident: "id")) VALUES (1)")
                try db.execute("INSERT INTO \(ident: "nowhere") VALUES (1)")
            }
            let error = try await expectError(.migration, "a migration failing after a CREATE TABLE") { try await migrator.migrate(store) }
            try expectMentions(error.message, ["half a schema"], "the migration error")
            try expectEqual(try await migrator.status(store).map(\.isApplied), [true, true, false], "the failed migration is reported pending")
            // Where schema changes roll back the table is gone; where they commit at
            // once (MariaDB) it stays, and the rows written after it rolled back.
            let rows = try? await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "drafts")") }
            let transactional = store.dialect.capabilities.transactionalSchemaChanges
            try expectEqual(rows ?? nil, transactional ? nil : 0, "rows of the table the failed migration made (nil: no such table)")
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
        ConformanceCheck("migrations: a script or a revision edited after it was applied is refused, naming the migration") { context in
            let store = try await context.makeStore()
            func scripted(_ column: String, revision: String) -> Migrator {
                var migrator = Migrator()
                migrator.register("create notes", script: "CREATE TABLE \(ident: "notes") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: column) \(type: .text))")
                migrator.register("seed notes", revision: revision) { db in
                    try db.execute("INSERT INTO \(ident: "notes") (\(ident: "id")) VALUES (1)")
                }
                return migrator
            }
            try await scripted("body", revision: "1").migrate(store)
            try await scripted("body", revision: "1").migrate(store)
            let edited = try await expectError(.migration, "migrating with an edited script") { try await scripted("text", revision: "1").migrate(store) }
            try expectMentions(edited.message, ["\"create notes\"", "was edited after it was applied"], "the migration error")
            let revised = try await expectError(.migration, "migrating with a new revision") { try await scripted("body", revision: "2").migrate(store) }
            try expectMentions(revised.message, ["\"seed notes\"", "was edited after it was applied"], "the migration error")
            let statuses = try await scripted("text", revision: "1").status(store)
            try expectEqual(statuses.map(\.name), ["create notes", "seed notes"], "status names")
            try expectEqual(statuses.map(\.isEdited), [true, false], "status: edited")
        },
        ConformanceCheck("migrations: in development, an edited migration erases the database and migrates again") { context in
            let store = try await context.makeStore()
            func migrator(_ seed: String, erases: Bool) -> Migrator {
                var migrator = Migrator()
                migrator.erasesDatabaseWhenMigrationsChange = erases
                migrator.register("create lists", script: "CREATE TABLE \(ident: "lists") (\(ident: "id") \(type: .autoIncrementingPrimaryKey), \(ident: "title") \(type: .text) NOT NULL)")
                migrator.register("create tags", script: "CREATE TABLE \(ident: "tags") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: "listID") \(type: .integer) REFERENCES \(ident: "lists") (\(ident: "id")))")
                migrator.register("seed", script: SQL(unsafeRaw: "INSERT INTO \"lists\" (\"title\") VALUES ('\(seed)')"))
                return migrator
            }
            try await migrator("Inbox", erases: true).migrate(store)
            try await store.write { db in
                try db.execute("INSERT INTO \(ident: "lists") (\(ident: "title")) VALUES (\("Added"))")
                // The seeded list's generated id: 1 on most engines, not on every node of a cluster.
                let list = try db.fetchOne(Int64.self, "SELECT min(\(ident: "id")) FROM \(ident: "lists")")
                try db.execute("INSERT INTO \(ident: "tags") (\(ident: "id"), \(ident: "listID")) VALUES (1, \(list))")
                try db.execute("CREATE TABLE \(ident: "stray") (\(ident: "id") \(type: .integer))")
            }
            try await expectError(.migration, "an edited migration without the opt-out") { try await migrator("Today", erases: false).migrate(store) }
            try expectEqual(try await titles(store), ["Inbox", "Added"], "nothing changed by a refused migration")
            try await migrator("Today", erases: true).migrate(store)
            try expectEqual(try await titles(store), ["Today"], "lists after erasing and migrating again")
            let stray = try? await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "stray")") }
            try expectEqual(stray, nil, "a stray table is erased too (reading it fails)")
        },
        ConformanceCheck("migrations: migrate(upTo:) stops where told, and status lists what is pending") { context in
            let store = try await context.makeStore()
            var migrator = base()
            migrator.register("add work") { db in try db.execute("INSERT INTO \(ident: "lists") (\(ident: "title")) VALUES (\("Work"))") }
            try await migrator.migrate(store, upTo: "seed inbox")
            try expectEqual(try await migrator.appliedMigrations(store), ["create lists", "seed inbox"], "applied up to seed inbox")
            let status = try await migrator.status(store)
            try expectEqual(status.map(\.isApplied), [true, true, false], "applied, applied, pending")
            try await migrator.migrate(store, upTo: "create lists")
            try expectEqual(try await migrator.appliedMigrations(store), ["create lists", "seed inbox"], "upTo an applied one changes nothing")
            try await expectError(.migration, "upTo a migration that does not exist") { try await migrator.migrate(store, upTo: "nothing") }
            try await migrator.migrate(store)
            try expectEqual(try await titles(store), ["Inbox", "Work"], "then the rest")
        },
        ConformanceCheck("migrations: revert undoes the last migrations, newest first; one without a revert undoes nothing") { context in
            let store = try await context.makeStore()
            var migrator = Migrator()
            migrator.register("create lists", script: "CREATE TABLE \(ident: "lists") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: "title") \(type: .text))")
            migrator.register("seed", { db in try db.execute("INSERT INTO \(ident: "lists") VALUES (1, \("Inbox"))") },
                              revert: { db in try db.execute("DELETE FROM \(ident: "lists") WHERE \(ident: "id") = 1") })
            migrator.register("add work", script: "INSERT INTO \(ident: "lists") VALUES (2, 'Work')", revert: "DELETE FROM \(ident: "lists") WHERE \(ident: "id") = 2")
            try await migrator.migrate(store)
            try await migrator.revert(store, to: "create lists")
            try expectEqual(try await migrator.appliedMigrations(store), ["create lists"], "applied after reverting to create lists")
            try expectEqual(try await titles(store), [], "lists after reverting")
            try await migrator.migrate(store)
            try expectEqual(try await titles(store), ["Inbox", "Work"], "migrated again")
            let error = try await expectError(.migration, "reverting a migration without a revert") { try await migrator.revert(store, to: nil) }
            try expectMentions(error.message, ["\"create lists\"", "has no revert"], "the migration error")
            try expectEqual(try await migrator.appliedMigrations(store), ["create lists", "seed", "add work"], "nothing undone")
        },
    ]
}

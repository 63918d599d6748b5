import Depot
import DepotMariaDB
import DepotMariaDBTesting
import DepotPostgres
import DepotSync
import Foundation
import Hummingbird
import Logging
import Reminders
import RemindersServerApp
import Testing

/// The sync server on PostgreSQL and on MariaDB, each in a database of its
/// own: accounts, a push, what another account may not do, a share, and
/// pushes that break the schema. In CI both servers must be there
/// (scripts/test starts them).
@Suite struct SyncServerEngineTests {
    @Test func theSyncServerRunsOnPostgreSQL() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty else {
            #expect(environment["CI"] != "true", "CI must name a PostgreSQL server (DEPOT_POSTGRES_URL)")
            return
        }
        var configuration = try PostgresConfiguration(url: url)
        let schema = "server_sync_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await Store.postgres(configuration)
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        await admin.close()
        configuration.searchPath = schema
        let store = try await RemindersRoutes.store(postgres: configuration, logger: Logger(label: "store") { _ in SwiftLogNoOpLogHandler() })
        try await Self.serveSync(on: store)
        await store.close()
    }

    @Test func theSyncServerRunsOnMariaDB() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["DEPOT_MARIADB_URL"], !url.isEmpty else {
            #expect(environment["CI"] != "true", "CI must name a MariaDB server (DEPOT_MARIADB_URL)")
            return
        }
        let scratch = MariaDBScratchDatabases(base: try MariaDBConfiguration(url: url))
        let database = try await scratch.makeDatabase()
        let store = try await RemindersRoutes.store(mariadb: try MariaDBConfiguration(url: url).with(database: database),
                                                    logger: Logger(label: "store") { _ in SwiftLogNoOpLogHandler() })
        do {
            try await Self.serveSync(on: store)
        } catch {
            await store.close()
            await scratch.dropAll()
            throw error
        }
        await store.close()
        await scratch.dropAll()
    }

    /// Serves sync on `store` and uses every part of it.
    static func serveSync(on store: Store) async throws {
        // Twice: the second start finds the tables made.
        _ = try await RemindersRoutes.application(store: store, logger: Logger(label: "test"), sync: true)
        try await withSyncServer(store) { client, store in
            let alice = try await client.signUp("alice"), bob = try await client.signUp("bob")
            #expect(try await client.send(.post, "/sync/accounts", #"{"name": "Alice", "password": "long enough"}"#).status == .conflict)
            let phone = try await client.signIn("alice")
            #expect(try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "wrong password"}"#).status == .unauthorized)
            #expect(try await client.send(.get, "/sync/devices", token: phone.token).array.count == 2)

            let (replica, list, reminder) = try await SyncSecurityTests.alicesList(client, alice)
            defer { replica.remove() }
            let node = try await replica.node()
            let before = try await serverState(store)
            let bobNode = UUID()
            let rename = handWritten(RemindersList.tableName, key: list.id.uuidString.lowercased(), ["id": .uuid(list.id), "title": .text("Mine")], by: bobNode)
            #expect(try await client.push(SyncPush(client: bobNode, number: 1, changes: [rename]), as: bob).status == .forbidden)
            #expect(try wire(SyncPage.self, try await client.pull(as: bob)).changes.isEmpty)
            let newReminder = UUID()
            func reminderRow(_ values: [String: Value]) -> SyncChange {
                var all: [String: Value] = ["id": .uuid(newReminder), "title": .text("Call"), "notes": .text(""), "isCompleted": .bool(false),
                                            "isFlagged": .bool(false), "priority": .integer(0), "dueDate": .null, "createdAt": .date(Date()),
                                            "position": .integer(0), "remindersListID": .uuid(list.id)]
                for (column, value) in values { all[column] = value }
                return handWritten(Reminder.tableName, key: newReminder.uuidString.lowercased(), all.filter { $0.value != .text("<absent>") }, by: node)
            }
            for (name, change) in [("isCompleted as text", reminderRow(["isCompleted": .text("maybe")])), ("priority 7", reminderRow(["priority": .integer(7)])),
                                   ("no title", reminderRow(["title": .text("<absent>")])), ("title null", reminderRow(["title": .null]))] {
                let answer = try await client.push(SyncPush(client: node, number: 2, changes: [change]), as: alice)
                #expect(answer.status == .unprocessableContent, "\(name): \(answer.status) \(answer.text)")
            }
            #expect(try await serverState(store) == before, "nothing of a refused push was applied")

            #expect(try await client.send(.post, "/sync/shares", #"{"list": "\#(list.id)", "with": "bob"}"#, token: alice.token).status == .noContent)
            #expect(Set(try wire(SyncPage.self, try await client.pull(as: bob)).changes.map(\.key)) == [list.id.uuidString.lowercased(), reminder.uuidString.lowercased()])
            #expect(try await client.send(.get, "/sync/shares", token: alice.token).array.first?["with"] as? [String] == ["bob"])
            #expect(try await client.send(.delete, "/sync/shares/\(list.id)/bob", token: alice.token).status == .noContent)
            #expect(try await client.send(.delete, "/sync/sessions", token: phone.token).status == .noContent)
            #expect(try await client.pull(as: phone).status == .unauthorized)
        }
    }
}

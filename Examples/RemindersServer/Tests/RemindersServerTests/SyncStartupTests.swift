import Depot
import DepotSQLite
import DepotSync
import Foundation
import Logging
import RemindersServerApp
import Testing

/// Starting in sync mode: again on the same database, and refused on a device's replica.
@Suite struct SyncStartupTests {
    @Test func aRestartedSyncServerKeepsItsAccountsAndRows() async throws {
        let path = temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let first = try await RemindersRoutes.store(path, logger: quiet)
        let replica = try await Replica.make()
        defer { replica.remove() }
        _ = try await replica.model.createList(title: "Home")
        let push = try await replica.push()
        try await withSyncServer(first) { client, _ in
            let alice = try await client.signUp("alice")
            #expect(try await client.push(push, as: alice).status == .ok)
        }
        await first.close()
        let again = try await RemindersRoutes.store(path, logger: quiet)
        try await withSyncServer(again) { client, _ in
            let alice = try await client.signIn("alice")
            let page = try wire(SyncPage.self, try await client.pull(as: alice))
            #expect(page.changes.count == 1, "the list pushed before the restart")
        }
        await again.close()
    }

    @Test func aDevicesReplicaIsNoSyncServer() async throws {
        let replica = try await Replica.make()
        defer { replica.remove() }
        let store = try await RemindersRoutes.store(replica.path, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        do {
            _ = try await RemindersRoutes.application(store: store, logger: Logger(label: "test"), sync: true)
            Issue.record("a replica served as a sync server")
        } catch {
            #expect(RemindersRoutes.startupMessage(error, location: replica.path)
                    == "this database is a device's sync replica; a sync server needs a database of its own")
        }
        let tables = try await store.read { db in try db.fetchAll(String.self, """
            SELECT "name" FROM sqlite_schema WHERE "name" IN ('syncAccounts', 'syncDevices', 'remindersServerMigrations', 'depot_sync_server_state')
            """) }
        #expect(tables.isEmpty, "no account tables made: \(tables)")
        await store.close()
    }
}

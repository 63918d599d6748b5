import Depot
import DepotSQLite
import DepotSync
import Foundation
import Reminders
import Testing
import TestSupport

/// A push is untrusted input: every value it brings must be one the record
/// type writes, whatever the server's engine would coerce (SQLite's STRICT
/// tables turn an integer into text; PostgreSQL reads 'yes' as true).
@Suite struct SyncServerInputTests {
    @Test(arguments: ["sqlite", "postgres"])
    func aValueTheRecordTypeDoesNotWriteIsRefusedAndNothingIsApplied(engine: String) async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let serverStore = engine == "sqlite" ? try Store.sqlite(at: folder.appendingPathComponent("server.sqlite").path)
                                             : try await PostgresTestServer.freshStore()
        let onServer = RemindersModel(store: serverStore)
        try await onServer.migrate()
        try await serverStore.write { db in try SyncServer.installSyncServer(in: db) }
        let server = try onServer.syncServer()

        let device = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent("device.sqlite").path))
        try await device.migrate()
        try await device.enableSync()
        try await device.createList(title: "Home")
        try await device.addReminder(ReminderDraft(title: "Paint", dueDate: Date(timeIntervalSince1970: 1_800_000_000)), to: "Home")
        let tables = try RemindersModel.syncedTables()
        let (changes, node) = try await device.store.read { db in (try db.sync.pendingChanges(tables).changes, try db.sync.node()) }

        let wrong: [(column: String, value: Value)] = [
            ("isCompleted", .text("yes")), ("title", .integer(5)), ("priority", .text("1")), ("priority", .double(1.5)),
            ("dueDate", .text("tomorrow")), ("isFlagged", .integer(2)), ("remindersListID", .text("not a key")),
        ]
        for (column, value) in wrong {
            var bad = changes
            let index = try #require(bad.firstIndex { $0.table == Reminder.tableName })
            let stamp = try #require(bad[index].row.registers[column]).stamp
            bad[index].row.registers[column] = SyncRegister(value: value, stamp: stamp)
            let error = await #expect(throws: DatabaseError.self, "\(column) as \(value)") {
                try await server.handle(SyncPush(client: node, number: 1, changes: bad))
            }
            #expect(error?.message.contains("a change of reminders brings a value for \(column) that Reminder does not") == true,
                    "\(error?.message ?? "")")
            #expect(error.map { !$0.description.contains("tomorrow") && !$0.description.contains("not a key") } == true, "no value in the error")
        }
        #expect(try await onServer.lists().isEmpty, "nothing of a refused push was applied")
        _ = try await server.handle(SyncPush(client: node, number: 1, changes: changes))
        #expect(try await onServer.reminders(in: "Home").reminders.map(\.reminder.title) == ["Paint"])
    }
}

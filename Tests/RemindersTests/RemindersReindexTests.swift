import Depot
import DepotSQLite
import Foundation
@testable import Reminders
import Testing

/// The search index is written again for as many reminders as a sync brings:
/// a list synced again brings every reminder in it, more than one SQLite
/// statement binds (32,766), and the pull that brought it must not fail.
@Suite struct RemindersReindexTests {
    @Test func reindexingMoreRemindersThanOneStatementBindsSucceeds() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reindex-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let model = RemindersModel(store: try Store.sqlite(at: path))
        try await model.migrate()
        let list = try await model.createList(title: "Everything")
        let kept = Reminder(title: "findable needle", notes: "", priority: .none, dueDate: nil, position: 0, remindersListID: list.id)
        try await model.store.write { db in try db.insert(kept) }
        let ids = (0..<40_000).map { _ in UUID() } + [kept.id]
        try await model.store.write { db in try RemindersModel.reindex(db, ids) }
        #expect(try await model.search("needle").details.map(\.reminder.id) == [kept.id])
        await model.store.close()
    }
}

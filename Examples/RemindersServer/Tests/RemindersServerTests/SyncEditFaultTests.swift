import Depot
import DepotPostgres
import DepotSync
import Foundation
import Reminders
import Testing

/// Faults inside the server's own edits (the web app's writes): while tasks
/// apply edits of a list and its three reminders at once, and deletes of such
/// a list, the server's PostgreSQL backends are killed at random points. An
/// edit may fail (its outcome unknown when its COMMIT was cut); none is ever
/// half applied, and the sync log holds exactly the rows the tables do.
@Suite struct SyncEditFaultTests {
    @Test func backendsKilledInsideEditsLeaveEachEditWholeOrAbsent() async throws {
        let seconds = ProcessInfo.processInfo.environment["DEPOT_SYNC_FAULT_SECONDS"].flatMap(Double.init) ?? 6
        let application = "depot_edit_fault_" + UUID().uuidString.prefix(8).lowercased()
        try await withSyncServerOnPostgres(configure: { $0.parameters["application_name"] = application }) { _, store in
            let server = try RemindersModel(store: store).syncServer()
            let admin = try await Store.postgres(try PostgresConfiguration(url: ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] ?? ""))
            let deadline = ContinuousClock.now + .seconds(seconds)
            let killer = killBackends(of: application, through: admin, everyMilliseconds: 5...60, until: deadline)
            // Each task: a list with three reminders in one edit; now and then the delete of one it made.
            let outcome = try await withThrowingTaskGroup(of: (applied: Set<UUID>, deleted: Set<UUID>, failed: Int).self) { group in
                for task in 0..<4 {
                    group.addTask {
                        var applied: Set<UUID> = [], deleted: Set<UUID> = [], failed = 0, step = 0
                        while ContinuousClock.now < deadline {
                            step += 1
                            let list = RemindersList(title: "t\(task)-\(step)")
                            let edits: [SyncEdit] = [.save(list)] + (0..<3).map { .save(Reminder(title: "r\($0)", position: $0, remindersListID: list.id)) }
                            do { try await server.edit(edits, account: "ana"); applied.insert(list.id) } catch { failed += 1 }
                            if step % 3 == 0, let gone = applied.subtracting(deleted).first {
                                do { try await server.edit([.delete(RemindersList.tableName, key: gone.uuidString.lowercased())], account: "ana"); deleted.insert(gone) }
                                catch { failed += 1 }
                            }
                        }
                        return (applied, deleted, failed)
                    }
                }
                var result: (applied: Set<UUID>, deleted: Set<UUID>, failed: Int) = ([], [], 0)
                for try await part in group { result = (result.applied.union(part.applied), result.deleted.union(part.deleted), result.failed + part.failed) }
                return result
            }
            let kills = await killer.value
            await admin.close()
            struct Count: Decodable { var list: UUID; var n: Int }
            let (lists, counts, logged) = try await store.read { db in
                (Set(try db.fetchAll(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName)").map(\.id)),
                 try db.fetchAll(Count.self, "SELECT \(ident: "remindersListID") AS \"list\", count(*) AS \"n\" FROM \(ident: Reminder.tableName) GROUP BY \(ident: "remindersListID")"),
                 try SyncServer.visibleKeys(db, of: RemindersList.tableName, to: "ana").count + SyncServer.visibleKeys(db, of: Reminder.tableName, to: "ana").count)
            }
            let byList = Dictionary(counts.map { ($0.list, $0.n) }, uniquingKeysWith: +)
            for list in lists { #expect(byList[list] == 3, "list \(list) holds \(byList[list] ?? 0) reminders, not its three") }
            #expect(byList.keys.allSatisfy(lists.contains), "reminders of a list that is not there")
            for list in outcome.applied.subtracting(outcome.deleted) { #expect(lists.contains(list), "an acknowledged edit is missing") }
            for list in outcome.deleted { #expect(!lists.contains(list), "an acknowledged delete left its list") }
            #expect(logged == lists.count * 4, "the sync log holds \(logged) live rows; the tables \(lists.count * 4)")
            print("SyncEditFaultTests: \(kills) backends killed, \(outcome.applied.count) edits and \(outcome.deleted.count) deletes acknowledged, \(outcome.failed) failed")
            #expect(kills > 0 && outcome.failed > 0, "the faults happened")
        }
    }
}

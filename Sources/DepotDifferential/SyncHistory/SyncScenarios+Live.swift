import Depot
import DepotSync
import DepotTesting
import Foundation

extension SyncScenarios {
    // MARK: Live

    /// Two devices of one account syncing continuously: each one's edits
    /// reach the other with no `sync()` call, woken by the server's commit (a
    /// long poll on an observation of its version counter, on the engine
    /// under test) and by the device's own outbox; a burst ends with its last edit.
    static func liveDevicesHearEachOther(_ run: DifferentialRun) async throws {
        try await withSystem(run, accounts: ["alice", "alice"]) { system in
            let on = system.engine
            let (laptop, phone) = (system.clients[0], system.clients[1])
            for client in system.clients {
                try await client.store.write { db in try db.enableObservation(of: [SyncFolder.tableName, SyncItem.tableName]) }
            }
            let running = system.clients.map { client in Task { try await client.syncContinuously() } }
            defer { for task in running { task.cancel() } }
            let home = SyncFolder(id: UUID(), title: "Home")
            try await laptop.store.write { db in try db.insert(home); try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "Paint")) }
            run.expect(try await eventually(phone.store) { $0 == ["Paint"] }, "\(on): the phone never received the laptop's item without a sync() call")
            try await phone.store.write { db in try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "title") = 'Paint the fence'") }
            run.expect(try await eventually(laptop.store) { $0 == ["Paint the fence"] }, "\(on): the laptop never received the phone's edit")
            for n in 1...5 {
                try await laptop.store.write { db in try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "title") = \("Paint, coat \(n)")") }
            }
            run.expect(try await eventually(phone.store) { $0 == ["Paint, coat 5"] }, "\(on): a burst of edits did not end with its last on the phone")
            for task in running { task.cancel() }
            for task in running {
                do {
                    try await task.value
                    run.record("\(on): syncContinuously returned without being cancelled")
                } catch is CancellationError {
                } catch {
                    run.record("\(on): syncContinuously ended with \(error), not CancellationError")
                }
            }
        }
    }

    /// Whether `store`'s item titles come to satisfy `done` (watched by an
    /// observation); false only past a bound against a hang.
    static func eventually(_ store: Store, _ done: @escaping @Sendable ([String]) -> Bool) async throws -> Bool {
        let titles = store.observe { db in try db.fetchAll(String.self, "SELECT \(ident: "title") FROM \(ident: SyncItem.tableName) ORDER BY 1") }
        do {
            try await ObservationWait.first(titles, where: done)
            return true
        } catch is ObservationWait.TimedOut {
            return false
        }
    }
}

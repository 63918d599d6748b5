import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Reminders
import Testing

/// Faults inside requests: while clients sync over HTTP, the server's
/// PostgreSQL backends are killed at random points, inside pushes (before,
/// during and after their commit) and pulls. A request may fail; the client
/// syncs again. At the end nothing is lost, every replica of an account is
/// equal, and every push was applied exactly once.
@Suite struct SyncFaultTests {
    @Test func backendsKilledInsidePushesAndPullsLoseNothingAndApplyEachPushOnce() async throws {
        let seconds = ProcessInfo.processInfo.environment["DEPOT_SYNC_FAULT_SECONDS"].flatMap(Double.init) ?? 10
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-fault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let application = "depot_sync_fault_" + UUID().uuidString.prefix(8).lowercased()
        try await withSyncServerOnPostgres(configure: { $0.parameters["application_name"] = application }) { server, store in
            var devices: [(account: Int, model: RemindersModel, client: SyncClient, list: String)] = []
            for account in 0..<2 {
                for device in 0..<4 {
                    let made = try await HTTPDevice.make(server, folder: folder, prefix: "fault", account: account, device: device)
                    var client = try made.model.syncClient(transport: HTTPSyncTransport(base: server.appendingPathComponent("sync"), token: made.token))
                    client.pageSize = 7   // pushes and pulls of several pages: kills land between them too
                    devices.append((account, made.model, client, made.list))
                }
            }
            // The killer: one of the server's backends every 20 to 200 ms.
            let admin = try await Store.postgres(try PostgresConfiguration(url: ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] ?? ""))
            let deadline = ContinuousClock.now + .seconds(seconds)
            let killer = killBackends(of: application, through: admin, everyMilliseconds: 20...200, until: deadline)
            let outcome = try await withThrowingTaskGroup(of: (Int, [String], Int).self) { group in
                for (index, device) in devices.enumerated() {
                    group.addTask {
                        var mine: [String] = [], failures = 0, step = 0
                        while ContinuousClock.now < deadline {
                            step += 1
                            let title = "r\(index)-\(step)"
                            try await device.model.addReminder(ReminderDraft(title: title), to: device.list)
                            mine.append(title)
                            do { try await device.client.sync() } catch { failures += 1 }
                        }
                        return (device.account, mine, failures)
                    }
                }
                var written: [Int: Set<String>] = [:], failures = 0
                for try await (account, mine, failed) in group {
                    written[account, default: []].formUnion(mine)
                    failures += failed
                }
                return (written, failures)
            }
            let kills = await killer.value
            await admin.close()
            // Quiet: every device syncs until it succeeds, twice around.
            for _ in 0..<2 {
                for device in devices {
                    var attempts = 0
                    while true {
                        do { try await device.client.sync(); break } catch {
                            attempts += 1
                            try #require(attempts < 20, "a sync keeps failing without faults: \(error)")
                        }
                    }
                }
            }
            for device in devices {
                let titles = Set(try await device.model.store.read { db in try db.fetchAll(Reminder.all).map(\.title) })
                #expect(titles == outcome.0[device.account] ?? [], "every reminder of the account, nothing else")
            }
            let counts = try await RemindersModel(store: store).syncServer().pushCounts()
            #expect(counts.count == devices.count)
            for (client, count) in counts { #expect(count.lastPush == count.applied, "client \(client): each push applied once") }
            print("SyncFaultTests: \(kills) backends killed, \(outcome.1) syncs failed and were retried, "
                  + "\(outcome.0.values.reduce(0) { $0 + $1.count }) reminders, \(counts.values.reduce(0) { $0 + $1.applied }) pushes applied once each")
            #expect(kills > 0 && outcome.1 > 0, "the faults happened")
        }
    }
}

import Depot
import DepotSync
import Foundation

extension SyncHistory {
    /// Random histories (``run(seed:operations:serverStore:folder:)``) with
    /// the `SyncServer` on the engine under test and the devices on SQLite:
    /// sync's rules hold whatever engine serves it. `DEPOT_SYNC_HISTORY_SEED`
    /// replays one history, `DEPOT_SYNC_HISTORIES` runs more (8 by default),
    /// as ``Plan`` tells.
    static func serverOnTheSubject(_ run: DifferentialRun) async throws {
        let plan = Plan(histories: 8, operations: 80)
        var totals = Findings()
        var subject = ""
        for seed in plan.seeds {
            let engines = try await run.makeEngines()
            subject = engines.subject.name
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-history-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try await engines.subject.store.write { db in
                    try db.execute(script: SyncHistory.schema)
                    try SyncServer.installSyncServer(in: db)
                }
                let findings = try await SyncHistory.run(seed: seed, operations: plan.operations, serverStore: engines.subject.store, folder: folder)
                totals.add(findings)
                for problem in findings.problems.prefix(5) {
                    run.record("history \(seed) (replay with \(plan.replay(seed))): \(problem)")
                }
            } catch {
                await engines.close()
                try? FileManager.default.removeItem(at: folder)
                throw error
            }
            await engines.close()
            try? FileManager.default.removeItem(at: folder)
        }
        print("SyncHistory (\(subject) server): \(plan.seeds.count) histories from seed \(plan.seeds.first ?? 0), \(totals.summary); \(totals.problems.count) findings")
    }
}

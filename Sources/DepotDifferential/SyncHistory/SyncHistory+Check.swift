import Depot
import DepotSync
import Foundation

extension SyncHistory {
    /// Random histories (``run(seed:operations:serverStore:folder:)``) with
    /// the `SyncServer` on the engine under test and the devices on SQLite:
    /// sync's rules hold whatever engine serves it. `DEPOT_SYNC_HISTORY_SEED`
    /// replays one history, `DEPOT_SYNC_HISTORIES` runs more (8 by default).
    static func serverOnTheSubject(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let replay = environment["DEPOT_SYNC_HISTORY_SEED"].flatMap(UInt64.init)
        let first = replay ?? UInt64.random(in: 1...UInt64.max / 2)
        let count = replay != nil ? 1 : environment["DEPOT_SYNC_HISTORIES"].flatMap(Int.init) ?? 8
        var totals = Findings()
        var subject = ""
        for seed in (0..<UInt64(max(0, count))).map({ first &+ $0 }) {
            let engines = try await run.makeEngines()
            subject = engines.subject.name
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-history-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try await engines.subject.store.write { db in
                    try db.execute(script: SyncHistory.schema)
                    try SyncServer.installSyncServer(in: db)
                }
                let findings = try await SyncHistory.run(seed: seed, operations: 80, serverStore: engines.subject.store, folder: folder)
                totals.add(findings)
                for problem in findings.problems.prefix(5) {
                    run.record("history \(seed) (replay with DEPOT_SYNC_HISTORY_SEED=\(seed)): \(problem)")
                }
            } catch {
                await engines.close()
                try? FileManager.default.removeItem(at: folder)
                throw error
            }
            await engines.close()
            try? FileManager.default.removeItem(at: folder)
        }
        print("SyncHistory (\(subject) server): \(count) histories from seed \(first), \(totals.summary); \(totals.problems.count) findings")
    }
}

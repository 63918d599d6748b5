import Depot
import DepotDifferential
import DepotMariaDB
import DepotMariaDBTesting
import DepotSync
import Foundation
import Testing

/// Random histories of sync (``SyncHistory``: edits, moves, deletes, re-inserted
/// keys, shares, restores from an old copy, clocks that jump, through a
/// transport that loses and repeats) with the server on MariaDB and the devices
/// on SQLite, each checked against an independent model. Each history prints
/// its seed; the environment replays one or runs more and longer ones (``SyncHistory/Plan``).
@Suite(.enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"))
struct MariaDBSyncHistoryTests {
    @Test func historiesOnAMariaDBServerConvergeLoseNothingAndResurrectNothing() async throws {
        let plan = SyncHistory.Plan(histories: 25, operations: 80)
        let seeds = plan.seeds
        var totals = SyncHistory.Findings()
        var failed: [String] = []
        for seed in seeds {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-sync-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
            do {
                let server = try await databases.makeStore(Store.Configuration())
                try await server.write { db in
                    try db.execute(script: SyncHistory.schema)
                    try SyncServer.installSyncServer(in: db)
                }
                let findings = try await SyncHistory.run(seed: seed, operations: plan.operations, serverStore: server, folder: folder)
                totals.add(findings)
                if !findings.problems.isEmpty {
                    failed.append("history \(seed) (replay with \(plan.replay(seed))):\n\(findings)")
                }
            } catch {
                failed.append("history \(seed) (replay with \(plan.replay(seed))) failed: \(error)")
            }
            await databases.dropAll()
            try? FileManager.default.removeItem(at: folder)
        }
        print("MariaDBSyncHistoryTests: \(seeds.count) histories from seed \(seeds.first ?? 0), \(totals.summary); \(failed.count) histories with findings")
        #expect(failed.isEmpty, Comment(rawValue: "\(failed.count) of \(seeds.count) histories broke a rule; the first:\n" + failed.prefix(3).joined(separator: "\n")))
    }
}

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
/// its seed: `DEPOT_SYNC_HISTORY_SEED=<seed>` replays one, `DEPOT_SYNC_HISTORIES=<n>` runs more.
@Suite(.enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"))
struct MariaDBSyncHistoryTests {
    static let environment = ProcessInfo.processInfo.environment

    static func seeds(_ count: Int) -> [UInt64] {
        if let replay = environment["DEPOT_SYNC_HISTORY_SEED"].flatMap(UInt64.init) { return [replay] }
        let first = UInt64.random(in: 1...UInt64.max / 2)
        let n = environment["DEPOT_SYNC_HISTORIES"].flatMap(Int.init) ?? count
        return (0..<UInt64(n)).map { first &+ $0 }
    }

    @Test func historiesOnAMariaDBServerConvergeLoseNothingAndResurrectNothing() async throws {
        let seeds = Self.seeds(25)
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
                let findings = try await SyncHistory.run(seed: seed, operations: 80, serverStore: server, folder: folder)
                totals.add(findings)
                if !findings.problems.isEmpty {
                    failed.append("history \(seed) (replay with DEPOT_SYNC_HISTORY_SEED=\(seed)):\n\(findings)")
                }
            } catch {
                failed.append("history \(seed) (replay with DEPOT_SYNC_HISTORY_SEED=\(seed)) failed: \(error)")
            }
            await databases.dropAll()
            try? FileManager.default.removeItem(at: folder)
        }
        print("MariaDBSyncHistoryTests: \(seeds.count) histories from seed \(seeds.first ?? 0), \(totals.summary); \(failed.count) histories with findings")
        #expect(failed.isEmpty, Comment(rawValue: "\(failed.count) of \(seeds.count) histories broke a rule; the first:\n" + failed.prefix(3).joined(separator: "\n")))
    }
}

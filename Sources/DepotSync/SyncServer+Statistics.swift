@_spi(Sync) import Depot
import Synchronization

/// How many changes this server process applied since it last refreshed
/// the planner's statistics of its sync tables, and how many the next
/// refresh waits for: twice as many each time.
final class SyncStatisticsGrowth: Sendable {
    private let counts = Mutex((applied: 0, next: SyncStatisticsGrowth.first))

    /// Changes applied before the first refresh.
    static let first = 5_000

    /// Counts `changes` applied; true when the statistics are due for a refresh.
    func add(_ changes: Int) -> Bool {
        counts.withLock { counts in
            counts.applied += changes
            guard counts.applied >= counts.next else { return false }
            counts.applied = 0
            counts.next = counts.next <= Int.max / 2 ? counts.next * 2 : Int.max
            return true
        }
    }
}

extension SyncServer {
    /// Refreshes the planner's statistics of the sync tables once the pushes
    /// this process applied have grown them by 5,000 changes, then 10,000,
    /// 20,000…: a new server's first large push (a device of 50,000
    /// reminders) otherwise looks up each page's keys in tables the planner
    /// takes for empty, reading every row per lookup, until autovacuum
    /// catches up. A handful of refreshes in a process's life; nothing on an
    /// engine that needs none (``Database/refreshStatistics(of:)``).
    func refreshStatisticsIfGrown(by changes: Int) async {
        let names = [SyncStateTables.server.rows, SyncStateTables.server.clocks] + tables.map(\.name)
        // Nothing to count where the engine refreshes nothing (no write access opened for it).
        guard !store.dialect.refreshStatistics(of: names).isEmpty, statisticsGrowth.add(changes) else { return }
        // A failed refresh costs only speed, and the push it follows is committed: not the device's error.
        try? await store.write { db in try db.refreshStatistics(of: names) }
    }
}

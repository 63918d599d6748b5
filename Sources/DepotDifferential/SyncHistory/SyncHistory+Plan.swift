import Foundation

extension SyncHistory {
    /// Which histories a test runs, as its environment asks: every runner of
    /// ``run(seed:operations:serverStore:folder:)`` reads the same variables,
    /// so a printed replay line works whichever test printed it.
    ///
    /// - `DEPOT_SYNC_HISTORY_SEED=<seed>`: that one history alone;
    /// - `DEPOT_SYNC_HISTORIES=<n>`: n histories instead of the test's own count;
    /// - `DEPOT_SYNC_HISTORY_FIRST=<seed>`: the first seed of the run (the
    ///   others follow it), instead of a random one;
    /// - `DEPOT_SYNC_HISTORY_OPERATIONS=<n>`: n operations in each history.
    ///
    /// ```swift
    /// let plan = SyncHistory.Plan(histories: 25, operations: 80)
    /// for seed in plan.seeds {
    ///     let findings = try await SyncHistory.run(seed: seed, operations: plan.operations, serverStore: server, folder: folder)
    ///     if !findings.problems.isEmpty { print("replay with \(plan.replay(seed))") }
    /// }
    /// ```
    public struct Plan: Sendable {
        /// The seeds of the histories to run, one after another.
        public var seeds: [UInt64]
        /// How many operations each history makes.
        public var operations: Int

        /// The plan for a test that runs `histories` histories of `operations`
        /// operations unless the environment asks otherwise.
        public init(histories: Int, operations: Int, environment: [String: String] = ProcessInfo.processInfo.environment) {
            let asked = environment["DEPOT_SYNC_HISTORY_OPERATIONS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
            self.operations = asked ?? operations
            if let replay = environment["DEPOT_SYNC_HISTORY_SEED"].flatMap(UInt64.init) {
                seeds = [replay]
                return
            }
            let first = environment["DEPOT_SYNC_HISTORY_FIRST"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max / 2)
            let count = max(0, environment["DEPOT_SYNC_HISTORIES"].flatMap(Int.init) ?? histories)
            // Wrapping: a first seed near the top of the range goes on from zero.
            seeds = (0..<UInt64(count)).map { first &+ $0 }
        }

        /// Whether the environment asked for one history alone.
        public static var isReplaying: Bool {
            ProcessInfo.processInfo.environment["DEPOT_SYNC_HISTORY_SEED"].flatMap(UInt64.init) != nil
        }

        /// The variables that replay the history of `seed` in this plan, its
        /// operations always named: a history of 300 operations pinned by one
        /// test replays as itself in a test whose own are 80.
        public func replay(_ seed: UInt64) -> String {
            "DEPOT_SYNC_HISTORY_OPERATIONS=\(operations) DEPOT_SYNC_HISTORY_SEED=\(seed)"
        }
    }
}

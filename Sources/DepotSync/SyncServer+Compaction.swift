@_spi(Sync) import Depot
import Foundation

/// What one ``SyncServer/compact(olderThan:now:)`` removed, and the horizon it left.
public struct SyncCompaction: Hashable, Sendable {
    /// The server version before which deleted rows are forgotten: a device
    /// whose cursor is before it pulls everything again (``SyncPage/startsOver``).
    /// Zero: the server never compacted.
    public var horizon: Int64
    /// The deleted rows forgotten (each with its columns' stamps).
    public var tombstones: Int
    /// The records of rows unshared from an account, and of values replaced
    /// unseen, forgotten with them.
    public var notes: Int
}

extension SyncServer {
    /// The versions the server had at the times ``compact(olderThan:now:)`` ran:
    /// how a span of time becomes a version. A handful of rows.
    static let marks = "depot_sync_server_marks"

    /// Bounds the server's log: forgets every row deleted at least `age`
    /// ago (its tombstone and its columns' stamps), and what it recorded for
    /// devices in those versions (unshared rows, values replaced unseen), so
    /// that the sync tables hold about as many rows as the synced tables,
    /// however many edits they saw.
    ///
    /// Call it periodically (daily, say) with the longest a device may stay
    /// offline and still sync without starting over: a version becomes old
    /// enough once a call has seen it `age` ago, so the horizon trails `age`
    /// by at most the period between calls.
    ///
    /// ```swift
    /// // In a daily job:
    /// let done = try await server.compact(olderThan: .seconds(30 * 86_400))
    /// ```
    ///
    /// A device whose cursor is older than the horizon (offline longer than
    /// `age`) is told at its next pull (``SyncPage/startsOver``): a
    /// ``SyncClient`` pushes its pending changes, pulls everything again and
    /// forgets the rows the server no longer has, so a row deleted long ago
    /// is not brought back. Its pushed changes to such rows are dropped (and
    /// reported, ``SyncReport/dropped``): a change to a row the server has
    /// forgotten cannot be told from a new row otherwise. A new device is
    /// never told to start over: it has nothing to forget.
    ///
    /// - Parameters:
    ///   - age: how long a deleted row is remembered; `.zero` compacts
    ///     through the server's version now.
    ///   - now: the time of this call.
    /// - Returns: the horizon and what was removed.
    @discardableResult
    public func compact(olderThan age: Duration, now: Date = Date()) async throws -> SyncCompaction {
        guard age >= .zero else { throw DatabaseError(.misuse, "a sync server compacts what is older than a span of time, and \(age) is negative") }
        let milliseconds = HybridClock.milliseconds(now)
        let ageMilliseconds = HybridClock.wholeMilliseconds(age)
        return try await store.write { db in
            try Self.addHorizon(in: db)
            // The counter row first: its lock orders this with pushes, which read the horizon under it.
            try db.execute("UPDATE \(ident: Self.state) SET \"horizon\" = \"horizon\" WHERE \"id\" = 1")
            let head = try Self.head(db)
            let before = try Self.horizon(db)
            try db.insert(into: Self.marks, columns: ["version", "at"], "VALUES (\(head), \(milliseconds))", onConflict: .doNothing(["version"]))
            let (cutoff, overflow) = milliseconds.subtractingReportingOverflow(ageMilliseconds)
            let horizon = overflow ? nil : try db.fetchOne(Int64?.self, "SELECT max(\"version\") FROM \(ident: Self.marks) WHERE \"at\" <= \(cutoff)") ?? nil
            guard let horizon, horizon > before else { return SyncCompaction(horizon: before, tombstones: 0, notes: 0) }
            let (rows, clocks, hidden) = (SyncStateTables.server.rows, SyncStateTables.server.clocks, SyncStateTables.server.hidden)
            for table in [clocks, hidden] {
                try db.execute("""
                    DELETE FROM \(ident: table) WHERE EXISTS (SELECT 1 FROM \(ident: rows) r WHERE r."tbl" = \(ident: table)."tbl"
                        AND r."row_key" = \(ident: table)."row_key" AND r."cl" % 2 = 0 AND r."version" < \(horizon))
                    """)
            }
            let tombstones = try db.execute("DELETE FROM \(ident: rows) WHERE \"cl\" % 2 = 0 AND \"version\" < \(horizon)")
            var notes = try db.execute("DELETE FROM \(ident: SyncAccountTables.evictions) WHERE \"version\" < \(horizon)")
            notes += try db.execute("DELETE FROM \(ident: Self.notices) WHERE \"version\" < \(horizon)")
            try db.execute("DELETE FROM \(ident: Self.marks) WHERE \"version\" < \(horizon)")
            try db.execute("UPDATE \(ident: Self.state) SET \"horizon\" = \(horizon) WHERE \"id\" = 1")
            return SyncCompaction(horizon: horizon, tombstones: tombstones, notes: notes)
        }
    }

    /// The version before which deleted rows may be forgotten (zero: none).
    /// Read by every page and push: one statement (in a savepoint, since a
    /// server installed before compaction lacks the column until its next migration).
    static func horizon(_ db: Database) throws -> Int64 {
        (try? storedHorizon(db)) ?? 0
    }

    static func hasHorizon(_ db: Database) throws -> Bool {
        (try? storedHorizon(db)) != nil
    }

    private static func storedHorizon(_ db: Database) throws -> Int64 {
        try db.savepoint { db in try db.fetchOne(Int64.self, "SELECT \"horizon\" FROM \(ident: state) WHERE \"id\" = 1") ?? 0 }
    }

    /// The horizon and the marks that move it, on a server installed before them.
    static func addHorizon(in db: Database) throws {
        guard try !hasHorizon(db) else { return }
        try db.execute("ALTER TABLE \(ident: state) ADD COLUMN \"horizon\" \(type: .integer) NOT NULL DEFAULT 0")
        try db.execute("CREATE TABLE \(ident: marks) (\"version\" \(type: .integer) PRIMARY KEY, \"at\" \(type: .integer) NOT NULL)")
    }

    /// Refuses a device behind the horizon whose protocol predates compaction
    /// (``SyncPushRefused/Reason/deviceOlder``): it would take a row the
    /// server forgot for a new one, and cannot start over.
    static func checkCompactionAware(protocolVersion: Int?, maximumDrift: Duration) throws {
        guard (protocolVersion ?? 1) < 3 else { return }
        throw SyncPushRefused(.deviceOlder, latestAccepted: HybridClock.bound(at: Date(), maximumDrift: maximumDrift),
                              message: "this device was offline past the server's compaction horizon and speaks sync protocol "
                                + "\(protocolVersion ?? 1), which cannot start over: update the app; the device keeps its changes until then")
    }

    /// Whether a device whose cursor is in version `cursor` (it has read
    /// every version before it) may have missed deletes the server has
    /// forgotten since: its pushes' changes to rows the server does not
    /// have are not new rows, and its pulls start over.
    static func isBehind(_ cursor: Int64?, horizon: Int64) -> Bool {
        (cursor ?? 0) < horizon
    }
}

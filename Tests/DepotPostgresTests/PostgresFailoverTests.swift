import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// A primary with a synchronous standby (scripts/test starts the pair for this
/// test alone): the primary is killed with all its processes and the standby promoted while 20 tasks
/// write and read. No acknowledged write may be lost, every failure must be a
/// typed error, and the store must find the new primary by itself.
@Suite(.enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named (run scripts/test)"))
struct PostgresFailoverTests {
    /// What the tasks saw, shared between them.
    final class Ledger: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var acknowledged: [Int64] = []
        private(set) var errors: [String: Int] = [:]
        private(set) var untyped: [String] = []
        private(set) var reads = 0
        private(set) var readErrors = 0
        private(set) var firstWriteAfterKill: ContinuousClock.Instant?
        private var killedAt: ContinuousClock.Instant?
        private(set) var promotedAt: ContinuousClock.Instant?
        func markKilled() { lock.withLock { killedAt = .now } }
        func markPromoted() { lock.withLock { promotedAt = .now } }


        /// A write acknowledged; one that began after the kill can only have reached the new primary.
        func acknowledge(_ id: Int64, began: ContinuousClock.Instant) {
            lock.withLock {
                acknowledged.append(id)
                if let killedAt, firstWriteAfterKill == nil, began > killedAt { firstWriteAfterKill = .now }
            }
        }
        func fail(_ error: any Error, reading: Bool) {
            lock.withLock {
                if reading { readErrors += 1 }
                if let error = error as? DatabaseError {
                    errors["\(reading ? "read" : "write") \(error.kind)", default: 0] += 1
                } else {
                    untyped.append("\(error)")
                }
            }
        }
        func read() { lock.withLock { reads += 1 } }
        var killed: ContinuousClock.Instant? { lock.withLock { killedAt } }
        /// How many writes were acknowledged so far, while the writers run.
        var acknowledgedCount: Int { lock.withLock { acknowledged.count } }
        var recovered: ContinuousClock.Instant? { lock.withLock { firstWriteAfterKill } }
    }

    /// Adds 20 tasks that each insert a row into `table` and read their
    /// count back, again and again, recording what happens in `ledger`, until
    /// writes have gone through on the new primary for a second or `runFor`
    /// has passed since `started`.
    static func addWriters(to group: inout ThrowingTaskGroup<Void, any Error>, store: Store, table: String, ledger: Ledger,
                           started: ContinuousClock.Instant, runFor: Duration) {
        for task in 0..<20 {
            group.addTask {
                var sequence: Int64 = 0
                while ContinuousClock.now - started < runFor {
                    sequence += 1
                    let id = Int64(task) * 1_000_000 + sequence
                    let began = ContinuousClock.now
                    do {
                        try await store.write { db in
                            try db.execute("INSERT INTO \(ident: table) VALUES (\(id), \(Int64(task)))")
                        }
                        ledger.acknowledge(id, began: began)
                    } catch {
                        ledger.fail(error, reading: false)
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    do {
                        _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: table) WHERE \(ident: "task") = \(Int64(task))") }
                        ledger.read()
                    } catch {
                        ledger.fail(error, reading: true)
                    }
                    // Stop once writes have gone through on the new primary for a second.
                    if let recovered = ledger.recovered, ContinuousClock.now - recovered > .seconds(1) { return }
                }
            }
        }
    }

    @Test func promotingTheStandbyLosesNoAcknowledgedWriteAndTheStoreFindsTheNewPrimary() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.failoverURL, "DEPOT_FAILOVER_URL")
        let standbyURL = try ScaleOutServers.require(ScaleOutServers.failoverStandbyURL, "DEPOT_FAILOVER_STANDBY_URL")
        let primaryPID = try #require(ScaleOutServers.failoverPrimaryPID, "DEPOT_FAILOVER_PRIMARY_PID")
        var configuration = try PostgresConfiguration(url: url)
        configuration.maxConnections = 20
        configuration.maxReplicaConnections = 20
        configuration.store.checkoutTimeout = .seconds(10)
        configuration.parameters["connect_timeout"] = "2"
        let store = try await Store.postgres(configuration)
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "ledger") (\(ident: "id") bigint PRIMARY KEY, \(ident: "task") bigint NOT NULL)")
        }
        // The table is on the synchronous standby before anything else happens.
        #expect(try await store.read { db in try db.fetchOne(Bool.self, "SELECT pg_is_in_recovery()") } == true)

        let ledger = Ledger()
        let started = ContinuousClock.now
        let runFor: Duration = .seconds(60)
        try await withThrowingTaskGroup(of: Void.self) { group in
            Self.addWriters(to: &group, store: store, table: "ledger", ledger: ledger, started: started, runFor: runFor)
            // Let the writers run, then kill the primary and promote the standby, as a failover manager would.
            try await Task.sleep(for: .seconds(1))
            ledger.markKilled()
            // The whole server at once, as a crash takes it: pg_ctl starts the postmaster as
            // the leader of its own process group, and its backends and WAL sender are in it.
            // (Killing the postmaster alone lets its backends commit until they notice.)
            #expect(getpgid(pid_t(primaryPID)) == pid_t(primaryPID), "the postmaster leads its process group")
            #expect(kill(-pid_t(primaryPID), SIGKILL) == 0)
            let promoted = try await ChildProcess.run("/usr/bin/psql", [standbyURL, "-Atc", "SELECT pg_promote()"])
            #expect(promoted.output.trimmingCharacters(in: .whitespacesAndNewlines) == "t", "\(promoted.output)")
            ledger.markPromoted()
            try await group.waitForAll()
        }

        let killedAt = try #require(ledger.killed)
        let recovered = try #require(ledger.recovered, "no write succeeded after the failover within \(runFor)")
        // Every acknowledged write is on the new primary.
        let stored = Set(try await store.read(from: .primary) { db in try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "ledger")") })
        let lost = ledger.acknowledged.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "acknowledged writes lost: \(lost.prefix(10))")
        #expect(ledger.untyped.isEmpty, "errors that are not DatabaseError: \(ledger.untyped.prefix(3))")
        let kinds = Set(ledger.errors.keys)
        #expect(kinds.isSubset(of: ["write connection", "read connection", "write timeout"]), "\(ledger.errors)")
        #expect(try await store.write { db in try db.fetchOne(Bool.self, "SELECT pg_is_in_recovery()") } == false)
        print("""
            failover: \(ledger.acknowledged.count) acknowledged writes, \(lost.count) lost; \(ledger.reads) reads, \(ledger.readErrors) failed; \
            errors by kind: \(ledger.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
            the standby was promoted \((ledger.promotedAt ?? killedAt) - killedAt) after the primary was killed, \
            and the first write begun after the kill was acknowledged \(recovered - killedAt) after it
            """)
        await store.close()
    }
}

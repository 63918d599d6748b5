import Depot
import DepotMariaDB
import DepotMariaDBTesting
import Foundation
import Testing

/// Nodes of the cluster SIGKILLed and started again while 20 tasks write and
/// read through all three: nothing acknowledged is lost, nothing is half
/// written, and every failure is a typed error.
extension Galera {
@Suite struct Faults {
    /// What the writers saw.
    struct Ledger {
        var acknowledged: Set<Int> = []
        /// Writes whose COMMIT was sent and never answered: in whole or not at all.
        var unknown: Set<Int> = []
        var failedKinds: [DatabaseError.Kind: Int] = [:]
        var untyped: [String] = []
        var staleReads: [String] = []
        var stopped = false
    }

    /// The ledger, shared by the writers.
    final class Shared: @unchecked Sendable {
        // Unchecked: `ledger` is read and written under `lock`.
        private let lock = NSLock()
        private var ledger = Ledger()
        func withLock<T>(_ body: (inout Ledger) -> T) -> T { lock.withLock { body(&ledger) } }
    }

    /// Waits until the writers have acknowledged `count` writes (a bound on
    /// liveness: the cluster must go on serving, not a speed claim).
    func waitFor(_ count: Int, _ ledger: Shared, _ what: String) async throws {
        var waited = 0
        while ledger.withLock({ $0.acknowledged.count }) < count {
            try await Task.sleep(for: .milliseconds(20))
            waited += 1
            if waited > 15_000 { throw DatabaseError(.timeout, "waited 300 s for \(count) acknowledged writes \(what)") }
        }
    }

    /// A line on standard error at once (standard output is buffered when it is a file).
    func progress(_ text: String) {
        FileHandle.standardError.write(Data("Galera fault test: \(text)\n".utf8))
    }

    @Test func twentyTasksThroughThreeNodesWhileOneIsKilledAndRestartedTwiceLoseNoAcknowledgedWriteAndLeaveNoneHalfDone() async throws {
        let databases = MariaDBScratchDatabases(base: try GaleraTestCluster.configuration())
        let database = try await databases.makeDatabase()
        var configuration = try GaleraTestCluster.configuration(order: .roundRobin).with(database: database)
        configuration.maxConnections = 20
        configuration.store.writeRetry = WriteRetry()
        let store = try await Store.mariadb(configuration)
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "a") (\(ident: "id") bigint PRIMARY KEY)")
            try db.execute("CREATE TABLE \(ident: "b") (\(ident: "id") bigint PRIMARY KEY)")
        }
        let ledger = Shared()
        let writers = Task {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<20 {
                    group.addTask {
                        var sequence = 0
                        while !ledger.withLock({ $0.stopped }) {
                            sequence += 1
                            let id = task * 1_000_000 + sequence
                            do {
                                // Two statements, one transaction: both rows or neither.
                                try await store.write { db in
                                    try db.execute("INSERT INTO \(ident: "a") VALUES (\(id))")
                                    try db.execute("INSERT INTO \(ident: "b") VALUES (\(id))")
                                }
                                ledger.withLock { _ = $0.acknowledged.insert(id) }
                                // Read back, maybe on another node: an acknowledged write is there.
                                let seen = try await store.read { db in
                                    try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "a") WHERE \(ident: "id") = \(id)")
                                }
                                if seen != 1 { ledger.withLock { $0.staleReads.append("\(id): \(String(describing: seen))") } }
                            } catch let error as DatabaseError {
                                ledger.withLock { ledger in
                                    if error.commitOutcomeUnknown { ledger.unknown.insert(id) }
                                    ledger.failedKinds[error.kind, default: 0] += 1
                                }
                            } catch {
                                ledger.withLock { $0.untyped.append("\(error)") }
                            }
                        }
                    }
                }
            }
        }
        var target = 100
        try await waitFor(target, ledger, "before the first kill")
        for node in [2, 3] {
            progress("\(ledger.withLock { $0.acknowledged.count }) acknowledged; SIGKILL to node \(node)")
            try GaleraTestCluster.kill(node: node)
            target = ledger.withLock { $0.acknowledged.count } + 100
            try await waitFor(target, ledger, "with node \(node) killed")
            progress("\(ledger.withLock { $0.acknowledged.count }) acknowledged; starting node \(node) again")
            try await GaleraTestCluster.restart(node: node)
            progress("node \(node) is back")
            target = ledger.withLock { $0.acknowledged.count } + 100
            try await waitFor(target, ledger, "after node \(node) came back")
        }
        progress("\(ledger.withLock { $0.acknowledged.count }) acknowledged; stopping the writers")
        ledger.withLock { $0.stopped = true }
        await writers.value
        await store.close()

        let seen = ledger.withLock { $0 }
        print("Galera fault test: \(seen.acknowledged.count) writes acknowledged, \(seen.unknown.count) of unknown outcome, failures by kind: \(seen.failedKinds)")
        #expect(seen.untyped == [], "every failure is a DatabaseError")
        #expect(seen.staleReads == [], "an acknowledged write was missing from a read after it")
        // Every node holds every acknowledged write, whole.
        for node in 0..<3 {
            var one = try GaleraTestCluster.configuration(order: .failover, only: node).with(database: database)
            one.maxConnections = 1
            let reader = try await Store.mariadb(one)
            let (a, b) = try await reader.read { db in
                (Set(try db.fetchAll(Int.self, "SELECT \(ident: "id") FROM \(ident: "a")")),
                 Set(try db.fetchAll(Int.self, "SELECT \(ident: "id") FROM \(ident: "b")")))
            }
            await reader.close()
            #expect(seen.acknowledged.isSubset(of: a), "node \(node + 1) lost \(seen.acknowledged.subtracting(a).count) acknowledged writes")
            #expect(a == b, "node \(node + 1) holds \(a.symmetricDifference(b).count) writes half done")
            let extra = a.subtracting(seen.acknowledged)
            #expect(extra.isSubset(of: seen.unknown), "rows no write acknowledged nor left unknown: \(extra.subtracting(seen.unknown).sorted().prefix(10))")
        }
        await databases.dropAll()
    }
}
}

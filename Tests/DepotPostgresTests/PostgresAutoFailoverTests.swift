import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// A pg_auto_failover formation (a monitor, a primary and a synchronous
/// secondary; scripts/lib/autofailover.sh): the primary's node dies whole, as
/// a machine does, while 20 tasks write and read; the monitor, not the test,
/// promotes the secondary. No acknowledged write may be lost, every failure is
/// a typed error, and a store that waits for its server finds the new primary
/// by itself, through the same URL.
@Suite(.enabled(if: ScaleOutServers.autoFailoverURL != nil || PostgresTestServer.isCI,
                "no pg_auto_failover formation named (run scripts/test)"))
struct PostgresAutoFailoverTests {
    /// The ports of a URL's hosts, in order: node N is the N-th.
    func ports(_ url: String) throws -> [Int] {
        let authority = try #require(url.split(separator: "@").last?.split(separator: "/").first)
        return authority.split(separator: ",").compactMap { $0.split(separator: ":").last.flatMap { Int($0) } }
    }

    /// Runs a node's script (on a thread of its own, off the task pool).
    func script(_ path: String) async throws -> (status: Int32, output: String) {
        try await ChildProcess.runScript(path)
    }

    @Test func theMonitorPromotesTheSecondaryWhenThePrimarysNodeDiesAndNoAcknowledgedWriteIsLost() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.autoFailoverURL, "DEPOT_AUTOFAILOVER_URL")
        let folder = try ScaleOutServers.require(ScaleOutServers.autoFailoverFolder, "DEPOT_AUTOFAILOVER_DIR")
        var configuration = try PostgresConfiguration(url: url)
        configuration.maxConnections = 20
        configuration.maxReplicaConnections = 20
        // Waits for the new primary instead of failing each access at once.
        configuration.store.waitsForServer = true
        configuration.store.checkoutTimeout = .seconds(120)
        configuration.parameters["connect_timeout"] = "2"
        let store = try await Store.postgres(configuration)
        let table = "ledger_\(UInt32.random(in: 0...UInt32.max))"
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: table) (\(ident: "id") bigint PRIMARY KEY, \(ident: "task") bigint NOT NULL)")
        }
        let primaryPort = try #require(try await store.write { db in try db.fetchOne(Int.self, "SELECT inet_server_port()") })
        let node = try #require(try ports(url).firstIndex(of: primaryPort), "the primary's port \(primaryPort) is one of the URL's") + 1

        let ledger = PostgresFailoverTests.Ledger()
        let started = ContinuousClock.now
        let runFor: Duration = .seconds(240)
        try await withThrowingTaskGroup(of: Void.self) { group in
            PostgresFailoverTests.addWriters(to: &group, store: store, table: table, ledger: ledger, started: started, runFor: runFor)
            // The writers run; then the primary's node dies, keeper and server at once.
            while ledger.acknowledgedCount < 200, ContinuousClock.now - started < runFor {
                try await Task.sleep(for: .milliseconds(20))
            }
            // Marked once every process of the node is gone (the script takes
            // about 0.1 s): a write begun after it can only reach the new primary.
            let killed = try await script("\(folder)/node\(node)/kill")
            ledger.markKilled()
            #expect(killed.status == 0, "\(killed.output)")
            try await group.waitForAll()
        }

        let killedAt = try #require(ledger.killed)
        let recovered = try #require(ledger.recovered, "no write succeeded after the failover within \(runFor)")
        let newPort = try await store.write { db in try db.fetchOne(Int.self, "SELECT inet_server_port()") }
        #expect(newPort != primaryPort, "the store writes to the promoted secondary")
        let stored = Set(try await store.read(from: .primary) { db in try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: table)") })
        let lost = ledger.acknowledged.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "acknowledged writes lost: \(lost.prefix(10))")
        #expect(ledger.untyped.isEmpty, "errors that are not DatabaseError: \(ledger.untyped.prefix(3))")
        #expect(Set(ledger.errors.keys).isSubset(of: ["write connection", "read connection", "write timeout", "read timeout"]), "\(ledger.errors)")
        print("""
            pg_auto_failover: \(ledger.acknowledged.count) acknowledged writes, \(lost.count) lost; \(ledger.reads) reads, \(ledger.readErrors) failed; \
            errors by kind: \(ledger.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
            the first write begun after node \(node) was killed was acknowledged \(recovered - killedAt) after the kill, on the promoted secondary
            """)
        // The dead node comes back as the new primary's secondary.
        let restarted = try await script("\(folder)/node\(node)/start")
        #expect(restarted.status == 0, "\(restarted.output)")
        try await store.write { db in try db.execute("DROP TABLE \(ident: table)") }
        await store.close()
    }
}

import Depot
import DepotPostgres
import Foundation
import Logging
import Testing
import TestSupport

/// A URL that lists several servers, as libpq lists them, and Depot's own parameters.
@Suite struct PostgresMultiHostURLTests {
    @Test func aURLListsEveryServerAndDepotsOwnParameters() throws {
        let configuration = try PostgresConfiguration(
            url: "postgres://app:s3cret@db1:5433,[::1]:5434,db3/reminders?sslmode=require&pgbouncer=true&listener=db1:5432,db2")
        #expect(configuration.hosts == [.init("db1", port: 5433), .init("::1", port: 5434), .init("db3", port: 5432)])
        #expect(configuration.host == "db1" && configuration.port == 5433)
        #expect(configuration.user == "app" && configuration.password == "s3cret" && configuration.database == "reminders")
        #expect(configuration.transactionPooling)
        #expect(configuration.listenerHosts == [.init("db1", port: 5432), .init("db2", port: 5432)])
        #expect(configuration.parameters == ["sslmode": "require"], "Depot's own parameters are not handed to libpq")
        #expect(configuration.description == "postgres://app:***@db1:5433,[::1]:5434,db3:5432/reminders?pgbouncer=true")
    }

    @Test func oneServerIsWhatItWas() throws {
        let configuration = try PostgresConfiguration(url: "postgres://app:s3cret@db.example.com:6543/app")
        #expect(configuration.hosts == [.init("db.example.com", port: 6543)])
        #expect(!configuration.transactionPooling && configuration.listenerHosts == nil)
    }

    @Test func aBadPortInTheListIsAConnectionErrorWithoutThePassword() throws {
        for url in ["postgres://app:s3cret@db1:5433,db2:none/app", "postgres://app:s3cret@db1,[::1/app",
                    "postgres://app:s3cret@db1,db2:70000/app", "postgres://app:s3cret@db1/app?pgbouncer=maybe"] {
            let error = #expect(throws: DatabaseError.self) { try PostgresConfiguration(url: url) }
            #expect(error?.kind == .connection)
            #expect(error.map { !"\($0)".contains("s3cret") } ?? false, "\(String(describing: error))")
        }
    }

    @Test func positionsPrintAsPostgreSQLPrintsAnLSN() {
        #expect(CommitPosition(rawValue: 0x16_B374_D848).description == "16/B374D848")
        #expect(CommitPosition(rawValue: 0x1_0000_0000) > CommitPosition(rawValue: 0xFFFF_FFFF))
    }
}

/// A primary with hot standbys, started by scripts/test (scripts/lib/replication.sh).
@Suite(.enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named (run scripts/test)"))
struct PostgresReplicaTests {
    func inRecovery(_ db: Database) throws -> Bool? {
        try db.fetchOne(Bool.self, "SELECT pg_is_in_recovery()")
    }

    @Test func readsGoToAStandbyAndWritesAndPrimaryReadsToThePrimary() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        let logs = LogCapture()
        var configuration = Store.Configuration()
        configuration.logger = logs.logger()
        let store = try await ScaleOutServers.freshStore(url: url, configuration)
        #expect(store.hasReplicas)
        #expect(try await store.read { db in try inRecovery(db) } == true)
        #expect(try await store.read(from: .primary) { db in try inRecovery(db) } == false)
        #expect(try await store.write { db in try inRecovery(db) } == false)
        // The log says which server each connection reached.
        let hosts = try PostgresConfiguration(url: url).hosts
        let opened = logs.servers
        #expect(opened.contains("127.0.0.1:\(hosts[0].port), primary"), "\(opened)")
        #expect(opened.contains("127.0.0.1:\(hosts[1].port), standby"), "\(opened)")
        await store.close()
    }

    /// What a failover manager does to the server it promotes: pg_auto_failover's
    /// keeper makes its sessions read-only by default for a few seconds, until
    /// it knows the old primary is fenced. A write refused then is a
    /// connection error (the primary moved), not the caller's misuse, and the
    /// writer is replaced: the next write opens a connection to a server
    /// that takes writes. (A session's own setting stands in for the keeper's
    /// reload here: it reaches the connection the same way, as the server's
    /// report of the parameter.)
    @Test func aWriterWhoseServerTurnsReadOnlyFailsAsAConnectionErrorAndIsReplaced() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        let store = try await ScaleOutServers.freshStore(url: url) { $0.maxConnections = 1 }
        try await store.write { db in try db.execute("CREATE TABLE \(ident: "notes") (\(ident: "id") bigint PRIMARY KEY)") }
        func backend() async throws -> Int? {
            try await store.write { db in try db.fetchOne(Int.self, "SELECT pg_backend_pid()") }
        }
        let first = try await backend()

        // Refused in the access that learns of it.
        let refused = await #expect(throws: DatabaseError.self) {
            try await store.write { db in
                try db.execute("SET TRANSACTION READ ONLY")
                try db.execute("SET default_transaction_read_only = on")
                // In a savepoint: the error rolls back only what the savepoint
                // set, and the server still reports the setting, as it would the keeper's.
                _ = try db.savepoint { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(1))") }
            }
        }
        #expect(refused?.kind == .connection && refused?.engineCode == "25006", "\(String(describing: refused))")
        #expect(refused?.message == "cannot execute INSERT in a read-only transaction (the server no longer takes writes: "
            + "it is a standby, or a failover made it read-only; the connection is replaced)")

        // Learnt at the end of an access that succeeded: the writer is not used again.
        #expect(try await backend() == first, "the rollback undid the setting: the server takes writes again, and the writer is kept")
        try await store.write { db in try db.execute("SET default_transaction_read_only = on") }
        try await store.write { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(2))") }
        #expect(try await backend() != first, "a new connection took the read-only one's place")
        let stored = try await store.read(from: .primary) { db in try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "notes")") }
        #expect(stored == [2])
        await store.close()
    }

    @Test func aWriteIsReadFromALaggingStandbyOnceItHasCaughtUp() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.laggingStandbyURL, "DEPOT_POSTGRES_LAGGING_STANDBY_URL")
        let store = try await ScaleOutServers.freshStore(url: url)
        let created = try await store.writeReturningPosition { db in
            try db.execute("CREATE TABLE \(ident: "notes") (\(ident: "id") bigint PRIMARY KEY)")
        }
        // The standby applies each commit 1.5 s late: wait for the table once.
        _ = try await store.read(from: .replica(caughtUpWith: created.position, timeout: .seconds(20))) { db in
            try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "notes")")
        }

        // Taken before the write: it commits after this, so the standby applies it 1.5 s after this at the soonest.
        let written = ContinuousClock.now
        let (_, position) = try await store.writeReturningPosition { db in
            try db.execute("INSERT INTO \(ident: "notes") VALUES (\(1))")
        }
        #expect(position > created.position)
        // The standby has not applied it yet: a read that does not wait misses it.
        let (stale, staleOnStandby) = try await store.read { db in
            (try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "notes")"), try inRecovery(db))
        }
        // `.automatic` may fall back to the primary (no standby answered a new
        // connection at once); only a read on the standby can show the lag.
        if staleOnStandby == true, ContinuousClock.now - written < .seconds(1) {
            #expect(stale == 0, "the lagging standby answered before it could have applied the write")
        }
        // A read that waits for the write's position sees it.
        let caughtUp = try await store.read(from: .replica(caughtUpWith: position, timeout: .seconds(20))) { db in
            (try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "notes")"), try inRecovery(db))
        }
        let waited = ContinuousClock.now - written
        #expect(caughtUp.0 == 1)
        #expect(caughtUp.1 == true, "the read ran on the standby")
        print("read-your-writes on a standby 1.5 s behind: the write was visible there after \(waited)")

        // A wait shorter than the lag is a timeout error naming both positions. Measured from the write:
        // the write committed after `issued`, so the standby applies it 1.5 s after that at the soonest.
        // An attempt whose wait began too late to end before then (a busy machine) proves nothing and is
        // made again with another write; one that did not time out must have ended past that point.
        var timedOut: DatabaseError?
        for value in 2..<32 where timedOut == nil {
            let issued = ContinuousClock.now
            let (_, next) = try await store.writeReturningPosition { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(value))") }
            do {
                try await store.read(from: .replica(caughtUpWith: next, timeout: .milliseconds(200))) { _ in }
                let late = ContinuousClock.now - issued
                #expect(late >= .milliseconds(1300), "a standby 1.5 s behind had applied the write \(late) after it was sent")
            } catch let error as DatabaseError where error.kind == .timeout {
                #expect(error.message.contains("had not applied the log up to \(next) within 0.2 seconds"), "\(error)")
                timedOut = error
            }
        }
        #expect(timedOut != nil, "thirty attempts, and none waited within a second of its write")
        await store.close()
    }

    @Test func aReadWaitingForAStandbyEndsWhenItsTaskIsCancelled() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        let store = try await ScaleOutServers.freshStore(url: url)
        // A position no standby reaches, and a wait far longer than the test.
        let never = CommitPosition(rawValue: UInt64(Int64.max))
        let read = Task { try await store.read(from: .replica(caughtUpWith: never, timeout: .seconds(60))) { _ in 1 } }
        try await Task.sleep(for: .milliseconds(300))
        read.cancel()
        // A bound on liveness, not a timing: the read ends long before its 60 s wait would.
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await read.result; return true }
            group.addTask { try? await Task.sleep(for: .seconds(10)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended, "the read ended within 10 s of its cancellation")
        await #expect(throws: CancellationError.self) { try await read.value }
        // The connection is fine for the next read.
        #expect(try await store.read { db in try inRecovery(db) } == true)
        await store.close()
    }

    @Test func aStoreSetToReadItsWritesWaitsForEachOfThemOnAStandby() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.laggingStandbyURL, "DEPOT_POSTGRES_LAGGING_STANDBY_URL")
        var configuration = Store.Configuration()
        configuration.readYourWritesTimeout = .seconds(20)
        let store = try await ScaleOutServers.freshStore(url: url, configuration)
        try await store.write { db in try db.execute("CREATE TABLE \(ident: "notes") (\(ident: "id") bigint PRIMARY KEY)") }
        for id in 1...2 {
            try await store.write { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(id))") }
            let seen = try await store.read { db in
                (try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "notes")"), try inRecovery(db))
            }
            #expect(seen.0 == id && seen.1 == true)
        }
        #expect(store.lastCommitPosition != nil)
        await store.close()
    }

    @Test func aStandbyThatGoesAwayStopsReceivingReadsUntilItIsBack() async throws {
        let standbyURL = try ScaleOutServers.require(ScaleOutServers.standbyURL, "DEPOT_POSTGRES_STANDBY_URL")
        let configuration = try PostgresConfiguration(url: standbyURL)
        let standby = try #require(configuration.hosts.last)
        let proxy = try TCPProxy(to: standby.host, port: standby.port)
        try proxy.start()
        let url = standbyURL.replacingOccurrences(of: ",\(standby.host):\(standby.port)/", with: ",127.0.0.1:\(proxy.port)/")
        let store = try await ScaleOutServers.freshStore(url: url) {
            $0.maxReplicaConnections = 2
            $0.standbyRetryInterval = .milliseconds(500)
        }
        #expect(try await store.read { db in try inRecovery(db) } == true)
        proxy.stop()
        // Every read after the standby went away succeeds, on the primary.
        for _ in 0..<20 {
            #expect(try await store.read { db in try inRecovery(db) } == false)
        }
        // Once the standby is back, reads return to it after the retry interval.
        try proxy.start()
        let back = ContinuousClock.now
        var onStandby = false
        while !onStandby, ContinuousClock.now - back < .seconds(10) {
            onStandby = try await store.read { db in try inRecovery(db) } == true
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(onStandby, "reads went back to the standby")
        await store.close()
    }
}

/// PgBouncer in transaction mode before the primary, started by scripts/test.
@Suite(.enabled(if: ScaleOutServers.shouldRun, "no scale-out servers named (run scripts/test)"))
struct PgBouncerTests {
    /// Notifications sent through the pooler (pg_notify at each transaction's
    /// commit) reach a listener that connects to the server itself.
    @Test func channelsWorkThroughThePoolerWithTheDirectListener() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.pgbouncerURL, "DEPOT_PGBOUNCER_URL")
        let store = try await ScaleOutServers.freshStore(url: url)
        let channel = "bounced_" + UUID().uuidString.prefix(8).lowercased()
        let recorder = ChannelRecorder(try await store.listen(to: channel))
        for number in 1...3 {
            try await store.write { db in try db.notify(channel, payload: "\(number)") }
        }
        try await recorder.wait("three notifications") { $0.count == 3 }
        #expect(recorder.notifications.map(\.payload) == ["1", "2", "3"])
        recorder.stop()
        await store.close()
    }

    /// Two stores with different search paths share PgBouncer's server
    /// connections: a session setting made once per connection would reach
    /// the other store's transactions.
    @Test func searchPathsNeverLeakBetweenClientsThroughThePooler() async throws {
        let url = try ScaleOutServers.require(ScaleOutServers.pgbouncerURL, "DEPOT_PGBOUNCER_URL")
        let stores = try await [1, 2].asyncMap { number in
            let store = try await ScaleOutServers.freshStore(url: url) { $0.maxConnections = 4 }
            try await store.write { db in
                try db.execute("CREATE TABLE \(ident: "owner") (\(ident: "n") bigint)")
                try db.execute("INSERT INTO \(ident: "owner") VALUES (\(number))")
            }
            return (number, store)
        }
        let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
            for (number, store) in stores {
                for _ in 0..<4 {
                    group.addTask {
                        var wrong = 0
                        for _ in 0..<50 {
                            let seen = try await store.read { db in
                                (try db.fetchOne(Int.self, "SELECT n FROM \(ident: "owner")"), try db.fetchOne(String.self, "SELECT current_setting('TimeZone')"))
                            }
                            if seen.0 != number || seen.1 != "UTC" { wrong += 1 }
                        }
                        return wrong
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(wrong == 0)
        for (_, store) in stores { await store.close() }
    }

    /// The pooler's URL without `listener=`: the server is not named.
    static func poolerURLWithoutListener() throws -> String {
        let url = try ScaleOutServers.require(ScaleOutServers.pgbouncerURL, "DEPOT_PGBOUNCER_URL")
        return String(url[..<(url.range(of: "&listener=")?.lowerBound ?? url.endIndex)])
    }

    /// The server sessions through which this application LISTENed (their
    /// last statement a LISTEN): a pooled server connection keeps its LISTEN
    /// after the client that sent it is gone, and is then shared by others.
    static func listeningSessions(of application: String) async throws -> Int {
        let admin = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        let count = try await admin.read { db in
            try db.fetchOne(Int.self, """
                SELECT count(*) FROM pg_stat_activity WHERE application_name = \(application + "-listener") AND query LIKE 'LISTEN%'
                """)
        }
        await admin.close()
        return count ?? 0
    }

    /// A channel listener needs a session of its own, which the pooler does
    /// not keep: without a listener host it is refused, and nothing LISTENs
    /// through the pooler (it did: a pooled server connection then heard the
    /// channel for whichever client it served next, and PgBouncer 1.18 once
    /// stopped with "server in bad state" on such a connection).
    @Test func channelsThroughThePoolerWithoutAListenerAreAMisuseError() async throws {
        let application = "depot-pooled-" + UUID().uuidString.prefix(8).lowercased()
        let store = try await ScaleOutServers.freshStore(url: try Self.poolerURLWithoutListener()) {
            $0.parameters["application_name"] = application
        }
        let error = await #expect(throws: DatabaseError.self) { _ = try await store.listen(to: "bounced") }
        #expect(error?.kind == .misuse)
        #expect(error?.message.contains("listener=host:port") == true, "\(String(describing: error))")
        await store.close()
        #expect(try await Self.listeningSessions(of: application) == 0)
    }

    @Test func anObservationThroughThePoolerWithoutAListenerIsAMisuseError() async throws {
        let application = "depot-pooled-" + UUID().uuidString.prefix(8).lowercased()
        let store = try await ScaleOutServers.freshStore(url: try Self.poolerURLWithoutListener()) {
            $0.parameters["application_name"] = application
        }
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "t") (\(ident: "x") bigint)")
            try db.enableObservation(of: ["t"])
        }
        let error = await #expect(throws: DatabaseError.self) {
            for try await _ in store.observe({ db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "t")") }) { break }
        }
        #expect(error?.kind == .misuse)
        #expect(error?.message.contains("listener=host:port") == true, "\(String(describing: error))")
        await store.close()
        #expect(try await Self.listeningSessions(of: application) == 0, "the observation's listener LISTENed through the pooler")
    }
}

/// The servers named by "connection opened" log lines.
final class LogCapture: Sendable {
    private let logs = CapturedLogs()
    var servers: [String] {
        logs.records.compactMap { record in
            guard record.message == "connection opened", case .string(let server)? = record.metadata["db.server"] else { return nil }
            return server
        }
    }

    func logger() -> Logger { logs.logger(level: .info) }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

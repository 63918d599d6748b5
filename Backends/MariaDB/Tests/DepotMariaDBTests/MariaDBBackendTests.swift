@_spi(Driver) import Depot
import DepotMariaDB
import DepotMariaDBTesting
import Foundation
import Testing

/// What the conformance suite cannot reach on MariaDB: the migration lock
/// (the suite's migration checks stop at the migrations table, see the
/// README of this package), markers inside quotes, and the configuration's
/// redaction.
@Suite(.serialized, .enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL)"))
struct MariaDBBackendTests {
    func freshStore(_ databases: MariaDBScratchDatabases) async throws -> Store {
        try await databases.makeStore(Store.Configuration())
    }

    @Test func theMigrationLockMakesASecondWriterWaitAndIsReleasedAtCommit() async throws {
        let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let first = try await freshStore(databases)
        try await first.write { db in try db.execute("CREATE TABLE marks (n INT)") }
        let second = Store(driver: first.driver)
        // The first writer takes the lock, writes a row and holds both a
        // while; only then does the second ask for the lock. If the lock did
        // not make it wait for the first's commit, its read would find no row.
        let (holding, signal) = AsyncStream.makeStream(of: Void.self)
        async let held: Void = first.write { db in
            try db.lockForMigration(key: 42)
            try db.execute("INSERT INTO marks VALUES (1)")
            signal.yield()
            Thread.sleep(forTimeInterval: 0.3)
        }
        for await _ in holding { break }
        let seenOnceLocked = try await second.write { db in
            try db.lockForMigration(key: 42)
            return try db.fetchOne(Int.self, "SELECT COUNT(*) FROM marks")
        }
        try await held
        #expect(seenOnceLocked == 1, "the second writer got the lock only after the first's commit")
        let free = try await first.read { db in
            try db.fetchOne(Int.self, "SELECT IS_FREE_LOCK(CONCAT('depot:', DATABASE(), ':', '42'))")
        }
        #expect(free == 1, "no pooled connection still holds the lock after the transactions ended")
        await second.close()
        await first.close()
        await databases.dropAll()
    }

    @Test func aConnectionTheServerDroppedWhileIdleIsOpenedAgainByTheNextAccess() async throws {
        let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let configuration = try MariaDBTestServer.configuration()
        let store = try await databases.makeStore(configuration.store, maxConnections: 1)
        let pooledID = try #require(try await store.read { db in try db.fetchOne(Int.self, "SELECT CONNECTION_ID()") })
        let admin = try await Store.mariadb(configuration)
        try await admin.write { db in try db.execute("KILL CONNECTION \(unsafeRaw: String(pooledID))") }
        await admin.close()
        let again = try await store.write { db in try db.fetchOne(Int.self, "SELECT CONNECTION_ID()") }
        #expect(again != nil && again != pooledID, "a new session served the write")
        // Lost in the middle of an access: the access fails, with a connection error.
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in
                let id = try db.fetchOne(Int.self, "SELECT CONNECTION_ID()")!
                let killer = try MariaDBConfiguration(url: MariaDBTestServer.url!)
                let done = DispatchSemaphore(value: 0)
                Task { let admin = try await Store.mariadb(killer); try await admin.write { db in try db.execute("KILL CONNECTION \(unsafeRaw: String(id))") }; await admin.close(); done.signal() }
                done.wait()
                _ = try db.fetchOne(Int.self, "SELECT 1")
            }
        }
        #expect(error?.kind == .connection, "\(String(describing: error))")
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 2") } == 2, "the store recovers")
        await store.close()
        await databases.dropAll()
    }

    @Test func eachMarkerTakesTheNextValueAndQuotedMarkersAreText() async throws {
        let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let store = try await freshStore(databases)
        let row = try await store.read { db in
            try db.fetchOne(Row.self, "SELECT '?' AS b, \(1) AS c, \("two") AS d")
        }
        #expect(row?["b"] == .text("?"))
        #expect(row?["c"] == .integer(1))
        #expect(row?["d"] == .text("two"))
        await store.close()
        await databases.dropAll()
    }

    @Test func aURLNamesACluster_sNodesEachWithItsPortOr3306AndHowConnectionsSpread() throws {
        let cluster = try MariaDBConfiguration(url: "mariadb://app:s%40cret@db1:3307,db2,[::1]:3309/app?nodes=round-robin")
        #expect(cluster.nodes == [.init(host: "db1", port: 3307), .init(host: "db2", port: 3306), .init(host: "::1", port: 3309)])
        #expect(cluster.nodeOrder == .roundRobin)
        #expect(cluster.user == "app" && cluster.password == "s@cret" && cluster.database == "app")
        #expect(cluster.host == "db1" && cluster.port == 3307, "host and port are the first node's")
        #expect(cluster.description == "mariadb://app:***@db1:3307,db2:3306,[::1]:3309/app?nodes=round-robin")
        let one = try MariaDBConfiguration(url: "mariadb://app:secret@db1/app")
        #expect(one.nodes == [.init(host: "db1", port: 3306)] && one.nodeOrder == .failover)
        for url in ["mariadb://app:s3cret@db1,db2:99999/app", "mariadb://app:s3cret@db1,:3306/app", "mariadb://app:s3cret@db1,db2:x/app",
                    "mariadb://app:s3cret@db1,db2/app?nodes=random", "mariadb://app:s3cret@db1/app?sslmode=require"] {
            let error = #expect(throws: DatabaseError.self, "\(url) is refused") { try MariaDBConfiguration(url: url) }
            #expect(error?.kind == .connection)
            #expect(error?.message.contains("s3cret") == false, "\(String(describing: error))")
        }
    }

    @Test func aStoreConnectsToTheNextNodeWhenTheFirstIsAway() async throws {
        let base = try MariaDBTestServer.configuration()
        // A loopback port where nothing listens, then the test server.
        var configuration = base
        configuration.nodes = [.init(host: "127.0.0.1", port: 1), base.nodes[0]]
        let store = try await Store.mariadb(configuration)
        let answer = try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
        #expect(answer == 1)
        await store.close()
        configuration.nodes = [.init(host: "127.0.0.1", port: 1), .init(host: "127.0.0.1", port: 2)]
        let error = await #expect(throws: DatabaseError.self) { try await Store.mariadb(configuration) }
        #expect(error?.kind == .connection)
        #expect(error?.message.hasPrefix("no MariaDB node of 2 could be used (127.0.0.1:1: cannot connect") == true, "\(String(describing: error))")
        #expect(error?.message.contains(base.password ?? "-") == false)
    }

    @Test func theConfigurationNeverShowsThePassword() throws {
        let configuration = try MariaDBConfiguration(url: "mariadb://app:s3cret@db.example.com:3307/app")
        #expect(configuration.port == 3307 && configuration.user == "app" && configuration.database == "app")
        for text in [configuration.description, String(reflecting: configuration), "\(Mirror(reflecting: configuration).children.map(\.value))"] {
            #expect(!text.contains("s3cret"), "\(text)")
        }
        #expect(throws: DatabaseError.self) { try MariaDBConfiguration(url: "mariadb://app:s3cret@db/") }
        for url in ["postgres://app:s3cret@db/app", "mariadb://app@db/?password=s3cret", "mariadb://app@db/?PASSWORD=s3cret&x=1"] {
            let error = #expect(throws: DatabaseError.self, "\(url) is refused") { try MariaDBConfiguration(url: url) }
            #expect(error?.message.contains("s3cret") == false, "\(String(describing: error))")
        }
    }
}

import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresBackendTests {
    /// Kills a server process from a separate connection, as an administrator or a crash would.
    func terminate(_ pid: Int) async throws {
        let admin = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        let killed = try await admin.write { db in try db.fetchOne(Bool.self, "SELECT pg_terminate_backend(CAST(\(pid) AS integer))") }
        #expect(killed == true)
        await admin.close()
    }

    @Test func killingTheBackendMidTransactionIsAConnectionErrorAndThePoolRecovers() async throws {
        let store = try await PostgresTestServer.freshStore { $0.maxConnections = 1 }
        try await store.write { db in try db.execute("CREATE TABLE \(ident: "t") (\(ident: "x") bigint)") }
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in
                try db.execute("INSERT INTO \(ident: "t") VALUES (\(1))")
                let pid = try db.fetchOne(Int.self, "SELECT pg_backend_pid()") ?? 0
                let done = DispatchSemaphore(value: 0)
                Task.detached { try? await terminate(pid); done.signal() }
                _ = done.wait(timeout: .now() + 600)
                try db.execute("INSERT INTO \(ident: "t") VALUES (\(2))")
            }
        }
        #expect(error?.kind == .connection)
        // The pool replaced the dead connection; the transaction was not committed.
        let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "t")") }
        #expect(count == 0)
        try await store.write { db in try db.execute("INSERT INTO \(ident: "t") VALUES (\(3))") }
        await store.close()
    }

    @Test func refreshingStatisticsGivesThePlannerATablesRowCountWhichANewTableLacks() async throws {
        let store = try await PostgresTestServer.freshStore()
        @Sendable func estimate(_ db: Database) throws -> Double? {
            try db.fetchOne(Double.self, "SELECT reltuples::float8 FROM pg_class WHERE oid = to_regclass(\("\"lookups\""))")
        }
        let (before, after) = try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "lookups") (\(ident: "tbl") text, \(ident: "key") text, PRIMARY KEY (\(ident: "tbl"), \(ident: "key")))")
            try db.execute("INSERT INTO \(ident: "lookups") SELECT 'notes', md5(i::text) FROM generate_series(1, 2000) AS i")
            let before = try estimate(db)
            try db.refreshStatistics(of: ["lookups"])
            return (before, try estimate(db))
        }
        #expect(before == -1, "never analyzed: the planner guesses from the table's pages")
        #expect(after == 2_000)
        await store.close()
    }

    @Test func aConnectionKilledWhileIdleIsReplacedWithoutFailingTheNextAccess() async throws {
        let store = try await PostgresTestServer.freshStore { $0.maxConnections = 1 }
        let pid = try await store.read { db in try db.fetchOne(Int.self, "SELECT pg_backend_pid()") ?? 0 }
        try await terminate(pid)
        let newPID = try await store.read { db in try db.fetchOne(Int.self, "SELECT pg_backend_pid()") ?? 0 }
        #expect(newPID != pid)
        await store.close()
    }

    @Test func everyPooledConnectionKilledWhileIdleIsReplacedWithoutFailingAnAccess() async throws {
        let store = try await PostgresTestServer.freshStore { $0.maxConnections = 4 }
        try await store.write { db in try db.execute("CREATE TABLE \(ident: "t") (\(ident: "x") bigint)") }
        // Four accesses at once, so the pool opens four connections.
        let pids = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask { try await store.read { db in try db.fetchOne(Int.self, "SELECT pg_backend_pid() FROM pg_sleep(0.3)") ?? 0 } }
            }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(pids.count == 4)
        for pid in pids { try await terminate(pid) }
        // Every access draws a dead connection; none may fail.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 0..<8 {
                group.addTask {
                    if value.isMultiple(of: 2) {
                        _ = try await store.write { db in try db.execute("INSERT INTO \(ident: "t") VALUES (\(value))") }
                    } else {
                        _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "t")") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "t")") }
        #expect(count == 4)
        await store.close()
    }

    @Test func aReadAccessHoldsNoLockOnceItReturns() async throws {
        // A read's COMMIT is sent without waiting for its answer: the server must
        // still end the transaction at once, or DDL elsewhere would wait on it.
        let store = try await PostgresTestServer.freshStore { $0.maxConnections = 1 }
        try await store.write { db in try db.execute("CREATE TABLE \(ident: "t") (\(ident: "x") bigint)") }
        let schema = try await store.read { db in
            _ = try db.fetchAll(Int.self, "SELECT \(ident: "x") FROM \(ident: "t")")
            return try db.fetchOne(String.self, "SELECT current_schema()") ?? ""
        }
        let admin = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        try await admin.write { db in
            try db.execute("SET LOCAL lock_timeout = '2s'")
            try db.execute("ALTER TABLE \(ident: schema).\(ident: "t") ADD COLUMN \(ident: "y") bigint")
        }
        await admin.close()
        // The same connection then reads the new column.
        let columns = try await store.read { db in try db.fetchAll(Int.self, "SELECT count(\(ident: "y")) FROM \(ident: "t")") }
        #expect(columns == [0])
        await store.close()
    }

    @Test func theServersStatementTimeoutIsATimeoutError() async throws {
        // Set on the server's side, it also ends statements of a client that went away.
        let store = try await PostgresTestServer.freshStore { $0.parameters["options"] = "-c statement_timeout=200" }
        let error = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.execute("SELECT pg_sleep(5)") }
        }
        #expect(error?.kind == .timeout)
        #expect(error?.engineCode == "57014")
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
        await store.close()
    }

    /// The test server behind a proxy that starts down.
    func proxied(waitsForServer: Bool, maxConnections: Int = 4) throws -> (TCPProxy, PostgresConfiguration) {
        var configuration = try PostgresTestServer.requireConfiguration()
        let proxy = try TCPProxy(to: configuration.host, port: configuration.port)
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.maxConnections = maxConnections
        configuration.store.waitsForServer = waitsForServer
        configuration.store.checkoutTimeout = .seconds(15)
        return (proxy, configuration)
    }

    @Test func aStoreCreatedWhileTheServerIsDownServesAccessesOnceItIsUp() async throws {
        let (proxy, configuration) = try proxied(waitsForServer: true)
        defer { proxy.stop() }
        let store = try await Store.postgres(configuration)
        let started = ContinuousClock.now
        let answer = Task { try await store.read { db in try db.fetchOne(Int.self, "SELECT 42") } }
        try await Task.sleep(for: .milliseconds(600))
        try proxy.start()
        #expect(try await answer.value == 42)
        #expect(ContinuousClock.now - started >= .milliseconds(600))
        await store.close()

        // Without waiting for the server, the same start fails at once, with a connection error.
        let (downProxy, eager) = try proxied(waitsForServer: false)
        let error = await #expect(throws: DatabaseError.self) { try await Store.postgres(eager) }
        #expect(error?.kind == .connection)
        downProxy.stop()
    }

    @Test func afterAServerRestartNoneOfTheNext100AccessesFails() async throws {
        let (proxy, configuration) = try proxied(waitsForServer: true)
        defer { proxy.stop() }
        try proxy.start()
        let store = try await Store.postgres(configuration)
        // Four connections in the pool, all dropped at once by a "restart".
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT 1 FROM pg_sleep(0.2)") } } }
            try await group.waitForAll()
        }
        proxy.stop()
        try await Task.sleep(for: .milliseconds(200))
        try proxy.start()
        var failures: [String] = []
        for index in 0..<100 {
            do {
                if index.isMultiple(of: 3) {
                    _ = try await store.write { db in try db.fetchOne(Int.self, "SELECT \(index)") }
                } else {
                    _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT \(index)") }
                }
            } catch {
                failures.append("access \(index): \(error)")
            }
        }
        #expect(failures == [])
        await store.close()
    }

    @Test func aConnectionLostBeforeAReadsCommitWasAnsweredServesTheNextAccess() async throws {
        // A read access sends its COMMIT without waiting; the next access reads
        // the answer. When the connection is lost before that answer arrives,
        // the next access finds a broken connection, not one "in a transaction".
        let (proxy, configuration) = try proxied(waitsForServer: true, maxConnections: 1)
        defer { proxy.stop() }
        try proxy.start()
        let store = try await Store.postgres(configuration)
        let one = try await store.read { db in
            let value = try db.fetchOne(Int.self, "SELECT 1")
            proxy.holdsReplies = true
            return value
        }
        #expect(one == 1)
        proxy.stop()
        proxy.holdsReplies = false
        try proxy.start()
        #expect(try await store.write { db in try db.fetchOne(Int.self, "SELECT 2") } == 2)
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 3") } == 3)
        await store.close()
    }

    @Test func aWriteWhoseCommitAnswerIsLostAfterItsTaskWasCancelledIsOutcomeUnknownAndCommitted() async throws {
        // A real server behind a proxy that holds the COMMIT's answer: the
        // server committed, the task is cancelled while the access waits for
        // the answer, then the connection drops. The caller must hear "may have
        // committed", never "cancelled, rolled back".
        let (proxy, configuration) = try proxied(waitsForServer: false, maxConnections: 1)
        defer { proxy.stop() }
        try proxy.start()
        let direct = try await Store.postgres(try PostgresTestServer.requireConfiguration())
        let table = "commit_outcome_" + UUID().uuidString.prefix(8).lowercased()
        try await direct.write { db in try db.execute("CREATE TABLE \(ident: table) (id integer PRIMARY KEY)") }
        let store = try await Store.postgres(configuration)
        let write = Task {
            try await store.write { db in
                try db.execute("INSERT INTO \(ident: table) VALUES (1)")
                proxy.holdsReplies = true
            }
        }
        // The COMMIT reached the server: the row is there, read past the proxy
        // (the guard only ends a hung run).
        let deadline = ContinuousClock.now + .seconds(120)
        var committed = false
        while !committed, ContinuousClock.now < deadline {
            committed = try await direct.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: table)") } == 1
            if !committed { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(committed, "the COMMIT never reached the server")
        write.cancel()  // marks the access cancelled before it returns
        proxy.stop()    // the COMMIT's answer is lost with the connection
        let error = await #expect(throws: DatabaseError.self) { try await write.value }
        #expect(error?.kind == .connection && error?.commitOutcomeUnknown == true, "\(String(describing: error))")
        #expect(try await direct.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: table)") } == 1)
        try await direct.write { db in try db.execute("DROP TABLE \(ident: table)") }
        await store.close()
        await direct.close()
    }

    @Test func aConnectionClosedDuringItsLoginIsOpenedOnceMore() async throws {
        // As a pooler does while it restarts: the first connection is closed at once.
        let (proxy, configuration) = try proxied(waitsForServer: false, maxConnections: 1)
        defer { proxy.stop() }
        try proxy.start()
        proxy.dropNextConnections(1)
        let store = try await Store.postgres(configuration)
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } == 1)
        await store.close()
        // Closed twice in a row, it is a connection error.
        proxy.dropNextConnections(2)
        let error = await #expect(throws: DatabaseError.self) { try await Store.postgres(configuration) }
        #expect(error?.kind == .connection)
        #expect(error?.message.contains("server closed the connection unexpectedly") == true, "\(String(describing: error))")
    }

    @Test func waitingTooLongForAConnectionIsATimeoutError() async throws {
        var storeConfiguration = Store.Configuration()
        storeConfiguration.checkoutTimeout = .milliseconds(300)
        let store = try await PostgresTestServer.freshStore(storeConfiguration) { $0.maxConnections = 1 }
        let (holding, holdingContinuation) = AsyncStream<Void>.makeStream()
        let release = DispatchSemaphore(value: 0)
        let holder = Task {
            try await store.read { _ in
                holdingContinuation.yield()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        for await _ in holding { break }
        let error = await #expect(throws: DatabaseError.self) { try await store.read { _ in 1 } }
        #expect(error?.kind == .timeout)
        release.signal()
        try await holder.value
        #expect(try await store.read { _ in 2 } == 2)
        await store.close()
    }

    @Test func cancellingATaskCancelsItsQueryOnTheServer() async throws {
        let store = try await PostgresTestServer.freshStore { $0.maxConnections = 1 }
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let sleeper = Task {
            try await store.read { db in
                startedContinuation.yield()
                try db.execute("SELECT pg_sleep(60) AS cancelled_by_its_task")
            }
        }
        for await _ in started { break }
        // The query has reached the server: another store sees it running.
        let admin = try await PostgresTestServer.freshStore()
        let deadline = ContinuousClock.now + .seconds(120)
        while try await admin.read({ db in
            try db.fetchOne(Int.self, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60) AS cancelled_by_its_task' AND state = 'active'")
        }) != 1 {
            guard ContinuousClock.now < deadline else { Issue.record("the query never ran on the server"); break }
            try await Task.sleep(for: .milliseconds(5))
        }
        await admin.close()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // The one connection is clean and free: not in a transaction, no query running.
        let running = try await store.read { db in
            try db.fetchOne(Int.self, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60) AS cancelled_by_its_task' AND state = 'active'")
        }
        #expect(running == 0)
        await store.close()
    }

    @Test func serializableConflictsAreSerializationErrors() async throws {
        let store = try await PostgresTestServer.freshStore()
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "accounts") (\(ident: "id") bigint PRIMARY KEY, \(ident: "balance") bigint NOT NULL)")
            try db.execute("INSERT INTO \(ident: "accounts") VALUES (1, 100), (2, 100)")
        }
        let bothRead = DispatchGroup()
        bothRead.enter()
        bothRead.enter()
        func withdraw(_ id: Int) async throws {
            try await store.write(isolation: .serializable) { db in
                let total = try db.fetchOne(Int.self, "SELECT sum(\(ident: "balance"))::bigint FROM \(ident: "accounts")") ?? 0
                bothRead.leave()
                _ = bothRead.wait(timeout: .now() + 20)
                if total >= 150 {
                    try db.execute("UPDATE \(ident: "accounts") SET \(ident: "balance") = \(ident: "balance") - 150 WHERE \(ident: "id") = \(id)")
                }
            }
        }
        let first = Task { try await withdraw(1) }
        let second = Task { try await withdraw(2) }
        let results = [await first.result, await second.result]
        let failures = results.compactMap { result -> DatabaseError? in
            if case .failure(let error as DatabaseError) = result { return error }
            return nil
        }
        #expect(failures.count == 1)
        #expect(failures.first?.kind == .serialization)
        #expect(failures.first?.engineCode == "40001")
        await store.close()
    }

    @Test func aQueryInsideAStreamingLoopRuns() async throws {
        let store = try await PostgresTestServer.freshStore()
        let pairs = try await store.write { db -> [String] in
            try db.execute("CREATE TABLE \(ident: "n") (\(ident: "v") bigint)")
            try db.execute("INSERT INTO \(ident: "n") SELECT generate_series(1, 5)")
            var pairs: [String] = []
            try db.forEach(Int.self, "SELECT \(ident: "v") FROM \(ident: "n") ORDER BY 1") { v in
                let square = try db.fetchOne(Int.self, "SELECT \(v) * \(v)") ?? 0
                pairs.append("\(v):\(square)")
            }
            return pairs
        }
        #expect(pairs == ["1:1", "2:4", "3:9", "4:16", "5:25"])
        await store.close()
    }

    @Test func typesDepotDoesNotReadSayHowToCastThem() async throws {
        let store = try await PostgresTestServer.freshStore()
        let error = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.fetchOne(String.self, "SELECT interval '1 day' AS \(ident: "span")") }
        }
        #expect(error?.kind == .decoding)
        #expect(error?.column == "span")
        #expect(error?.message.contains("::text") == true)
        let nan = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.fetchOne(Decimal.self, "SELECT 'NaN'::numeric") }
        }
        #expect(nan?.kind == .decoding)
        let text = try await store.read { db in try db.fetchOne(String.self, "SELECT interval '1 day'::text") }
        #expect(text == "1 day")
    }

    @Test func textWithNULIsRefusedBeforeItIsTruncated() async throws {
        let store = try await PostgresTestServer.freshStore()
        let error = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.fetchOne(String.self, "SELECT \("before\u{0}after")") }
        }
        #expect(error?.kind == .encoding)
        #expect(error?.message.contains("NUL") == true)
    }

    @Test func aWrongPasswordIsAnAuthenticationErrorThatNeverShowsThePassword() async throws {
        var configuration = try PostgresTestServer.requireConfiguration()
        configuration.password = "wrong-secret-\(UUID().uuidString)"
        let error = await #expect(throws: DatabaseError.self) { try await Store.postgres(configuration) }
        #expect(error?.kind == .authentication)
        #expect(error?.description.contains(configuration.password ?? "") == false)
        #expect(error?.message.contains("password authentication failed") == true)
    }

    @Test func aStoreThatWaitsForItsServerDoesNotWaitOnAWrongPassword() async throws {
        var configuration = try PostgresTestServer.requireConfiguration()
        configuration.password = "wrong-secret-\(UUID().uuidString)"
        configuration.store.waitsForServer = true
        configuration.store.checkoutTimeout = .seconds(20)
        // A store that waits for its server starts without it; its first access connects.
        let store = try await Store.postgres(configuration)
        let started = ContinuousClock.now
        let error = await #expect(throws: DatabaseError.self) { try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } }
        #expect(error?.kind == .authentication)
        await store.close()
        // Waiting would take the whole checkout timeout (20 s); a refusal is final.
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func anUnreachableServerIsAConnectionError() async throws {
        let configuration = PostgresConfiguration(host: "127.0.0.1", port: 1, user: "nobody", password: "secret", database: "none")
        let error = await #expect(throws: DatabaseError.self) { try await Store.postgres(configuration) }
        #expect(error?.kind == .connection)
        #expect(error?.message.hasPrefix("cannot connect to PostgreSQL at 127.0.0.1:1/none as nobody") == true)
        #expect(error?.description.contains("secret") == false)
    }
}

/// URL parsing needs no server.
@Suite struct PostgresConfigurationTests {
    @Test func aURLGivesEveryField() throws {
        let configuration = try PostgresConfiguration(url: "postgresql://app%40corp:p%40ss%3Aword@db.example.com:6543/reminders?sslmode=require&search_path=app")
        #expect(configuration.user == "app@corp")
        #expect(configuration.password == "p@ss:word")
        #expect(configuration.host == "db.example.com")
        #expect(configuration.port == 6543)
        #expect(configuration.database == "reminders")
        #expect(configuration.searchPath == "app")
        #expect(configuration.parameters == ["sslmode": "require"])
        #expect(configuration.description == "postgres://app@corp:***@db.example.com:6543/reminders")
    }

    @Test func theClientCheckIntervalIsFiveSecondsUnlessTheURLSaysOtherwise() throws {
        #expect(try PostgresConfiguration(url: "postgres://me@localhost").clientConnectionCheckInterval == .seconds(5))
        let cases: [(String, Duration?)] = [("250ms", .milliseconds(250)), ("250", .milliseconds(250)), ("2s", .seconds(2)),
                                            ("1min", .seconds(60)), ("off", nil), ("0", nil)]
        for (text, expected) in cases {
            let configuration = try PostgresConfiguration(url: "postgres://me@localhost/db?client_connection_check_interval=\(text)")
            #expect(configuration.clientConnectionCheckInterval == expected, "\(text)")
            #expect(configuration.parameters.isEmpty, "Depot's own parameter, never passed to libpq")
        }
        for text in ["", "2h", "-1s", "1.5s", "99999999999999999999"] {
            let error = #expect(throws: DatabaseError.self) {
                try PostgresConfiguration(url: "postgres://me:topsecret@localhost/db?client_connection_check_interval=\(text)")
            }
            #expect(error?.kind == .connection && error.map { "\($0)".contains("client_connection_check_interval must be") } == true, "\(text)")
            #expect(error.map { "\($0)".contains("topsecret") } == false)
        }
    }

    @Test func defaultsFollowLibpq() throws {
        let configuration = try PostgresConfiguration(url: "postgres://me@localhost")
        #expect(configuration.port == 5432 && configuration.database == "me" && configuration.password == nil)
        #expect(configuration.description == "postgres://me@localhost:5432/me")
        // No user: PGUSER, else the operating system's user, as libpq.
        let system = try #require(getpwuid(geteuid())?.pointee.pw_name.map { String(cString: $0) })
        let expected = ProcessInfo.processInfo.environment["PGUSER"].flatMap { $0.isEmpty ? nil : $0 } ?? system
        #expect(try PostgresConfiguration(url: "postgres://localhost/db").user == expected)
        #expect(try PostgresConfiguration(url: "postgresql://localhost:5433").database == expected, "the database defaults to the user")
    }

    @Test func aBadURLSaysWhatIsWrongWithoutThePassword() {
        #expect(throws: DatabaseError.self) { try PostgresConfiguration(url: "mysql://u:topsecret@h/db") }
        do {
            _ = try PostgresConfiguration(url: "mysql://u:topsecret@h/db")
        } catch {
            #expect(!"\(error)".contains("topsecret"))
            #expect("\(error)".contains("mysql://u:***@h/db"))
        }
    }
}

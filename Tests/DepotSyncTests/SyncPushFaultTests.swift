import Depot
import DepotPostgres
import DepotSync
import Foundation
import Synchronization
import Testing
import TestSupport

/// A push is all or nothing on the server: its backend killed inside it
/// (as its bulk insert of stamps locks their table, after its rows and their
/// states are written; inside that COPY, with rows sent; or at its last
/// statement, after everything else) leaves no row, state, stamp or version
/// of it, and the device's next sync applies it once.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct SyncPushFaultTests {
    /// What the server keeps of pushes.
    struct Kept: Decodable, Equatable {
        var notes: Int
        var states: Int
        var stamps: Int
        var version: Int64
        var applied: Int
    }

    /// Another store on `store`'s schema, with sessions of its own: one
    /// that holds what a sync operation needs, so the operation waits there.
    static func storeBeside(_ store: Store) async throws -> Store {
        let schema = try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()::text") } ?? ""
        var configuration = try PostgresTestServer.requireConfiguration()
        configuration.searchPath = schema
        return try await Store.postgres(configuration)
    }

    static func kept(_ store: Store) async throws -> Kept? {
        try await store.read { db in
            try db.fetchOne(Kept.self, """
                SELECT (SELECT count(*) FROM "syncNotes") AS "notes",
                    (SELECT count(*) FROM "depot_sync_server_rows") AS "states",
                    (SELECT count(*) FROM "depot_sync_server_clocks") AS "stamps",
                    (SELECT "version" FROM "depot_sync_server_state" WHERE "id" = 1) AS "version",
                    (SELECT coalesce(sum("applied"), 0) FROM "depot_sync_server_clients") AS "applied"
                """)
        }
    }

    /// Where the push's backend is killed: what another session holds so the
    /// push waits there, and how the statement it waits in begins.
    enum Point: String, CaseIterable, CustomTestStringConvertible {
        case stampsTable, stampsCopy, lastStatement
        var testDescription: String {
            switch self {
            case .stampsTable: "as its bulk insert of stamps locks their table"
            case .stampsCopy: "inside the COPY of its stamps, rows already sent"
            case .lastStatement: "at its last statement"
            }
        }
        /// The blocker's statement, for a device whose node is `client`;
        /// `lock` is an advisory lock key of this test's own.
        func hold(client: String, lock: Int64) -> SQL {
            switch self {
            case .stampsTable: "LOCK TABLE \"depot_sync_server_clocks\" IN SHARE MODE"
            // The trigger of `prepare` takes it for each stamp the COPY inserts.
            case .stampsCopy: "SELECT pg_advisory_xact_lock(\(lock))"
            // Uncommitted: the push's own insert of the same key waits for this transaction.
            case .lastStatement: "INSERT INTO \"depot_sync_server_pushes\" VALUES (\(client), 1, 'held', ''::bytea)"
            }
        }
        /// What the server's schema needs for the push to wait at the point.
        func prepare(_ db: Database, lock: Int64) throws {
            guard self == .stampsCopy else { return }
            try db.execute(SQL(unsafeRaw: """
                CREATE FUNCTION "depot_test_wait_for_blocker"() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_advisory_xact_lock(\(lock)); RETURN NEW; END $$
                """))
            try db.execute("""
                CREATE TRIGGER "depot_test_wait_for_blocker" BEFORE INSERT ON "depot_sync_server_clocks"
                FOR EACH ROW EXECUTE FUNCTION "depot_test_wait_for_blocker"()
                """)
        }
        /// How the statement the push waits in begins (the bulk insert sends
        /// its table's lock, its columns' query and its COPY in one), and what it waits for.
        var waitsIn: (statement: String, event: String) {
            switch self {
            case .stampsTable: ("LOCK TABLE \"depot_sync_server_clocks\"", "relation")
            case .stampsCopy: ("LOCK TABLE \"depot_sync_server_clocks\"", "advisory")
            case .lastStatement: ("INSERT INTO \"depot_sync_server_pushes\"", "transactionid")
            }
        }
    }

    @Test(arguments: Point.allCases)
    func aPushKilledInsideLeavesNothingAndTheNextSyncAppliesItOnce(at point: Point) async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The server's sessions carry a name of their own: the one to kill is found among them alone.
        let name = "depot-push-fault-\(UInt32.random(in: 0...UInt32.max))", lock = Int64.random(in: 1...Int64.max)
        let store = try await PostgresTestServer.freshStore { $0.parameters["application_name"] = name }
        try await store.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" uuid PRIMARY KEY, \"title\" text NOT NULL, \"body\" text, \"rank\" bigint NOT NULL)")
            try SyncServer.installSyncServer(in: db)
            try point.prepare(db, lock: lock)
        }
        let server = SyncServer(store: store, tables: SyncReplicaTests.tables)
        let device = try await SyncReplicaTests.replica(folder, "device")
        let transport = InProcessSyncTransport(server: server, seed: 1)
        let client = SyncClient(store: device, tables: SyncReplicaTests.tables, transport: transport)
        // Three pushes of 500 notes; the first is killed.
        let notes = (0..<1_500).map { SyncNote(id: UUID(), title: "Note \($0)", body: $0.isMultiple(of: 3) ? nil : "body \($0)", rank: $0) }
        try await device.write { db in try db.insert(contentsOf: notes) }
        let node = try #require(try await device.read { db in try db.fetchOne(String.self, "SELECT \"node\" FROM \"depot_sync_state\"") })
        let before = try #require(try await Self.kept(server.store))
        #expect(before.notes == 0 && before.states == 0 && before.applied == 0)

        // Another session on the server's schema holds what the push needs at the point.
        let blocker = try await Self.storeBeside(server.store)
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let holding = Task.detached {
            try await blocker.write { db in
                try db.execute(point.hold(client: node, lock: lock))
                held.signal()
                _ = release.wait(timeout: .now() + 600)
                // Rolled back: the held row never stays.
                throw CancellationError()
            }
        }
        #expect(held.wait(timeout: .now() + 600) == .success)
        let finished = Flag()
        let pushing = Task {
            defer { finished.set() }
            try await client.sync()
        }
        // The push's backend, once it waits for the blocker (the only lock it can wait for), and what it runs then.
        struct Waiting: Decodable { var pid: Int; var query: String; var wait_event: String }
        var waiting: Waiting?
        while waiting == nil, !finished.isSet {
            waiting = try await blocker.read { db in
                try db.fetchOne(Waiting.self, """
                    SELECT "pid", "query", "wait_event" FROM pg_stat_activity WHERE "wait_event_type" = 'Lock' AND "application_name" = \(name)
                    """)
            }
            if waiting == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(waiting != nil, "the push ended without waiting for the blocker")
        #expect(waiting?.query.hasPrefix(point.waitsIn.statement) == true && waiting?.wait_event == point.waitsIn.event,
                "the push waits for \(waiting?.wait_event ?? "") at \(waiting?.query.prefix(80) ?? "")")
        let pid = waiting?.pid ?? 0
        let killed = try await blocker.read { db in try db.fetchOne(Bool.self, "SELECT pg_terminate_backend(CAST(\(pid) AS integer))") }
        #expect(killed == true)
        release.signal()
        await #expect(throws: CancellationError.self) { try await holding.value }
        let outcome = await pushing.result
        #expect(throws: DatabaseError.self, "the push's connection was lost before it committed") { try outcome.get() }
        #expect(try await Self.kept(server.store) == before, "nothing of the killed push stays")

        // The device still has its push to make: made now, it is applied once.
        try await client.sync()
        let after = try #require(try await Self.kept(server.store))
        #expect(after.notes == notes.count && after.states == notes.count)
        #expect(after.stamps == notes.count * 4, "a stamp for each column of each note")
        let pushes = (notes.count + client.pageSize - 1) / client.pageSize
        #expect(after.applied == pushes, "each push was applied once")
        #expect(after.version == before.version + Int64(pushes))
        // Another device pulls every note as the first one wrote it.
        let other = try await SyncReplicaTests.replica(folder, "other")
        try await SyncClient(store: other, tables: SyncReplicaTests.tables, transport: transport).sync()
        let pulled = try await other.read { db in try db.fetchAll(SyncNote.self, "SELECT * FROM \"syncNotes\" ORDER BY \"rank\"") }
        #expect(pulled == notes)
        await blocker.close()
        await other.close()
        await device.close()
        await server.store.close()
    }
}

/// Set once, read from anywhere.
private final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

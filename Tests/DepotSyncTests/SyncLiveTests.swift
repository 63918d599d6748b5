import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Testing
import TestSupport

/// Devices that sync while the app runs (`syncContinuously`): a change made
/// on one reaches the other without either calling `sync()`, through two
/// server instances on one database (a device on each), woken by the
/// server's commits (a long poll on an observation of its version), not by
/// polling.
@Suite struct SyncLiveTests {
    typealias Tables = SyncReplicaTests

    /// Two server instances (two stores, as two processes would have) on one database.
    struct Instances {
        var first: SyncServer
        var second: SyncServer
        var close: @Sendable () async -> Void
    }

    static func sqliteInstances(_ folder: URL) async throws -> Instances {
        let path = folder.appendingPathComponent("server.sqlite").path
        let first = try Store.sqlite(at: path)
        try await first.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" TEXT PRIMARY KEY, \"title\" TEXT NOT NULL, \"body\" TEXT, \"rank\" INTEGER NOT NULL)")
            try SyncServer.installSyncServer(in: db)
        }
        let second = try Store.sqlite(at: path)
        return Instances(first: SyncServer(store: first, tables: Tables.tables), second: SyncServer(store: second, tables: Tables.tables),
                         close: { await first.close(); await second.close() })
    }

    static func postgresInstances() async throws -> Instances {
        final class Captured: @unchecked Sendable { var configuration: PostgresConfiguration? }
        let captured = Captured()
        let first = try await PostgresTestServer.freshStore(tweak: { captured.configuration = $0 })
        try await first.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" uuid PRIMARY KEY, \"title\" text NOT NULL, \"body\" text, \"rank\" bigint NOT NULL)")
            try SyncServer.installSyncServer(in: db)
        }
        let second = try await Store.postgres(try #require(captured.configuration))
        return Instances(first: SyncServer(store: first, tables: Tables.tables), second: SyncServer(store: second, tables: Tables.tables),
                         close: { await first.close(); await second.close() })
    }

    /// Whether `store`'s note titles come to satisfy `done` (watched by an
    /// observation); false only past a bound against a hang.
    static func eventually(_ store: Store, _ done: @escaping @Sendable ([String]) -> Bool) async throws -> Bool {
        let titles = store.observe { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \"syncNotes\" ORDER BY \"title\"") }
        do {
            try await ObservationWait.first(titles, where: done)
            return true
        } catch is ObservationWait.TimedOut {
            return false
        }
    }

    /// A device replica whose notes its test observes.
    static func replica(_ folder: URL, _ name: String) async throws -> Store {
        let store = try await Tables.replica(folder, name)
        try await store.write { db in try db.enableObservation(of: ["syncNotes"]) }
        return store
    }

    /// A laptop on the first instance and a phone on the second, both
    /// syncing continuously: each one's edit reaches the other.
    static func editsTravelBetweenLiveDevices(_ instances: Instances, _ folder: URL) async throws {
        let laptop = SyncClient(store: try await replica(folder, "laptop"), tables: Tables.tables,
                                transport: InProcessSyncTransport(server: instances.first, seed: 1))
        let phone = SyncClient(store: try await replica(folder, "phone"), tables: Tables.tables,
                               transport: InProcessSyncTransport(server: instances.second, seed: 2))
        final class Failures: @unchecked Sendable {
            private let lock = NSLock()
            private var errors: [String] = []
            func note(_ event: SyncClient.LiveEvent) {
                if case .failed(let error, _) = event { lock.withLock { errors.append("\(error)") } }
            }
            var all: [String] { lock.withLock { errors } }
        }
        let failures = Failures()
        let running = [laptop, phone].map { client in Task { try await client.syncContinuously(onSync: failures.note) } }
        defer { for task in running { task.cancel() } }
        let id = UUID()
        try await laptop.store.write { db in try db.insert(SyncNote(id: id, title: "Groceries", body: nil, rank: 1)) }
        #expect(try await eventually(phone.store) { $0 == ["Groceries"] }, "the phone received the laptop's note without calling sync()")
        try await phone.store.write { db in try db.execute("UPDATE \"syncNotes\" SET \"title\" = 'Errands'") }
        #expect(try await eventually(laptop.store) { $0 == ["Errands"] }, "the laptop received the phone's edit")
        for _ in 0..<5 {
            try await laptop.store.write { db in try db.execute("UPDATE \"syncNotes\" SET \"rank\" = \"rank\" + 1, \"title\" = 'Errands ' || CAST(\"rank\" + 1 AS TEXT)") }
        }
        #expect(try await eventually(phone.store) { $0 == ["Errands 6"] }, "a burst of edits ends with the last")
        for task in running { task.cancel() }
        for task in running {
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        #expect(failures.all.isEmpty, "no round failed: \(failures.all)")
    }

    @Test func devicesOnTwoInstancesOfAnSQLiteServerHearEachOther() async throws {
        let folder = try Tables.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let instances = try await Self.sqliteInstances(folder)
        try await Self.editsTravelBetweenLiveDevices(instances, folder)
        await instances.close()
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func devicesOnTwoInstancesOfAPostgreSQLServerHearEachOther() async throws {
        let folder = try Tables.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let instances = try await Self.postgresInstances()
        try await Self.editsTravelBetweenLiveDevices(instances, folder)
        await instances.close()
    }

    /// A wait answers at once when the server is past `after`, holds until a
    /// commit otherwise (on another instance too), and answers with the same
    /// version when its timeout passes first.
    @Test func aWaitAnswersOnTheCommitThatPassesItsVersionOrAtItsTimeout() async throws {
        let folder = try Tables.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let instances = try await Self.sqliteInstances(folder)
        let device = SyncClient(store: try await Tables.replica(folder, "device"), tables: Tables.tables,
                                transport: InProcessSyncTransport(server: instances.first, seed: 1))
        let quiet = try await instances.second.handle(SyncWait(after: 0, timeout: 0))
        #expect(quiet.head == 0, "nothing committed: the timeout answers with the version there is")
        let waiting = Task { try await instances.second.handle(SyncWait(after: 0, timeout: 60)) }
        try await device.store.write { db in try db.insert(SyncNote(id: UUID(), title: "A", body: nil, rank: 1)) }
        try await device.sync()
        let woken = try await waiting.value
        #expect(woken.head == 1, "the push's commit on the other instance answers the wait")
        let past = try await instances.second.handle(SyncWait(after: 0, timeout: 60))
        #expect(past.head == 1, "already past: answered at once")
        await instances.close()
    }
}

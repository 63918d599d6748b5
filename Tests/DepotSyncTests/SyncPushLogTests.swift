import Depot
import DepotSQLite
import DepotSync
import Foundation
import Testing

/// The server's log of pushes (what makes a retried push harmless and tells
/// a restored device from a retry) keeps one push per device: it grows with
/// devices, not with pushes, and a device restored from an old copy is still
/// told apart from a retry, however many pushes behind the copy is.
@Suite struct SyncPushLogTests {
    typealias Tables = SyncParentsTests

    static func loggedPushes(_ server: SyncServer) async throws -> Int {
        try await server.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"depot_sync_server_pushes\"") ?? 0 }
    }

    @Test func theLogHoldsOnePushPerDeviceAndACopyManyPushesBehindLosesNothing() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await SyncLossReproductionTests.system(folder, accounts: ["alice", "alice"])
        var original = devices[0]
        let other = devices[1]
        let home = SyncFolder(id: UUID(), title: "Home")
        try await original.store.write { db in try db.insert(home) }
        try await original.sync()
        try await other.sync()
        // The backup, then twenty more pushes of the original.
        await original.store.close()
        let path = folder.appendingPathComponent("device0.sqlite").path, backup = folder.appendingPathComponent("backup.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        original = SyncClient(store: try Store.sqlite(at: path), tables: Tables.tables,
                              transport: InProcessSyncTransport(server: server, account: "alice", seed: 8))
        for n in 0..<20 {
            try await original.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "After the backup \(n)")) }
            try await original.sync()
        }
        let logged = try await Self.loggedPushes(server)
        #expect(logged == 1, "the one device that pushed, twenty-one times, has one entry: \(logged)")
        // The restored copy's next push reuses a number twenty pushes old, whose entry the log no longer holds.
        let restored = SyncClient(store: try Store.sqlite(at: backup), tables: Tables.tables,
                                  transport: InProcessSyncTransport(server: server, account: "alice", seed: 9))
        try await restored.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "On the restored copy")) }
        let report = try await restored.sync()
        #expect(report.identityRenewed, "told apart from a retry: it goes on as a new device")
        for device in [original, other, restored] { try await device.sync() }
        let expected = ((0..<20).map { "After the backup \($0)" } + ["On the restored copy"]).sorted()
        for store in [server.store, original.store, other.store, restored.store] {
            #expect(try await SyncLossReproductionTests.titles(store) == expected, "every change of both copies on every device")
        }
        for store in [original.store, other.store, restored.store, server.store] { await store.close() }
    }
}

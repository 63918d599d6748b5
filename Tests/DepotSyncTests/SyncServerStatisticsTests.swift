import Depot
import DepotSync
import Foundation
import Testing
import TestSupport

/// A new server's sync tables grow fast under a device's first large push:
/// the server refreshes the planner's statistics as they do, so a page's
/// lookups of its keys use the keys' index instead of reading every row.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct SyncServerStatisticsTests {
    @Test func theServerRefreshesItsTablesStatisticsOnceAPushHasGrownThemBy5000Changes() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await SyncConvergenceTests.server()
        func estimate() async throws -> Double? {
            try await server.store.read { db in
                try db.fetchOne(Double.self, "SELECT reltuples::float8 FROM pg_class WHERE oid = to_regclass(\("depot_sync_server_clocks"))")
            }
        }
        // Autovacuum would analyze the table too, a minute or so later: not during this test.
        try await server.store.write { db in
            try db.execute("ALTER TABLE \(ident: "depot_sync_server_clocks") SET (autovacuum_enabled = false)")
        }
        let device = try await SyncReplicaTests.replica(folder, "device")
        var client = SyncClient(store: device, tables: SyncReplicaTests.tables, transport: InProcessSyncTransport(server: server, seed: 1))
        client.pageSize = 1_000

        try await device.write { db in
            for index in 0..<4_000 { try db.insert(SyncNote(id: UUID(), title: "Note \(index)", body: nil, rank: index)) }
        }
        try await client.push()
        #expect(try await estimate() == -1, "4,000 changes: not yet")

        try await device.write { db in
            for index in 4_000..<5_000 { try db.insert(SyncNote(id: UUID(), title: "Note \(index)", body: nil, rank: index)) }
        }
        try await client.push()
        let rows = try await server.store.read { db in try db.fetchOne(Double.self, "SELECT count(*)::float8 FROM \(ident: "depot_sync_server_clocks")") }
        #expect(try await estimate() == rows, "5,000 changes: the statistics count the stamps")
        await device.close()
        await server.store.close()
    }
}

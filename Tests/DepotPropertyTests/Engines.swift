import Depot
import DepotDifferential
import DepotPostgres
import DepotSQLite
import Foundation
import TestSupport
import Testing

/// The two engines every differential check runs on here: SQLite as the
/// reference, PostgreSQL under test (the MariaDB plug-in runs the same checks
/// with MariaDB under test).
enum Engines {
    static func make(_ configuration: Store.Configuration) async throws -> DifferentialEngines {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-properties-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sqliteConfiguration = SQLiteConfiguration()
        sqliteConfiguration.store = configuration
        let sqlite = try Store.sqlite(at: folder.appendingPathComponent("p.sqlite").path, sqliteConfiguration)
        let postgres: Store
        do {
            postgres = try await PostgresTestServer.freshStore(configuration)
        } catch {
            await sqlite.close()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        return DifferentialEngines(
            reference: DifferentialEngine(name: "SQLite", store: sqlite),
            subject: DifferentialEngine(name: "PostgreSQL", store: postgres),
            cleanUp: { try? FileManager.default.removeItem(at: folder) }
        )
    }

    /// Whether the engine beside SQLite can run here (on CI always: there a missing server fails).
    static var canRun: Bool { PostgresTestServer.shouldRun }
    static let missingServer: Comment = "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"
}

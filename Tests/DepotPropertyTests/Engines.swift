import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import PropertyBased
import TestSupport
import Testing

/// The two engines every property runs on, side by side.
struct Engines {
    let sqlite: Store
    let postgres: Store
    private let folder: URL

    static func make(_ configuration: Store.Configuration = Store.Configuration()) async throws -> Engines {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-properties-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sqliteConfiguration = SQLiteConfiguration()
        sqliteConfiguration.store = configuration
        let sqlite = try Store.sqlite(at: folder.appendingPathComponent("p.sqlite").path, sqliteConfiguration)
        let postgres = try await PostgresTestServer.freshStore(configuration)
        return Engines(sqlite: sqlite, postgres: postgres, folder: folder)
    }

    var both: [(name: String, store: Store)] { [("SQLite", sqlite), ("PostgreSQL", postgres)] }

    /// Whether the engine beside SQLite can run here (on CI always: there a missing server fails).
    static var canRun: Bool { PostgresTestServer.shouldRun }
    static let missingServer: Comment = "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"

    func close() async {
        await sqlite.close()
        await postgres.close()
        try? FileManager.default.removeItem(at: folder)
    }
}

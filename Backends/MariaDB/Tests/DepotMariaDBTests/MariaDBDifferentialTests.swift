import Depot
import DepotDifferential
import DepotMariaDB
import DepotMariaDBTesting
import DepotSQLite
import Foundation
import Testing

/// The two engines every differential check runs on here: SQLite as the
/// reference, MariaDB under test (the main package runs the same checks with
/// PostgreSQL under test).
enum Engines {
    static func make(_ configuration: Store.Configuration) async throws -> DifferentialEngines {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sqliteConfiguration = SQLiteConfiguration()
        sqliteConfiguration.store = configuration
        let sqlite = try Store.sqlite(at: folder.appendingPathComponent("fuzz.sqlite").path, sqliteConfiguration)
        let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let mariadb: Store
        do {
            mariadb = try await databases.makeStore(configuration)
        } catch {
            await sqlite.close()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        return DifferentialEngines(
            reference: DifferentialEngine(name: "SQLite", store: sqlite),
            subject: DifferentialEngine(name: "MariaDB", store: mariadb),
            cleanUp: {
                await databases.dropAll()
                try? FileManager.default.removeItem(at: folder)
            }
        )
    }

    /// Whether the engine beside SQLite can run here (on CI always: there a missing server fails).
    static var canRun: Bool { MariaDBTestServer.shouldRun }
    static let missingServer: Comment = "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"
}

/// Every differential check of `DepotDifferential` (the query fuzzer, the
/// property checks, the reminders scenario) with SQLite as the reference and
/// MariaDB under test. One at a time: each fills both engines.
@Suite(.serialized, .enabled(if: Engines.canRun, Engines.missingServer))
struct MariaDBDifferentialTests {
    @Test(arguments: DifferentialCheck.all)
    func mariaDBAgreesWithSQLiteAndTheModel(_ check: DifferentialCheck) async throws {
        for failure in try await check.run(using: Engines.make) {
            Issue.record(Comment(rawValue: failure))
        }
    }
}

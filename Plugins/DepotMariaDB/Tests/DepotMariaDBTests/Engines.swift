import Depot
import DepotMariaDB
import DepotMariaDBTesting
import DepotSQLite
import Foundation
import Testing

/// The engines the differential query fuzzer (the main package's
/// `Tests/DepotPropertyTests/QueryFuzzTests*.swift`, linked in) runs on here:
/// SQLite and MariaDB, each against the same model of the builder's meaning.
/// The main package runs the same fuzzer on SQLite and PostgreSQL.
struct Engines {
    let sqlite: Store
    let mariadb: Store
    private let folder: URL
    private let databases: MariaDBScratchDatabases

    static func make(_ configuration: Store.Configuration = Store.Configuration()) async throws -> Engines {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sqliteConfiguration = SQLiteConfiguration()
        sqliteConfiguration.store = configuration
        let sqlite = try Store.sqlite(at: folder.appendingPathComponent("fuzz.sqlite").path, sqliteConfiguration)
        let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let mariadb = try await databases.makeStore(configuration)
        return Engines(sqlite: sqlite, mariadb: mariadb, folder: folder, databases: databases)
    }

    var both: [(name: String, store: Store)] { [("SQLite", sqlite), ("MariaDB", mariadb)] }

    /// Whether the engine beside SQLite can run here (on CI always: there a missing server fails).
    static var canRun: Bool { MariaDBTestServer.shouldRun }
    static let missingServer: Comment = "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"

    func close() async {
        await sqlite.close()
        await mariadb.close()
        await databases.dropAll()
        try? FileManager.default.removeItem(at: folder)
    }
}

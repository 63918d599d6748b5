import DepotMariaDB
import DepotMariaDBTesting
import DepotTesting
import Foundation
import Testing

/// `reminders-mariadb`, the reminders command with mariadb:// URLs, run as a user runs it.
@Suite(.enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"))
struct MariaDBRemindersCommandTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let folder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        let candidates = [folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("reminders-mariadb") }
        let binary = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                                  "reminders-mariadb is built beside the tests (swift build --build-tests)")
        return try await ChildProcess.run(binary.path, arguments)
    }

    /// The demo's home screen, without the closing line that names the database.
    func homeScreen(_ output: String) -> [Substring] {
        output.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("Demo data is in") }
    }

    /// The reminders model's tables on MariaDB are what it reads, and what the
    /// committed snapshot says (DEPOT_RECORD_SCHEMA=1 writes it).
    @Test func theModelsSchemaMatchesItsSnapshotOnMariaDB() async throws {
        let url = try #require(MariaDBTestServer.url, "no MariaDB server named")
        let scratch = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let database = try await scratch.makeDatabase()
        defer { Task { await scratch.dropAll() } }
        var parts = try #require(URLComponents(string: url))
        parts.path = "/" + database
        let snapshot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Schema/reminders-mariadb.schema").path
        let record = ProcessInfo.processInfo.environment["DEPOT_RECORD_SCHEMA"] == "1" ? ["--record"] : []
        let checked = try await run(["schema-check", "--database", try #require(parts.string), "--snapshot", snapshot] + record)
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.hasPrefix("schema check: "), "\(checked.output)")
    }

    @Test func theDemoPrintsTheSameHomeScreenOnMariaDBAsOnSQLite() async throws {
        let url = try #require(MariaDBTestServer.url, "no MariaDB server named")
        let scratch = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let database = try await scratch.makeDatabase()
        defer { Task { await scratch.dropAll() } }
        var parts = try #require(URLComponents(string: url))
        parts.path = "/" + database
        let mariadb = try #require(parts.string)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("reminders-mariadb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = folder.appendingPathComponent("demo.sqlite").path

        let onSQLite = try await run(["demo", "--database", sqlite, "--time-zone", "UTC"])
        let onMariaDB = try await run(["demo", "--database", mariadb, "--time-zone", "UTC"])
        #expect(onSQLite.status == 0, "\(onSQLite.output)")
        #expect(onMariaDB.status == 0, "\(onMariaDB.output)")
        #expect(onMariaDB.output.contains("Groceries"), "\(onMariaDB.output)")
        #expect(homeScreen(onMariaDB.output) == homeScreen(onSQLite.output))
        #expect(!onMariaDB.output.contains(try #require(parts.password)), "the password is never printed")

        // The database is a reminders one now: a view reads it.
        let today = try await run(["view", "today", "--database", mariadb, "--time-zone", "UTC"])
        #expect(today.status == 0, "\(today.output)")
        #expect(today == (try await run(["view", "today", "--database", sqlite, "--time-zone", "UTC"])))
    }
}

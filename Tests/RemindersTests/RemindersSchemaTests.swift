import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders
import Testing
import TestSupport

/// The reminders model cannot drift from its schema: after the migrations,
/// the tables are what its records and screens read, and what the committed
/// snapshot of each engine says (DEPOT_RECORD_SCHEMA=1 writes the snapshots).
@Suite struct RemindersSchemaTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Schema")

    func check(_ store: Store, snapshot file: String) async throws {
        let model = RemindersModel(store: store)
        try await model.migrate()
        let (differences, snapshot) = try await store.read { db in (try RemindersModel.schemaCheck.differences(db), try SchemaCheck.snapshot(db)) }
        #expect(differences == [], "\(file): the model and its tables")
        let url = Self.folder.appendingPathComponent(file)
        if ProcessInfo.processInfo.environment["DEPOT_RECORD_SCHEMA"] == "1" {
            try snapshot.write(to: url, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOf: url, encoding: .utf8)
        #expect(SchemaCheck.differences(snapshot: snapshot, expected: committed) == [], "\(file): the schema and its committed snapshot")
    }

    @Test func theModelsSchemaMatchesItsSnapshotOnSQLite() async throws {
        let store = Store.sqliteInMemory()
        try await check(store, snapshot: "reminders-sqlite.schema")
        await store.close()
    }

    /// `reminders schema-check` passes on the committed snapshot, and names a
    /// snapshot's drift (a column made nullable) with both sides, exiting 1.
    @Test func theCommandChecksASnapshotAndNamesItsDrift() async throws {
        let commands = RemindersCommandTests()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("scratch.sqlite").path
        let committed = Self.folder.appendingPathComponent("reminders-sqlite.schema").path
        let passed = try await commands.run(["schema-check", "--database", database, "--snapshot", committed])
        #expect(passed.status == 0 && passed.stdout.hasPrefix("schema check: "), "\(passed.stdout)\(passed.stderr)")
        let drifted = folder.appendingPathComponent("drifted.schema")
        try String(contentsOfFile: committed, encoding: .utf8).replacingOccurrences(of: "column notes TEXT NOT NULL", with: "column notes TEXT")
            .write(to: drifted, atomically: true, encoding: .utf8)
        let failed = try await commands.run(["schema-check", "--database", database, "--snapshot", drifted.path])
        #expect(failed.status == 1, "\(failed.stdout)\(failed.stderr)")
        #expect(failed.stdout.contains(#"table reminders, column notes: the snapshot has "column notes TEXT"; the database has "column notes TEXT NOT NULL""#), "\(failed.stdout)")
    }

    @Test func theModelsSchemaMatchesItsSnapshotOnPostgreSQL() async throws {
        let store = try await PostgresTestServer.freshStore()
        try await check(store, snapshot: "reminders-postgresql.schema")
        await store.close()
    }
}

import Depot
import DepotSQLite
import Foundation

/// Fresh stores for tests and previews, the app's migrations applied, in one line.
///
/// ```swift
/// @Test func addingAListShowsIt() async throws {
///     let store = try await TestStore.sqlite(migrator: AppSchema.migrator)
///     // ...
/// }
/// ```
///
/// On PostgreSQL, `TestStore.postgres(migrator:)` (DepotPostgresTesting) gives a
/// fresh schema of a named or throwaway server.
public enum TestStore {
    /// A new in-memory SQLite store, migrated, then given its `fixtures` in one
    /// write (`{ db in try db.insert(contentsOf: lists) }`): nothing outlives it.
    public static func sqlite(migrator: Migrator? = nil, configuration: SQLiteConfiguration = SQLiteConfiguration(),
                              fixtures: (@Sendable (Database) throws -> Void)? = nil) async throws -> Store {
        let store = Store.sqliteInMemory(configuration)
        try await prepare(store, migrator, fixtures)
        return store
    }

    /// Migrates a new store and writes its fixtures.
    public static func prepare(_ store: Store, _ migrator: Migrator?, _ fixtures: (@Sendable (Database) throws -> Void)?) async throws {
        try await migrator?.migrate(store)
        if let fixtures { try await store.write { db in try fixtures(db) } }
    }

    /// A new SQLite file in a folder of its own under the temporary directory,
    /// migrated: for what an in-memory store cannot show (reads during a
    /// write, other processes). Remove ``temporaryFolder(_:)`` when done.
    public static func sqliteFile(migrator: Migrator? = nil, configuration: SQLiteConfiguration = SQLiteConfiguration(),
                                  fixtures: (@Sendable (Database) throws -> Void)? = nil) async throws -> (store: Store, path: String) {
        let path = try temporaryPath("test.sqlite")
        let store = try Store.sqlite(at: path, configuration)
        try await prepare(store, migrator, fixtures)
        return (store, path)
    }

    /// A path named `name` in a new, empty folder under the temporary directory.
    public static func temporaryPath(_ name: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }

    /// The folder ``temporaryPath(_:)`` made for a path.
    public static func temporaryFolder(_ path: String) -> URL {
        URL(fileURLWithPath: path).deletingLastPathComponent()
    }
}

import Depot
import DepotConformance
import DepotSQLite
import Foundation
import Testing

/// A fresh file in a fresh temporary folder, for one store.
func temporaryDatabasePath(_ name: String = "test.sqlite") throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent(name).path
}

/// The whole conformance suite, one test per check, on both kinds of SQLite store.
/// Serialized: the streaming check measures the process's memory.
@Suite(.serialized)
struct SQLiteConformance {
    static let checks = ConformanceSuite.checks.map(\.name)

    @Test("file database", arguments: checks)
    func fileDatabase(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            var sqlite = SQLiteConfiguration()
            sqlite.store = configuration
            return try Store.sqlite(at: try temporaryDatabasePath(), sqlite)
        }
    }

    @Test("in-memory database", arguments: checks)
    func inMemoryDatabase(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            var sqlite = SQLiteConfiguration()
            sqlite.store = configuration
            return Store.sqliteInMemory(sqlite)
        }
    }

    /// The same checks with `@Columns` types read and written through Codable:
    /// the generated mapping must mean exactly what Codable means.
    @Test("file database through Codable", arguments: checks)
    func fileDatabaseThroughCodable(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            var sqlite = SQLiteConfiguration()
            sqlite.store = configuration
            sqlite.store.usesGeneratedMapping = false
            return try Store.sqlite(at: try temporaryDatabasePath(), sqlite)
        }
    }

    @Test("the suite has a check for every area the contract names")
    func suiteCoversTheContract() {
        let areas = Set(Self.checks.map { $0.split(separator: ":").first.map(String.init) ?? "" })
        #expect(areas == ["round trip", "decoding", "errors", "strategies", "sql", "constraints", "records",
                          "transactions", "migrations", "concurrency", "streaming", "values", "mapping", "query", "logging", "metrics", "tracing", "observation", "replicas", "statement paths"])
        #expect(Set(Self.checks).count == Self.checks.count, "check names are unique")
    }
}

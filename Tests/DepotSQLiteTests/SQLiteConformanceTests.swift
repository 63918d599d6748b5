@_spi(Driver) import Depot
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
/// The checks that measure the process's memory have functions of their own
/// (`…ProcessAlone`), which `scripts/test` runs after the rest, alone.
@Suite(.serialized)
struct SQLiteConformance {
    static let checks = ConformanceSuite.names(alone: false)
    static let aloneChecks = ConformanceSuite.names(alone: true)

    @Test("file database", arguments: checks)
    func fileDatabase(_ name: String) async throws {
        let check = try #require(ConformanceSuite.check(named: name))
        try await check.run { configuration in
            var sqlite = SQLiteConfiguration()
            sqlite.store = configuration
            return try Store.sqlite(at: try temporaryDatabasePath(), sqlite)
        }
    }

    /// The checks an in-memory store's capabilities allow: its one connection
    /// serves reads and writes in turn (no `concurrentReadsDuringWrite`).
    static let inMemoryChecks = ConformanceSuite.names(for: Store.sqliteInMemory().dialect.capabilities, alone: false)
    static let inMemoryAloneChecks = ConformanceSuite.names(for: Store.sqliteInMemory().dialect.capabilities, alone: true)

    @Test("in-memory database", arguments: inMemoryChecks)
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

    @Test("file database, with the process alone", arguments: aloneChecks)
    func fileDatabaseProcessAlone(_ name: String) async throws { try await fileDatabase(name) }

    @Test("in-memory database, with the process alone", arguments: inMemoryAloneChecks)
    func inMemoryDatabaseProcessAlone(_ name: String) async throws { try await inMemoryDatabase(name) }

    @Test("file database through Codable, with the process alone", arguments: aloneChecks)
    func fileDatabaseThroughCodableProcessAlone(_ name: String) async throws { try await fileDatabaseThroughCodable(name) }

    @Test("the suite has a check for every area the contract names")
    func suiteCoversTheContract() {
        #expect(Self.checks.count + Self.aloneChecks.count == ConformanceSuite.checks.count, "every check runs, beside the others or alone")
        #expect(Set(Self.aloneChecks) == ["streaming: a cursor over 100,000 rows keeps memory flat",
                                          "transactions: an access's timeout fires while every thread of Swift's task pool is busy"],
                "only the memory check and the one that fills the task pool need the process alone")
        #expect(Self.checks.count + Self.aloneChecks.count - Self.inMemoryChecks.count - Self.inMemoryAloneChecks.count == 1,
                "the in-memory store leaves out only the check it cannot meet")
        let areas = Set(ConformanceSuite.checks.map { $0.name.split(separator: ":").first.map(String.init) ?? "" })
        #expect(areas == ["round trip", "decoding", "errors", "strategies", "sql", "constraints", "records",
                          "transactions", "migrations", "concurrency", "streaming", "values", "mapping", "query", "logging", "metrics", "tracing", "observation", "live query", "replicas", "statement paths", "search", "write retry"])
        #expect(Set(Self.checks).count == Self.checks.count, "check names are unique")
    }
}

/// A check that needs a capability the store declares missing is skipped and
/// reported with the capability, never run and never counted as passed.
@Suite struct ConformanceSkipTests {
    /// SQLite's dialect, declaring that schema changes commit at once.
    struct NoTransactionalDDL: SQLDialect {
        let base: any SQLDialect
        var engineName: String { base.engineName }
        func placeholder(_ index: Int) -> String { base.placeholder(index) }
        func typeName(_ type: ColumnType) -> String { base.typeName(type) }
        var maxBoundValues: Int { base.maxBoundValues }
        var batchInsertRows: Int { base.batchInsertRows }
        var capabilities: Capabilities {
            var capabilities = base.capabilities
            capabilities.transactionalSchemaChanges = false
            return capabilities
        }
    }

    struct Driver: DatabaseDriver {
        let base: any DatabaseDriver
        var dialect: any SQLDialect { NoTransactionalDDL(base: base.dialect) }
        var poolLayout: PoolLayout { base.poolLayout }
        func openConnection(_ role: ConnectionRole) throws -> any DriverConnection { try base.openConnection(role) }
    }

    @Test func aCheckNeedingAMissingCapabilityIsReportedSkippedWithTheCapability() async throws {
        let name = "migrations: a failing migration rolls back whole and names itself"
        let check = try #require(ConformanceSuite.check(named: name))
        #expect(check.requirement?.name == "transactionalSchemaChanges")
        let factory: StoreFactory = { _ in Store(driver: Driver(base: Store.sqliteInMemory().driver)) }
        let skipped = await #expect(throws: ConformanceSkipped.self) { try await check.run(using: factory) }
        #expect(skipped?.capability == "transactionalSchemaChanges")
        #expect(ConformanceSuite.checks.filter { $0.requirement != nil }.map(\.name) == [
            name,
            "records: after explicit ids, a generated id follows the largest one",
            "records: a table recreated with generated ids is seen, whatever the connection learned before",
            "observation: a commit to a table it does not read, landing while it reads, costs it no read",
        ], "the checks that declare a capability")
        // A check without a requirement runs on that store.
        let plain = try #require(ConformanceSuite.check(named: "transactions: a write commits when its closure returns"))
        try await plain.run(using: factory)
    }
}

/// The suite's checks run on several stores at once (this file's suites, a
/// backend's, the guide's): a check that keeps Swift's task pool busy must
/// not hold it from another copy of itself. Two copies of the pool-busy
/// timeout check each held part of the pool and waited for the rest, for ten
/// minutes, with every other task of the process behind them.
@Suite struct ConformanceChecksSideBySide {
    /// With the process alone (scripts/test runs `…ProcessAlone` after the rest), as the check needs.
    @Test func thePoolBusyTimeoutCheckRunsBesideCopiesOfItselfProcessAlone() async throws {
        let name = "transactions: an access's timeout fires while every thread of Swift's task pool is busy"
        let check = try #require(ConformanceSuite.check(named: name))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await check.run { configuration in
                        var sqlite = SQLiteConfiguration()
                        sqlite.store = configuration
                        return Store.sqliteInMemory(sqlite)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

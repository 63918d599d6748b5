import DepotPostgres
import DepotSQLite
import Foundation
import TestSupport
// doc begin: WritingABackend#1
import Depot
import DepotConformance
import Testing
@Test(arguments: ConformanceSuite.names(for: MyEngine.capabilities, alone: false))
func conformance(_ name: String) async throws {
    try await ConformanceSuite.check(named: name)?.run { configuration in
        try await MyEngine.freshStore(configuration)
    }
}

// Checks that measure the process's memory: `swift test --skip ProcessAlone`,
// then `swift test --filter ProcessAlone`.
@Test(arguments: ConformanceSuite.names(for: MyEngine.capabilities, alone: true))
func conformanceProcessAlone(_ name: String) async throws {
    try await conformance(name)
}
// doc end

/// The backend of the guide's example: here SQLite in memory, so the guide's
/// test runs the whole suite as written.
enum MyEngine {
    static var capabilities: Capabilities { Store.sqliteInMemory().dialect.capabilities }

    static func freshStore(_ configuration: Store.Configuration) async throws -> Store {
        var sqlite = SQLiteConfiguration()
        sqlite.store = configuration
        return Store.sqliteInMemory(sqlite)
    }
}

// The code of the DocC articles (Sources/Depot/Depot.docc), compiled and run.
// Each region between "doc begin: ARTICLE#N" and "doc end" is the article's
// Nth Swift block, line for line; a test checks the two never drift apart.

// doc begin: GettingStarted#1
@Columns
struct Chore: Record, Equatable {
    static let tableName = "chores"
    var id: Int64?
    var title: String
    var isDone: Bool
    var dueDate: Date?
}
// doc end

/// GettingStarted: a store on `path`, migrated, written, read, closed.
func gettingStarted(path: String) async throws -> (saved: Chore, open: [Chore], count: Int?, migrator: Migrator) {
    // doc begin: GettingStarted#2
    let store = try Store.sqlite(at: path)
    var migrator = Migrator()
    migrator.register("create chores", script: """
        CREATE TABLE "chores" (
            "id" \(type: .autoIncrementingPrimaryKey),
            "title" \(type: .text) NOT NULL,
            "isDone" \(type: .bool) NOT NULL,
            "dueDate" \(type: .date))
        """)
    try await migrator.migrate(store)
    // doc end
    // doc begin: GettingStarted#3
    let saved = try await store.write { db in
        try db.insert(Chore(title: "Water the plants", isDone: false, dueDate: nil))
    }
    let open = try await store.read { db in
        try db.fetchAll(Chore.where { !$0.isDone }.order { $0.title })
    }
    // doc end
    // doc begin: GettingStarted#4
    let title = "Water the plants"
    let count = try await store.read { db in
        try db.fetchOne(Int.self, "SELECT count(*) FROM chores WHERE title = \(title)")
    }
    await store.close()   // before the process ends: SQLite folds its -wal file back
    // doc end
    return (saved, open, count, migrator)
}

// doc begin: RecordsAndMapping#1
enum Light: String, Codable, Sendable, QueryComparable { case shade, sun }

struct Care: Codable, Equatable, Sendable {
    var waterEveryDays: Int
    var notes: String
}

@Columns
struct Plant: Record, Equatable {
    static let tableName = "plants"
    var id: Int64?
    var name: String
    var light: Light        // its raw value: TEXT / text
    var care: Care          // JSON: TEXT / jsonb
    var boughtAt: Date?     // TEXT in UTC to the microsecond / timestamptz
}
// doc end

/// RecordsAndMapping: a Codable record with an enum, a nested struct and a date.
func recordsAndMapping(store: Store) async throws -> [Plant] {
    // doc begin: RecordsAndMapping#2
    try await store.write { db in
        try db.execute("""
            CREATE TABLE "plants" ("id" \(type: .autoIncrementingPrimaryKey), "name" \(type: .text) NOT NULL,
              "light" \(type: .text) NOT NULL, "care" \(type: .json) NOT NULL, "boughtAt" \(type: .date))
            """)
        try db.insert(Plant(name: "Fern", light: .shade, care: Care(waterEveryDays: 3, notes: "mist"), boughtAt: nil))
    }
    let shady = try await store.read { db in
        try db.fetchAll(Plant.where { $0.light.eq(.shade) })
    }
    // doc end
    return shady
}

/// QueryBuilder: a query and the SQL it renders.
func queryBuilder(store: Store) async throws -> ([Chore], String) {
    // doc begin: QueryBuilder#1
    let query = Chore.where { !$0.isDone && $0.title.contains("plant") }
        .order { [$0.dueDate, $0.title.descending()] }
        .limit(10)
    let chores = try await store.read { db in try db.fetchAll(query) }
    let sql = try await store.read { db in try db.sqlText(of: query) }
    // doc end
    return (chores, sql)
}

/// QueryBuilder: computed values.
func computedValues(store: Store) async throws -> [(String, String, Date)] {
    // doc begin: QueryBuilder#2
    let rows = try await store.read { db in
        try db.fetchAll(Chore.all.select {
            ($0.title.substring(from: 0, count: 12) + "…",
             Case.when($0.isDone, then: "done").else("open"),
             $0.dueDate ?? Date.distantFuture)
        })
    }
    // doc end
    return rows
}

/// QueryBuilder: full-text search.
func fullTextSearch(store: Store) async throws -> [String] {
    // doc begin: QueryBuilder#3
    let index = SearchIndex<Chore>(tableName: "choreSearch", fields: ["title"])
    try await store.write { db in
        try db.createSearchIndex(index, keyType: .integer)   // in a migration
        for title in ["Water the plants", "Repot the PLANT", "Sweep"] {
            let chore = try db.insert(Chore(title: title, isDone: false, dueDate: nil))
            try db.updateSearchIndex(index, key: chore.id, texts: [chore.title])
        }
    }
    let query = SearchQuery("plant", prefixes: .lastTerm)
    let found = try await store.read { db in
        try db.fetchAll(Chore.all.matching(query, in: index).orderedBySearchRank(query, in: index))
    }
    let shown = found.map { query.highlight($0.title, open: "**", close: "**") }
    // ["Water the **plants**", "Repot the **PLANT**"]
    // doc end
    return shown
}

/// MovingToPostgreSQL: the same migrator and query on a server.
func movingToPostgreSQL(url: String, migrator: Migrator) async throws -> [Chore] {
    // doc begin: MovingToPostgreSQL#1
    let server = try await Store.postgres(url: url)
    try await migrator.migrate(server)
    let chores = try await server.read { db in
        try db.fetchAll(Chore.where { !$0.isDone }.order { $0.title })
    }
    await server.close()
    // doc end
    return chores
}

/// ObservingChanges: an observation until nothing is open, and a live query.
func observingChanges(store: Store, migrator: Migrator) async throws -> LiveQuery<[Chore]> {
    var migrator = migrator
    // doc begin: ObservingChanges#1
    migrator.register("observe chores") { db in
        try db.enableObservation(of: ["chores"])
    }
    try await migrator.migrate(store)
    // doc end
    Task {
        try await Task.sleep(for: .milliseconds(50))
        try await store.write { db in try db.execute("UPDATE chores SET \(ident: "isDone") = \(true)") }
    }
    // doc begin: ObservingChanges#2
    let openCount = store.observe { db in
        try db.fetchCount(Chore.where { !$0.isDone })
    }
    for try await count in openCount.removeDuplicates() {
        print("\(count) open")
        if count == 0 { break }
    }
    // doc end
    // doc begin: ObservingChanges#3
    let chores = await MainActor.run { store.liveQuery(Chore.order { $0.title }) }
    await MainActor.run {
        chores.load { db in try db.fetchAll(Chore.where { !$0.isDone }) }
    }
    // doc end
    return chores
}

/// Migrations: scripts, revisions, upTo, status and revert.
func migrations(store: Store) async throws -> [Migrator.Status] {
    // doc begin: Migrations#1
    var history = Migrator()
    history.register("create tags", script: """
        CREATE TABLE "tags" ("id" \(type: .autoIncrementingPrimaryKey), "title" \(type: .text) NOT NULL)
        """, revert: "DROP TABLE \"tags\"")
    history.register("seed tags", revision: "1", { db in
        try db.execute("INSERT INTO \(ident: "tags") (\(ident: "title")) VALUES (\("home"))")
    }, revert: { db in try db.execute("DELETE FROM \(ident: "tags")") })
    try await history.migrate(store, upTo: "create tags")
    try await history.migrate(store)
    for migration in try await history.status(store) {
        print(migration.name, migration.isApplied, migration.isEdited)
    }
    try await history.revert(store, to: "create tags")
    // doc end
    return try await history.status(store)
}

/// Testing: a fresh store and a snapshot.
func testing(migrator: Migrator) async throws -> String {
    // doc begin: Testing#1
    let store = try await TestStore.sqlite(migrator: migrator)
    try await store.write { db in try db.insert(Chore(title: "Sweep", isDone: false, dueDate: nil)) }
    let table = try await store.read { db in try db.snapshot("SELECT title, isDone FROM chores") }
    // title | isDone
    // ------+-------
    // Sweep | 0
    // doc end
    await store.close()
    return table
}

/// HandlingErrors: a unique violation caught by kind (any other error would be thrown).
func handlingErrors(store: Store) async throws {
    // doc begin: HandlingErrors#1
    do {
        try await store.write { db in
            try db.execute("INSERT INTO chores (id, title, isDone) VALUES (1, 'Again', 0)")
        }
    } catch let error as DatabaseError where error.kind == .unique {
        print("taken:", error.constraint ?? "a unique constraint")
    }
    // doc end
}

@Suite struct DocumentationExamplesTests {
    @Test func everyArticleRunsAsWritten() async throws {
        let path = try TestStore.temporaryPath("chores.sqlite")
        defer { try? FileManager.default.removeItem(at: TestStore.temporaryFolder(path)) }
        let started = try await gettingStarted(path: path)
        #expect(started.saved.id == 1)
        #expect(started.open.map(\.title) == ["Water the plants"])
        #expect(started.count == 1)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        let store = try Store.sqlite(at: path)
        let live = try await observingChanges(store: store, migrator: started.migrator)
        try await LiveQueryWait.until { live.value.isEmpty && !live.isLoading }
        try await handlingErrors(store: store)
        let statuses = try await migrations(store: try await TestStore.sqlite())
        #expect(statuses.map(\.isApplied) == [true, false])
        await MainActor.run { live.stop() }
        await store.close()

        #expect(try await testing(migrator: started.migrator) == "title | isDone\n------+-------\nSweep | 0")

        let plants = try await TestStore.sqlite()
        #expect(try await recordsAndMapping(store: plants).map(\.name) == ["Fern"])
        await plants.close()

        let chores = try await TestStore.sqlite(migrator: started.migrator)
        let (found, sqliteSQL) = try await queryBuilder(store: chores)
        #expect(found.isEmpty)
        try await Self.expectComputedValues(chores)
        #expect(try await fullTextSearch(store: chores) == ["Water the **plants**", "Repot the **PLANT**"])
        await chores.close()
        var renderedSQL = [sqliteSQL]
        if PostgresTestServer.shouldRun {
            let server = try await TestStore.postgres(migrator: started.migrator)
            try await Self.expectComputedValues(server)
            #expect(try await fullTextSearch(store: server) == ["Water the **plants**", "Repot the **PLANT**"])
            renderedSQL.append(try await queryBuilder(store: server).1)
            let plantsOnServer = try await TestStore.postgres()
            #expect(try await recordsAndMapping(store: plantsOnServer).map(\.name) == ["Fern"])
            await plantsOnServer.close()
            await server.close()
        }
        print("rendered:", renderedSQL)
        let article = try String(contentsOf: Self.catalog.appendingPathComponent("QueryBuilder.md"), encoding: .utf8)
        let sqlBlocks = article.components(separatedBy: "```sql\n").dropFirst().map { $0.components(separatedBy: "\n```").first ?? "" }
        #expect(Array(sqlBlocks.prefix(renderedSQL.count)) == renderedSQL, "the SQL the article shows is what each engine runs")

        if PostgresTestServer.shouldRun {
            var configuration = try PostgresTestServer.requireConfiguration()
            let schema = "depot_docs_" + UUID().uuidString.prefix(8).lowercased()
            let admin = try await Store.postgres(configuration)
            try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
            await admin.close()
            configuration.searchPath = schema
            let url = try #require(PostgresTestServer.url)
            let scoped = url + (url.contains("?") ? "&" : "?") + "search_path=\(schema)"
            #expect(try await movingToPostgreSQL(url: scoped, migrator: started.migrator) == [])
        }
    }

    /// The computed values of the article's example, over two chores.
    static func expectComputedValues(_ store: Store) async throws {
        let due = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.write { db in
            try db.insert(Chore(title: "Water the plants every morning", isDone: false, dueDate: nil))
            try db.insert(Chore(title: "Sweep", isDone: true, dueDate: due))
        }
        let rows = try await computedValues(store: store)
        #expect(rows.map(\.0) == ["Water the pl…", "Sweep…"])
        #expect(rows.map(\.1) == ["open", "done"])
        #expect(rows.map(\.2) == [Date.distantFuture, due])
        try await store.write { db in try db.delete(Chore.all) }
    }

    static let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Depot/Depot.docc")

    @Test func theArticlesShowExactlyTheCompiledCode() throws {
        let catalog = Self.catalog
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        var regions: [String: [String]] = [:]
        var current: String?
        for line in source.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// doc begin: ") { current = String(trimmed.dropFirst("// doc begin: ".count)); regions[current!] = []; continue }
            if trimmed == "// doc end" { current = nil; continue }
            if let current, !trimmed.isEmpty { regions[current, default: []].append(trimmed) }
        }
        var seen: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter({ $0.hasSuffix(".md") }).sorted() {
            let text = try String(contentsOf: catalog.appendingPathComponent(file), encoding: .utf8)
            let blocks = text.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
            let article = String(file.dropLast(3))
            for (index, block) in blocks.enumerated() {
                let name = "\(article)#\(index + 1)"
                let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                #expect(regions[name] == lines, "\(name) differs from the compiled code")
                seen.insert(name)
            }
        }
        #expect(Set(regions.keys).subtracting(seen).isEmpty, "regions without an article block: \(Set(regions.keys).subtracting(seen))")
    }
}

/// Waits on the main actor until a condition holds (a bound on liveness).
enum LiveQueryWait {
    @MainActor
    static func until(_ condition: @MainActor () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw ObservationWait.TimedOut(description: "the live query did not settle") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

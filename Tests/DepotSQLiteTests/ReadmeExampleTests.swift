import Depot
import DepotSQLite
import Foundation
import Testing

// The README's example, compiled and run. The lines between the markers must
// match the README's first Swift block, which the second test checks.

// README example begin
struct Reminder: Record {
    static let tableName = "reminders"
    var id: Int64?
    var title: String
    var dueDate: Date?
}
// README example end

func readmeExample(databasePath: String) async throws -> [Reminder] {
    // README example begin
    let store = try Store.sqlite(at: databasePath)
    var migrator = Migrator()
    migrator.register("create reminders") { db in
        try db.execute("""
            CREATE TABLE "reminders" ("id" \(type: .autoIncrementingPrimaryKey),
              "title" \(type: .text) NOT NULL, "dueDate" \(type: .date))
            """)
    }
    try await migrator.migrate(store)
    let milk = try await store.write { db in
        try db.insert(Reminder(id: nil, title: "Buy milk", dueDate: .now))
    }
    let soon = try await store.read { db in
        try db.fetchAll(Reminder.self, """
            SELECT * FROM "reminders" WHERE "dueDate" <= \(Date.now.addingTimeInterval(3600))
            ORDER BY "dueDate" NULLS LAST, "id"
            """)
    }
    // README example end
    #expect(milk.id != nil)
    return soon
}

@Suite struct ReadmeExampleTests {
    @Test func theExampleRuns() async throws {
        let reminders = try await readmeExample(databasePath: try temporaryDatabasePath())
        #expect(reminders.map(\.title) == ["Buy milk"])
    }

    @Test func theREADMEShowsExactlyTheCompiledExample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)

        let block = try #require(readme.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        let readmeLines = block.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }

        var exampleLines: [String] = []
        var inside = false
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// README example begin" { inside = true; continue }
            if trimmed == "// README example end" { inside = false; continue }
            if inside, !trimmed.isEmpty { exampleLines.append(trimmed) }
        }
        let imports = ["import Depot", "import DepotSQLite"]
        #expect(readmeLines == imports + exampleLines)
    }
}

// The README's second block, compiled and run: settings, an enum in a query, a join, close().

// README settings begin
enum Effort: Int, Codable, Sendable, QueryComparable { case none, low, high }

@Columns
struct Chore: Record {
    static let tableName = "chores"
    var id: Int64?
    var title: String
    var effort: Effort
    var listID: Int64
}

@Columns
struct ChoreList: Record {
    static let tableName = "choreLists"
    var id: Int64?
    var name: String
}
// README settings end

func readmeSettingsExample(choresPath: String) async throws -> (urgent: [Chore], withLists: [(Chore, ChoreList)]) {
    let setUp = try Store.sqlite(at: choresPath)
    try await setUp.write { db in
        try db.execute("""
            CREATE TABLE "choreLists" ("id" \(type: .autoIncrementingPrimaryKey), "name" \(type: .text) NOT NULL)
            """)
        try db.execute("""
            CREATE TABLE "chores" ("id" \(type: .autoIncrementingPrimaryKey), "title" \(type: .text) NOT NULL,
              "effort" \(type: .integer) NOT NULL, "listID" \(type: .integer) NOT NULL REFERENCES "choreLists" ("id"))
            """)
        let list = try db.insert(ChoreList(id: nil, name: "Home"))
        try db.insert(contentsOf: [Chore(id: nil, title: "b: fix the door", effort: .high, listID: list.id ?? 0),
                                   Chore(id: nil, title: "a: call the plumber", effort: .high, listID: list.id ?? 0),
                                   Chore(id: nil, title: "water the plants", effort: .low, listID: list.id ?? 0)])
    }
    await setUp.close()
    // README settings begin
    var settings = SQLiteConfiguration()
    settings.busyTimeout = .seconds(2)        // SQLite's own settings
    settings.store.accessTimeout = .seconds(5) // every store's: Store.Configuration
    let chores = try Store.sqlite(at: choresPath, settings)
    // (migrations create "choreLists" and "chores", as above)
    let urgent = try await chores.read { db in
        try db.fetchAll(Chore.where { $0.effort.eq(.high) }.order { $0.title.ascending() })
    }
    let withLists = try await chores.read { db in
        try db.fetchAll(Chore.all.join(ChoreList.self) { chore, list in chore.listID.eq(list.id) })
    }
    await chores.close()  // before the process ends: SQLite folds its -wal file back into the database
    // README settings end
    return (urgent, withLists)
}

@Suite struct ReadmeSettingsExampleTests {
    @Test func theSettingsExampleRunsAndCloseLeavesNoWriteAheadLog() async throws {
        let path = try temporaryDatabasePath()
        let (urgent, withLists) = try await readmeSettingsExample(choresPath: path)
        #expect(urgent.map(\.title) == ["a: call the plumber", "b: fix the door"])
        #expect(withLists.count == 3 && withLists.allSatisfy { $0.1.name == "Home" })
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "close() folds the -wal file back")
    }

    @Test func theREADMEShowsExactlyTheCompiledSettingsExample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
        let block = try #require(blocks.dropFirst().first, "the README's second Swift block")
        let readmeLines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var exampleLines: [String] = []
        var inside = false
        for line in source.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "// README settings begin" { inside = true; continue }
            if trimmed == "// README settings end" { inside = false; continue }
            if inside, !trimmed.isEmpty { exampleLines.append(trimmed) }
        }
        #expect(readmeLines == exampleLines)
    }
}

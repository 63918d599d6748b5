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

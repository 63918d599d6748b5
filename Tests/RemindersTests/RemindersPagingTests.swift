import Depot
import DepotSQLite
import Foundation
import Reminders
import Testing

/// A long listing shows a page and says how many it left out; scripts get every row.
@Suite struct RemindersPagingTests {
    let commands = RemindersCommandTests()

    /// A database of `count` open reminders in one list, and three completed ones.
    func database(_ count: Int) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-paging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("many.sqlite").path
        let store = try Store.sqlite(at: path)
        let model = RemindersModel(store: store)
        try await model.migrate()
        _ = try await model.createList(title: "Inbox")
        for index in 1...count + 3 { _ = try await model.addReminder(ReminderDraft(title: "Task \(index)", tags: ["chore"]), to: "Inbox") }
        for number in count + 1...count + 3 { _ = try await model.complete(Int64(number)) }
        await store.close()
        return path
    }

    @Test func aLimitShowsThatManyAndSaysHowManyMoreTheListHolds() async throws {
        let path = try await database(12)
        let page = try commands.run(["view", "all", "--limit", "5", "--database", path])
        #expect(page.status == 0, "\(page.stderr)")
        let lines = page.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "a heading, five rows, the line under them: \(page.stdout)")
        #expect(lines[1].contains("Task 1") && lines[5].contains("Task 5"), "the first five, in the list's order: \(page.stdout)")
        #expect(lines.last == "  … and 7 more (--limit N shows N, --all every one)")

        // Not a terminal, no option: every row, nothing left out. --all says the same.
        for arguments in [[], ["--all"], ["--limit", "12"]] {
            let every = try commands.run(["view", "all"] + arguments + ["--database", path])
            #expect(every.stdout.split(separator: "\n").count == 13, "\(arguments): \(every.stdout)")
            #expect(!every.stdout.contains("more ("), "\(arguments)")
        }
        let completed = try commands.run(["view", "completed", "--limit", "2", "--database", path])
        #expect(completed.stdout.hasSuffix("  … and 1 more (--limit N shows N, --all every one)\n"), "\(completed.stdout)")

        // --json takes the limit, and prints only rows.
        let json = try commands.run(["view", "all", "--limit", "3", "--json", "--database", path])
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 3)
    }

    @Test(arguments: [["show", "Inbox"], ["tagged", "chore"], ["search", "task"]])
    func everyListingOfRemindersTakesALimit(arguments: [String]) async throws {
        let path = try await database(12)
        let page = try commands.run(arguments + ["--limit", "4", "--database", path])
        #expect(page.status == 0, "\(page.stderr)")
        let lines = page.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "a heading, four rows, the line under them: \(page.stdout)")
        #expect(lines.last?.hasPrefix("  … and ") == true && lines.last?.hasSuffix(" more (--limit N shows N, --all every one)") == true, "\(page.stdout)")
        let every = try commands.run(arguments + ["--database", path])
        #expect(!every.stdout.contains("more ("), "\(every.stdout)")
        let json = try commands.run(arguments + ["--limit", "4", "--json", "--database", path])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let rows = (object as? [[String: Any]]) ?? ((object as? [String: Any])?["reminders"] as? [[String: Any]])
        #expect(rows?.count == 4, "\(json.stdout.prefix(300))")
    }

    @Test func aLimitBelowOneOrBesideAllIsAUsageError() async throws {
        let path = try await database(2)
        let zero = try commands.run(["view", "all", "--limit", "0", "--database", path])
        #expect(zero.status == 64 && zero.stderr.hasPrefix("Error: --limit takes a count of 1 or more, not 0\n"), "\(zero.stderr)")
        let both = try commands.run(["view", "all", "--limit", "3", "--all", "--database", path])
        #expect(both.status == 64 && both.stderr.hasPrefix("Error: --limit and --all contradict each other: give one\n"), "\(both.stderr)")
    }

    @Test func theModelReadsOnlyThePageAndCountsTheWhole() async throws {
        let store = Store.sqliteInMemory()
        let model = RemindersModel(store: store)
        try await model.migrate()
        _ = try await model.createList(title: "Inbox")
        for index in 1...6 { _ = try await model.addReminder(ReminderDraft(title: "Task \(index)"), to: "Inbox") }
        let (first, total) = try await model.reminders(in: .all, limit: 4)
        #expect(first.map(\.reminder.title) == ["Task 1", "Task 2", "Task 3", "Task 4"])
        #expect(total == 6)
        let (every, sameTotal) = try await model.reminders(in: .all, limit: 10)
        #expect(every.count == 6 && sameTotal == 6)
        await #expect(throws: RemindersError.self) { try await model.reminders(in: .all, limit: -1) }
        await store.close()
    }
}

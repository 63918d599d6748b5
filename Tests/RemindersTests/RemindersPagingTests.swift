import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders
import Testing
import TestSupport

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
        let page = try await commands.run(["view", "all", "--limit", "5", "--database", path])
        #expect(page.status == 0, "\(page.stderr)")
        let lines = page.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "a heading, five rows, the line under them: \(page.stdout)")
        #expect(lines[1].contains("Task 1") && lines[5].contains("Task 5"), "the first five, in the list's order: \(page.stdout)")
        #expect(lines.last == "  … and 7 more (--limit N shows N, --all every one)")

        // Not a terminal, no option: every row, nothing left out. --all says the same.
        for arguments in [[], ["--all"], ["--limit", "12"]] {
            let every = try await commands.run(["view", "all"] + arguments + ["--database", path])
            #expect(every.stdout.split(separator: "\n").count == 13, "\(arguments): \(every.stdout)")
            #expect(!every.stdout.contains("more ("), "\(arguments)")
        }
        let completed = try await commands.run(["view", "completed", "--limit", "2", "--database", path])
        #expect(completed.stdout.hasSuffix("  … and 1 more (--limit N shows N, --all every one)\n"), "\(completed.stdout)")

        // --json takes the limit, and prints only rows.
        let json = try await commands.run(["view", "all", "--limit", "3", "--json", "--database", path])
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 3)
    }

    @Test(arguments: [["show", "Inbox"], ["tagged", "chore"], ["search", "task"]])
    func everyListingOfRemindersTakesALimit(arguments: [String]) async throws {
        let path = try await database(12)
        let page = try await commands.run(arguments + ["--limit", "4", "--database", path])
        #expect(page.status == 0, "\(page.stderr)")
        let lines = page.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "a heading, four rows, the line under them: \(page.stdout)")
        #expect(lines.last?.hasPrefix("  … and ") == true && lines.last?.hasSuffix("--limit N shows N, --all every one)") == true, "\(page.stdout)")
        let every = try await commands.run(arguments + ["--database", path])
        #expect(!every.stdout.contains("more ("), "\(every.stdout)")
        let json = try await commands.run(arguments + ["--limit", "4", "--json", "--database", path])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let rows = (object as? [[String: Any]]) ?? ((object as? [String: Any])?["reminders"] as? [[String: Any]])
        #expect(rows?.count == 4, "\(json.stdout.prefix(300))")
    }

    @Test func aLimitBelowOneOrBesideAllIsAUsageError() async throws {
        let path = try await database(2)
        let zero = try await commands.run(["view", "all", "--limit", "0", "--database", path])
        #expect(zero.status == 64 && zero.stderr.hasPrefix("Error: --limit takes a count of 1 or more, not 0\n"), "\(zero.stderr)")
        let both = try await commands.run(["view", "all", "--limit", "3", "--all", "--database", path])
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

    /// Every listing the model reads a page of, on both engines: the page is
    /// the start of the whole listing, in the same order, and the total is the
    /// whole listing's count, for a limit of 0, 1, 3, exactly the count and past it.
    @Test func everyPageIsTheStartOfItsWholeListingAndCountsIt() async throws {
        let now = Date(timeIntervalSince1970: 1_773_568_800)   // 2026-03-15 10:00 UTC
        for (engine, store) in [("SQLite", Store.sqliteInMemory()), ("PostgreSQL", try await PostgresTestServer.freshStore())] {
            let model = RemindersModel(store: store, now: { now })
            try await model.migrate()
            for list in ["Home", "Work"] { _ = try await model.createList(title: list) }
            for index in 0..<14 {
                let due: Date? = index % 3 == 0 ? nil : now.addingTimeInterval(Double(index % 5 - 2) * 86_400)
                let added = try await model.addReminder(ReminderDraft(title: "Task \(index % 4) item \(index)", dueDate: due, priority: Priority(rawValue: index % 4),
                                                                      isFlagged: index % 2 == 0, tags: index % 3 == 1 ? ["chore"] : []),
                                                        to: index % 2 == 0 ? "Home" : "Work")
                if index % 4 == 3 { try await model.complete(added.reminder.number ?? 0) }
            }

            func check(_ name: String, _ whole: [ReminderDetail], _ read: (Int) async throws -> (reminders: [ReminderDetail], total: Int)) async throws {
                #expect(!whole.isEmpty, "\(engine) \(name): the listing holds something to page")
                for limit in [0, 1, 3, whole.count, whole.count + 1] {
                    let page = try await read(limit)
                    #expect(page.reminders == Array(whole.prefix(limit)), "\(engine) \(name), limit \(limit)")
                    #expect(page.total == whole.count, "\(engine) \(name), limit \(limit)")
                }
            }
            for view in SmartList.allCases {
                try await check("\(view)", try await model.reminders(in: view)) { try await model.reminders(in: view, limit: $0) }
            }
            try await check("a list", try await model.reminders(in: "Work").reminders) { limit in
                let screen = try await model.reminders(in: "Work", limit: limit)
                return (screen.reminders, screen.total)
            }
            let order = ReminderOrder(sort: .title, ascending: false, showCompleted: true)
            try await check("a list by title", try await model.reminders(on: .list("Home"), order: order)) {
                try await model.reminders(on: .list("Home"), order: order, limit: $0)
            }
            for sort in [ReminderSort.title, .dueDate, .priority, .manual] {
                // Keyset pages of every size walk the whole listing, in order.
                let order = ReminderOrder(sort: sort, ascending: sort != .dueDate, showCompleted: true)
                let whole = try await model.reminders(on: .list("Home"), order: order)
                for size in [1, 2, 5] {
                    var page = try await model.reminderPage(on: .list("Home"), order: order, after: nil, limit: size)
                    #expect(page.total == whole.count, "\(engine) \(sort) pages of \(size): the first page counts the whole")
                    var walked = page.reminders
                    while let next = page.next, walked.count <= whole.count {
                        page = try await model.reminderPage(on: .list("Home"), order: order, after: next, limit: size)
                        #expect(page.total == nil, "\(engine): a later page costs no count")
                        walked += page.reminders
                    }
                    #expect(walked == whole, "\(engine) \(sort) pages of \(size)")
                }
            }
            for completed in [false, true] {
                try await check("tagged, completed \(completed)", try await model.reminders(taggedWith: "chore", includeCompleted: completed)) {
                    try await model.reminders(taggedWith: "chore", includeCompleted: completed, limit: $0)
                }
                let whole = try await model.search("task", includeCompleted: completed)
                try await check("search, completed \(completed)", whole.details) { limit in
                    let found = try await model.search("task", includeCompleted: completed, limit: limit)
                    #expect(found.completedCount == whole.result.completedCount, "\(engine): completed matches count shown or not")
                    return (found.details, found.total)
                }
            }

            // A watched screen reads a page too, and carries the total.
            let all = try await model.reminders(in: .all)
            var smart = model.watch(.smartList(.all), limit: 2).makeAsyncIterator()
            #expect(try await smart.next() == .smartList(.all, Array(all.prefix(2)), total: all.count), "\(engine)")
            let home = try await model.reminders(in: "Home")
            var list = model.watch(.list("Home"), limit: 1).makeAsyncIterator()
            #expect(try await list.next() == .list(ListScreen(list: home.list, reminders: Array(home.reminders.prefix(1)), total: home.reminders.count)), "\(engine)")
            var refused = model.watch(.list("Home"), limit: -1).makeAsyncIterator()
            await #expect(throws: RemindersError.self, "\(engine)") { _ = try await refused.next() }
            await store.close()
        }
    }

    /// `show` pages by keyset: the line under a page gives the next page's
    /// cursor, and following the cursors meets every reminder once, in order,
    /// though reminders are added and completed between pages.
    @Test func showPrintsTheNextPagesCursorAndFollowingItMeetsEveryReminderOnce() async throws {
        let path = try await database(12)
        func titles(_ output: String) -> [String] {
            output.split(separator: "\n").compactMap { line in line.range(of: #"Task \d+"#, options: .regularExpression).map { String(line[$0]) } }
        }
        let whole = titles(try await commands.run(["show", "Inbox", "--all", "--database", path]).stdout)
        #expect(whole.count == 12, "\(whole)")
        var seen: [String] = []
        var arguments = ["show", "Inbox", "--limit", "5", "--database", path]
        for round in 0..<10 {
            let page = try await commands.run(arguments)
            #expect(page.status == 0, "\(page.stderr)")
            let lines = page.stdout.split(separator: "\n").map(String.init)
            seen += titles(page.stdout)
            guard let last = lines.last, let range = last.range(of: #"--after \S+"#, options: .regularExpression) else { break }
            if round == 0 {
                #expect(last.hasPrefix("  … and 7 more (--after ") && last.hasSuffix(" for the next page, --limit N shows N, --all every one)"), "\(last)")
            } else {
                #expect(last.hasPrefix("  … more (--after "), "\(last)")
            }
            let cursor = String(last[range].dropFirst("--after ".count))
            arguments = ["show", "Inbox", "--limit", "5", "--after", cursor, "--database", path]
            // Between pages: a new reminder (it sorts last) and one of the first page completed (hidden).
            #expect(try await commands.run(["add", "Later \(round)", "--list", "Inbox", "--database", path]).status == 0)
        }
        #expect(Array(seen.prefix(12)) == whole, "every reminder once, in order: \(seen)")
        let bad = try await commands.run(["show", "Inbox", "--after", "not-a-cursor", "--database", path])
        #expect(bad.status != 0 && bad.stderr.contains("--after takes the cursor a listing printed"), "\(bad.stderr)")
        let both = try await commands.run(["show", "Inbox", "--after", "x", "--all", "--database", path])
        #expect(both.status == 64, "\(both.stderr)")
    }

    @Test func watchDrawsAPageAndSaysHowManyMore() async throws {
        let path = try await database(12)
        let page = try await commands.run(["watch", "Inbox", "--count", "1", "--limit", "4", "--database", path])
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout.split(separator: "\n").map(String.init).suffix(2) == ["  … and 8 more (--limit N shows N, --all every one)", "---"], "\(page.stdout)")
        #expect(page.stdout.split(separator: "\n").count == 7, "a heading, four rows, the line under them, the dashes: \(page.stdout)")
        let every = try await commands.run(["watch", "all", "--count", "1", "--all", "--database", path])
        #expect(every.stdout.split(separator: "\n").count == 14 && !every.stdout.contains("more ("), "\(every.stdout)")
    }
}

import Depot
import Foundation
import Reminders

/// One seeded data set and every query the reminders model offers, run against
/// a store: every screen, view, search and edit, at two time zones.
///
/// The answers are plain values, so two engines' answers compare with `==`; the
/// differential check "the reminders scenario gives the same answers on both
/// engines" compares them part by part, so a difference names its part.
public struct RemindersScenario {
    /// Sunday 2026-03-15 10:00 UTC. In Los Angeles (PDT, UTC-7) it is 03:00 the same day.
    public static let now = Date(timeIntervalSince1970: 1_773_568_800)

    static func at(_ iso: String) -> Date {
        guard let date = try? Date(iso, strategy: Date.ISO8601FormatStyle()) else { return .distantPast }
        return date
    }

    /// What every query of the scenario answered.
    public struct Answers: Equatable, Sendable {
        public var home: HomeScreen
        public var homeInLosAngeles: HomeScreen
        public var listOrders: [String: [String]]
        public var storedChoice: RemindersList
        public var views: [String: [String]]
        public var viewsInLosAngeles: [String: [String]]
        public var tagged: [String: [String]]
        public var searches: [String: [String]]
        public var searchCompletedCounts: [String: Int]
        public var tagTitles: [String]
        public var afterDeletingCompletedMilk: (deleted: Int, completedCount: Int)
        public var listsAfterReordering: [String]
        public var afterDeletingWork: [String]
        public var movedReminder: String
        /// Rows, tags and the last list, as text.
        public var more: [String: String]
        /// Every screen in every order, shown or hiding completed reminders.
        public var screens: [String: [String]]

        public static func == (a: Answers, b: Answers) -> Bool {
            a.home == b.home && a.homeInLosAngeles == b.homeInLosAngeles && a.listOrders == b.listOrders
                && a.storedChoice == b.storedChoice && a.views == b.views && a.viewsInLosAngeles == b.viewsInLosAngeles
                && a.tagged == b.tagged && a.searches == b.searches && a.searchCompletedCounts == b.searchCompletedCounts
                && a.tagTitles == b.tagTitles && a.afterDeletingCompletedMilk == b.afterDeletingCompletedMilk
                && a.listsAfterReordering == b.listsAfterReordering && a.afterDeletingWork == b.afterDeletingWork
                && a.movedReminder == b.movedReminder && a.more == b.more && a.screens == b.screens
        }
    }

    static func seed(_ model: RemindersModel) async throws {
        try await model.migrate()
        try await model.createList(title: "Groceries", color: 0xED89_35FF) // above Int32.max
        try await model.createList(title: "Work", color: 0x4A99_EFFF)
        try await model.createList(title: "Empty", color: 0x00000000)
        typealias Seed = (list: String, title: String, notes: String, due: String?, priority: Priority, flag: Bool, tags: [String], done: Bool)
        let seeds: [Seed] = [
            ("Groceries", "buy Milk", "2% fat", "2026-03-13T12:00:00Z", .low, false, ["Errand"], false),          // overdue everywhere
            ("Groceries", "BUY bread", "", "2026-03-15T01:00:00Z", .medium, true, ["errand"], false),             // today in UTC, overdue in LA
            ("Groceries", "Café crème", "oat milk, not dairy", nil, .none, false, [], false),
            ("Groceries", "100% juice", "orange", "2026-03-15T23:30:00Z", .high, false, ["Urgent"], false),        // today in both
            ("Groceries", "milk chocolate", "", "2026-03-10T09:00:00Z", .none, false, [], true),                   // completed
            ("Work", "under_score naming", "rename column_name", "2026-03-16T09:00:00Z", .high, true, [], false),  // tomorrow UTC, today-ish LA? (02:00 PDT Mar 16: no)
            ("Work", "Archive C:\\temp folder", "backslash \\ test", "2026-03-20T09:00:00Z", .none, false, ["urgent"], false),
            ("Work", "Expense report", "milk run receipts", nil, .medium, true, [], true),                         // completed, flagged
            ("Work", "Zebra crossing survey", "", nil, .low, false, [], false),
            ("Work", "alpha release", "", "2026-03-15T10:00:00Z", .none, false, ["Errand"], false),                // due exactly now: today
        ]
        for seed in seeds {
            let detail = try await model.addReminder(
                ReminderDraft(title: seed.title, notes: seed.notes, dueDate: seed.due.map(at), priority: seed.priority,
                              isFlagged: seed.flag, tags: seed.tags), to: seed.list)
            if seed.done, let number = detail.reminder.number { try await model.complete(number) }
        }
    }

    static func titles(_ details: [ReminderDetail]) -> [String] { details.map(\.reminder.title) }

    /// "ok", or the error's text.
    static func outcome(_ body: () async throws -> some Any) async -> String {
        do {
            _ = try await body()
            return "ok"
        } catch {
            return "\(error)"
        }
    }

    enum Output {
        static func hex(_ color: Int64) -> String { String(format: "#%08llX", color) }
    }

    /// Seeds a fresh store through the model and runs every query of the scenario.
    ///
    /// - Parameter store: an empty store; the scenario migrates it.
    public static func run(_ store: Store) async throws -> Answers {
        // Keys in order, the same on both engines: 00000000-0000-0000-0000-000000000001, ...
        let counter = Counter()
        var model = RemindersModel(store: store, now: { now })
        model.newID = { counter.next() }
        var losAngeles = RemindersModel(store: store, timeZone: TimeZone(identifier: "America/Los_Angeles") ?? .current, now: { now })
        losAngeles.newID = { counter.next() }
        try await seed(model)

        let home = try await model.homeScreen()
        let homeLA = try await losAngeles.homeScreen()

        var listOrders: [String: [String]] = [:]
        for sort in ReminderSort.allCases {
            for ascending in [true, false] {
                listOrders["Groceries \(sort) \(ascending ? "asc" : "desc")"] =
                    titles(try await model.reminders(in: "groceries", sort: sort, ascending: ascending, showCompleted: false).reminders)
            }
        }
        listOrders["Work title asc with completed"] = titles(try await model.reminders(in: "Work", sort: .title, ascending: true, showCompleted: true).reminders)
        // The last choice is stored with the list and used when none is given.
        listOrders["Work stored choice"] = titles(try await model.reminders(in: "work").reminders)
        let storedChoice = try await model.list(named: "Work")

        var views: [String: [String]] = [:]
        var viewsLA: [String: [String]] = [:]
        for view in SmartList.allCases {
            views[view.rawValue] = titles(try await model.reminders(in: view))
            viewsLA[view.rawValue] = titles(try await losAngeles.reminders(in: view))
        }

        var screens: [String: [String]] = [:]
        let allScreens: [(String, ReminderScreen)] = [("Groceries", .list("Groceries")), ("Work", .list("work")), ("#errand", .tag("#errand")),
                                                     ("#Urgent", .tag("Urgent"))] + SmartList.allCases.map { ($0.rawValue, .smart($0)) }
        for (name, screen) in allScreens {
            for sort in ReminderSort.allCases {
                for ascending in [true, false] {
                    for shown in [false, true] {
                        let order = ReminderOrder(sort: sort, ascending: ascending, showCompleted: shown)
                        screens["\(name) \(sort) \(ascending ? "asc" : "desc")\(shown ? " with completed" : "")"] =
                            titles(try await model.reminders(on: screen, order: order))
                    }
                }
            }
        }

        // Manual order: moving one reminder changes that one alone while there is room.
        let groceriesID = try await model.list(named: "1").id
        func groceries() async throws -> [Reminder] {
            try await store.read { db in
                try db.fetchAll(Reminder.where { $0.remindersListID.eq(groceriesID) }.order { $0.position.ascending() })
            }
        }
        func changed(_ before: [Reminder], _ after: [Reminder]) -> Int {
            let old = Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0.position) })
            return after.filter { old[$0.id] != $0.position }.count
        }
        var manual: [String] = []
        let start = try await groceries()
        try await model.moveReminder(4, before: 1)
        let first = try await groceries()
        try await model.moveReminder(1, after: 3)
        let second = try await groceries()
        manual.append("moves changed \(changed(start, first)) and \(changed(first, second))")
        for step in 0..<12 { try await model.moveReminder(step % 2 == 0 ? 2 : 3, after: 1) }
        let squeezed = try await groceries()
        manual.append(titles(try await model.reminders(on: .list("Groceries"), order: ReminderOrder(sort: .manual, showCompleted: true))).joined(separator: ", "))
        manual.append("positions distinct \(Set(squeezed.map(\.position)).count == squeezed.count)")
        manual.append(titles(try await model.reminders(on: .list("Groceries"), order: ReminderOrder(sort: .manual, ascending: false))).joined(separator: ", "))
        try await model.moveReminder(4, before: nil)
        manual.append(titles(try await model.reminders(on: .list("Groceries"), order: ReminderOrder(sort: .manual, showCompleted: true))).joined(separator: ", "))

        var tagged: [String: [String]] = [:]
        tagged["ERRAND"] = titles(try await model.reminders(taggedWith: "ERRAND"))
        tagged["urgent"] = titles(try await model.reminders(taggedWith: "urgent", includeCompleted: true))

        var searches: [String: [String]] = [:]
        var completedCounts: [String: Int] = [:]
        for text in ["MILK", "milk", "%", "_", "\\", "c:\\t", "café", "CAFÉ", "errand", "100%", "nothing at all", "o_n", "temp", "creme", "errand milk", "oat mil"] {
            let (result, details) = try await model.search(text)
            searches[text] = titles(details)
            completedCounts[text] = result.completedCount
        }
        searches["milk with completed"] = titles(try await model.search("milk", includeCompleted: true).details)

        let tagTitles = try await store.read { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \"tags\" ORDER BY \"title\"") }

        let deleted = try await model.deleteCompletedMatches("MILK")
        let afterDelete = try await model.search("milk").result.completedCount

        try await model.moveList("Empty", to: 0)
        let reordered = try await model.lists().map(\.list.title)

        let moved = try await model.move(try await model.search("Zebra").details[0].reminder.number ?? 0, to: "Empty")
        try await model.deleteList("Work")
        let afterWork = try await model.reminders(in: .all).map { "\($0.listTitle): \($0.reminder.title)" }

        var more: [String: String] = [:]
        more["manual"] = manual.joined(separator: " | ")
        // Rows carry what the app draws.
        let milk = try await model.search("buy milk").details[0]
        more["milk row"] = "\(milk.isPastDue) \(milk.notesPreview) \(milk.tagsText) \(milk.listTitle) \(Output.hex(milk.listColor))"
        let juice = try await model.search("juice").details[0]
        more["juice row"] = "\(juice.isPastDue) \(juice.tagsText)"
        let long = try await model.addReminder(ReminderDraft(title: "Long notes", notes: "one\ntwo\r\nthree" + String(repeating: "x", count: 300)), to: "Groceries")
        more["long preview"] = "\(long.notesPreview.count) \(long.notesPreview.prefix(16))"
        // Tags: the section (all and open), the picker, rename, find, delete.
        try await model.complete(try await model.search("BUY bread").details[0].reminder.number ?? 0)
        more["tags section"] = try await model.tagsInUse().map { "\($0.tag.title) \($0.reminderCount)/\($0.openCount)" }.joined(separator: ", ")
        try await model.createTag("zeta")
        try await model.createTag("#Beta")
        let zebra = try await model.search("Zebra").details[0].reminder.number ?? 0
        try await model.tag(zebra, with: ["alpha", "URGENT"])
        let picker = try await model.tagPicker()
        more["picker"] = picker.mostUsed.map(\.title).joined(separator: " ") + " | " + picker.others.map(\.title).joined(separator: " ")
        more["duplicate tag"] = await outcome { try await model.createTag("BETA") }
        try await model.renameTag("URGENT", to: "Important")
        more["rename onto another"] = await outcome { try await model.renameTag("errand", to: "IMPORTANT") }
        more["rename case"] = try await model.renameTag("Errand", to: "ERRAND").title
        more["find"] = try await model.tag(named: "#important")?.title ?? "nil"
        more["find missing"] = try await model.tag(named: "nope")?.title ?? "nil"
        more["delete tag"] = "\(try await model.deleteTag("Alpha"))"
        more["zebra row"] = try await model.search("Zebra").details[0].tagsText
        // Clear completed, by age: due more than N months before today (UTC: 2026-03-15).
        for (title, due) in [("ancient milk", "2025-01-10T12:00:00Z"), ("old milk", "2025-12-01T12:00:00Z"),
                             ("edge milk", "2026-02-15T00:00:00Z"), ("undated milk", nil)] as [(String, String?)] {
            let added = try await model.addReminder(ReminderDraft(title: title, dueDate: due.map(at)), to: "Groceries")
            try await model.complete(added.reminder.number ?? 0)
        }
        var cleared: [String] = []
        for age in [CompletedAge.twelveMonths, .sixMonths, .oneMonth, .any] {
            let count = try await model.deleteCompletedMatches("MILK", olderThan: age)
            cleared.append("\(age.rawValue) \(count) left \(titles(try await model.search("milk", includeCompleted: true).details).filter { $0.hasSuffix(" milk") && $0 != "buy Milk" })")
        }
        more["clear completed by age"] = cleared.joined(separator: "; ")
        // A title names one list.
        more["duplicate list"] = await outcome { try await model.createList(title: "groceries") }
        more["rename onto another list"] = await outcome { try await model.renameList("Empty", to: "GROCERIES") }
        more["rename own case"] = try await model.renameList("Empty", to: "EMPTY").title
        // A list's cover image: present or absent in listings, read back byte for byte.
        var bytes = Data([0x00, 0xFF, 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00])
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<100_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: seed >> 56))
        }
        try await model.setCoverImage(bytes, of: "groceries")
        let covered = try await model.lists().map { "\($0.list.title) \($0.hasCoverImage)" }.joined(separator: ", ")
        let readBack = try await model.coverImage(of: "Groceries")
        try await model.setCoverImage(Data(), of: "empty")
        let emptyImage = try await model.coverImage(of: "EMPTY")
        try await model.setCoverImage(nil, of: "Groceries")
        let removed = try await model.coverImage(of: "Groceries")
        more["cover images"] = "\(covered); same bytes \(readBack == bytes) (\(readBack?.count ?? -1)); empty \(emptyImage.map { "\($0.count) bytes" } ?? "nil"); removed \(removed == nil)"
        // A database always has a list.
        for list in try await model.lists() { try await model.deleteList(String(list.list.number ?? 0)) }
        more["last list"] = try await model.lists().map { "\($0.list.title) \($0.incompleteCount)" }.joined(separator: ", ")

        return Answers(home: home, homeInLosAngeles: homeLA, listOrders: listOrders, storedChoice: storedChoice,
                       views: views, viewsInLosAngeles: viewsLA, tagged: tagged, searches: searches,
                       searchCompletedCounts: completedCounts, tagTitles: tagTitles,
                       afterDeletingCompletedMilk: (deleted, afterDelete), listsAfterReordering: reordered,
                       afterDeletingWork: afterWork, movedReminder: "\(moved.listTitle): \(moved.reminder.title) @\(moved.reminder.position)", more: more, screens: screens)
    }
}

/// Keys made in order.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64 = 0

    func next() -> UUID {
        let number = lock.withLock { value += 1; return value }
        let text = String(number, radix: 16)
        return UUID(uuidString: "00000000-0000-0000-0000-" + String(repeating: "0", count: 12 - text.count) + text) ?? UUID()
    }
}

extension RemindersScenario {
    /// The differential check: the scenario on both engines, compared part by
    /// part, so a difference names its part of the scenario.
    static func sameAnswersOnBothEngines(_ check: DifferentialRun) async throws {
        let engines = try await check.makeEngines()
        let reference: Answers, subject: Answers
        do {
            reference = try await run(engines.reference.store)
            subject = try await run(engines.subject.store)
        } catch {
            await engines.close()
            throw error
        }
        await engines.close()
        func compare<T: Equatable>(_ part: String, _ a: T, _ b: T) {
            check.expect(a == b, "\(part): \(engines.reference.name) gives \(a), \(engines.subject.name) gives \(b)")
        }
        compare("home", reference.home, subject.home)
        compare("home in Los Angeles", reference.homeInLosAngeles, subject.homeInLosAngeles)
        compare("list orders", reference.listOrders, subject.listOrders)
        compare("stored choice", reference.storedChoice, subject.storedChoice)
        compare("views", reference.views, subject.views)
        compare("views in Los Angeles", reference.viewsInLosAngeles, subject.viewsInLosAngeles)
        compare("tagged", reference.tagged, subject.tagged)
        compare("searches", reference.searches, subject.searches)
        compare("search completed counts", reference.searchCompletedCounts, subject.searchCompletedCounts)
        compare("tag titles", reference.tagTitles, subject.tagTitles)
        compare("deleting completed milk: deleted", reference.afterDeletingCompletedMilk.deleted, subject.afterDeletingCompletedMilk.deleted)
        compare("deleting completed milk: completed left", reference.afterDeletingCompletedMilk.completedCount,
                subject.afterDeletingCompletedMilk.completedCount)
        compare("lists after reordering", reference.listsAfterReordering, subject.listsAfterReordering)
        compare("after deleting Work", reference.afterDeletingWork, subject.afterDeletingWork)
        compare("moved reminder", reference.movedReminder, subject.movedReminder)
        compare("more", reference.more, subject.more)
        compare("screens", reference.screens, subject.screens)
        check.expect(reference == subject, "the answers differ as a whole")
    }
}

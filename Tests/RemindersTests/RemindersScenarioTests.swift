import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import DepotDifferential
import Reminders
import Testing
import TestSupport

/// Every query scenario on both engines, against values written here.
@Suite(.serialized) struct RemindersScenarioTests {
    static func sqliteAnswers() async throws -> RemindersScenario.Answers {
        try await RemindersScenario.run(Store.sqliteInMemory())
    }

    static func postgresAnswers() async throws -> RemindersScenario.Answers {
        let store = try await PostgresTestServer.freshStore()
        defer { Task { await store.close() } }
        return try await RemindersScenario.run(store)
    }

    static func expectExpected(_ answers: RemindersScenario.Answers) {
        // Home: open 8; due on today's calendar day (UTC): bread, juice, alpha; overdue: milk.
        #expect(answers.home.today == 3)
        #expect(answers.home.scheduled == 6)
        #expect(answers.home.all == 8)
        #expect(answers.home.flagged == 2)
        #expect(answers.home.completed == 2)
        #expect(answers.home.overdue == 1)
        #expect(answers.home.lists.map { "\($0.list.title) \($0.incompleteCount)" } == ["Groceries 4", "Work 4", "Empty 0"])
        #expect(answers.home.lists.first?.list.color == 0xED89_35FF)
        #expect(answers.home.tags.map { "\($0.tag.title) \($0.reminderCount)/\($0.openCount)" } == ["Errand 3/3", "Urgent 2/2"])
        // In Los Angeles it is 03:00 on the 15th: bread (18:00 on the 14th there) is overdue too,
        // and today there is alpha (03:00) and juice (16:30).
        #expect(answers.homeInLosAngeles.overdue == 2)
        #expect(answers.homeInLosAngeles.today == 2)

        let orders = answers.listOrders
        #expect(orders["Groceries dueDate asc"] == ["buy Milk", "BUY bread", "100% juice", "Café crème"])
        // Undated last ascending, so first descending; no priority last in both directions, as in the app.
        #expect(orders["Groceries dueDate desc"] == ["Café crème", "100% juice", "BUY bread", "buy Milk"])
        #expect(orders["Groceries priority asc"] == ["buy Milk", "BUY bread", "100% juice", "Café crème"])
        #expect(orders["Groceries priority desc"] == ["100% juice", "BUY bread", "buy Milk", "Café crème"])
        // Case folds A-Z only, so "BUY bread" and "buy Milk" sort as "buy bread", "buy milk"; ties end on id.
        #expect(orders["Groceries title asc"] == ["100% juice", "BUY bread", "buy Milk", "Café crème"])
        #expect(orders["Groceries title desc"] == ["Café crème", "buy Milk", "BUY bread", "100% juice"])
        #expect(orders["Groceries createdAt asc"] == ["buy Milk", "BUY bread", "Café crème", "100% juice"])
        #expect(orders["Groceries createdAt desc"] == ["buy Milk", "BUY bread", "Café crème", "100% juice"])
        #expect(orders["Work title asc with completed"] == ["alpha release", "Archive C:\\temp folder", "under_score naming", "Zebra crossing survey", "Expense report"])
        #expect(orders["Work stored choice"] == orders["Work title asc with completed"])
        #expect(answers.storedChoice.sort == .title && answers.storedChoice.sortAscending && answers.storedChoice.showCompleted)

        #expect(answers.views["today"] == ["BUY bread", "alpha release", "100% juice"])
        #expect(answers.views["scheduled"] == ["buy Milk", "BUY bread", "alpha release", "100% juice", "under_score naming", "Archive C:\\temp folder"])
        #expect(answers.views["flagged"] == ["BUY bread", "under_score naming"])
        #expect(answers.views["completed"] == ["milk chocolate", "Expense report"])
        #expect(answers.views["all"] == ["buy Milk", "BUY bread", "Café crème", "100% juice", "under_score naming", "Archive C:\\temp folder", "Zebra crossing survey", "alpha release"])
        #expect(answers.viewsInLosAngeles["today"] == ["alpha release", "100% juice"])

        #expect(answers.tagged["ERRAND"] == ["buy Milk", "BUY bread", "alpha release"])
        #expect(answers.tagged["urgent"] == ["100% juice", "Archive C:\\temp folder"])

        let searches = answers.searches
        #expect(searches["MILK"] == ["buy Milk", "Café crème"])
        #expect(searches["milk"] == searches["MILK"])
        #expect(answers.searchCompletedCounts["MILK"] == 2)
        #expect(searches["milk with completed"] == ["buy Milk", "Café crème", "milk chocolate", "Expense report"])
        // Search is by words (Depot's full-text index): punctuation alone finds nothing.
        #expect(searches["%"] == [])
        #expect(searches["_"] == [])
        #expect(searches["\\"] == [])
        // Every word is the start of a word: "o n" finds "oat milk, not dairy".
        #expect(searches["o_n"] == ["Café crème"])
        #expect(searches["c:\\t"] == ["Archive C:\\temp folder"])
        #expect(searches["temp"] == ["Archive C:\\temp folder"])
        // Case and diacritics fold, on both engines.
        #expect(searches["café"] == ["Café crème"])
        #expect(searches["CAFÉ"] == ["Café crème"])
        #expect(searches["creme"] == ["Café crème"])
        // Tags are searched too, and the words may be in different fields.
        #expect(searches["errand"] == ["buy Milk", "BUY bread", "alpha release"])
        #expect(searches["errand milk"] == ["buy Milk"])
        #expect(searches["oat mil"] == ["Café crème"])
        #expect(searches["100%"] == ["100% juice"])
        #expect(searches["nothing at all"] == [])

        // "Errand" and "errand" are one tag, as first written.
        #expect(answers.tagTitles == ["Errand", "Urgent"])
        #expect(answers.afterDeletingCompletedMilk.deleted == 2)
        #expect(answers.afterDeletingCompletedMilk.completedCount == 0)
        #expect(answers.listsAfterReordering == ["Empty", "Groceries", "Work"])
        // Moved to another list, it keeps its place in the manual order (its position).
        #expect(answers.movedReminder == "Empty: Zebra crossing survey @3072")
        // Screens in any order: open first; no priority last either way, no due date last ascending; flagged first within a priority; then id.
        let screens = answers.screens
        #expect(screens.count == 9 * 5 * 2 * 2)
        #expect(screens["Groceries manual asc with completed"] == ["buy Milk", "BUY bread", "Café crème", "100% juice", "milk chocolate"])
        #expect(screens["Work priority asc with completed"] == ["Zebra crossing survey", "under_score naming", "Archive C:\\temp folder", "alpha release", "Expense report"])
        #expect(screens["Work priority desc with completed"] == ["under_score naming", "Zebra crossing survey", "Archive C:\\temp folder", "alpha release", "Expense report"])
        #expect(screens["all priority desc"] == ["under_score naming", "100% juice", "BUY bread", "buy Milk", "Zebra crossing survey", "Café crème", "Archive C:\\temp folder", "alpha release"])
        #expect(screens["all dueDate asc"] == ["buy Milk", "BUY bread", "alpha release", "100% juice", "under_score naming", "Archive C:\\temp folder", "Café crème", "Zebra crossing survey"])
        #expect(screens["all dueDate desc"] == ["Café crème", "Zebra crossing survey", "Archive C:\\temp folder", "under_score naming", "100% juice", "alpha release", "BUY bread", "buy Milk"])
        #expect(screens["Groceries title asc with completed"] == ["100% juice", "BUY bread", "buy Milk", "Café crème", "milk chocolate"])
        // Every seed was created at the scenario's fixed "now": creation dates tie, and the id decides.
        #expect(screens["#errand createdAt desc"] == ["buy Milk", "BUY bread", "alpha release"])
        #expect(screens["today dueDate asc"] == ["BUY bread", "alpha release", "100% juice"])
        #expect(screens["completed title asc"] == ["Expense report", "milk chocolate"])
        #expect(screens["flagged priority desc with completed"] == ["under_score naming", "BUY bread", "Expense report"])

        let more = answers.more
        #expect(more["milk row"] == "true 2% fat #Errand Groceries #ED8935FF")
        #expect(more["juice row"] == "false #Urgent")
        #expect(more["long preview"] == "200 one two threexxx")
        // After Work's deletion: Errand on milk and bread (bread now done), Urgent on juice.
        #expect(more["tags section"] == "Errand 2/1, Urgent 1/1")
        #expect(more["picker"] == "Errand Urgent alpha | Beta zeta")
        #expect(more["duplicate tag"] == "a tag named \"BETA\" exists already")
        #expect(more["rename onto another"] == "a tag named \"Important\" exists already")
        #expect(more["rename case"] == "ERRAND")
        #expect(more["find"] == "Important")
        #expect(more["find missing"] == "nil")
        #expect(more["delete tag"] == "1")
        #expect(more["zebra row"] == "#Important")
        #expect(more["last list"] == "Reminders 0")
        // Twelve moves into the same gap exhaust it once: the list is renumbered, the order kept.
        #expect(more["manual"] == "moves changed 1 and 1 | 100% juice, buy Milk, Café crème, BUY bread, milk chocolate | positions distinct true"
            + " | BUY bread, Café crème, buy Milk, 100% juice | buy Milk, Café crème, BUY bread, 100% juice, milk chocolate")
        #expect(more["cover images"] == "EMPTY false, Groceries true; same bytes true (100011); empty 0 bytes; removed true")
        #expect(more["duplicate list"] == "a list named \"Groceries\" exists already; choose another title")
        #expect(more["rename onto another list"] == "a list named \"Groceries\" exists already; choose another title")
        #expect(more["rename own case"] == "EMPTY")
        // 12 months back is 2025-03-15: only "ancient" is older; 6 months: none left older;
        // 1 month back is 2026-02-15 00:00, which "edge" is due at, not before; undated is never older.
        #expect(more["clear completed by age"] == "twelveMonths 1 left [\"old milk\", \"edge milk\", \"undated milk\"]; "
            + "sixMonths 0 left [\"old milk\", \"edge milk\", \"undated milk\"]; "
            + "oneMonth 1 left [\"edge milk\", \"undated milk\"]; any 2 left []")
        // In the lists' order, each in its manual order (as rearranged above).
        #expect(answers.afterDeletingWork == ["Empty: Zebra crossing survey", "Groceries: buy Milk", "Groceries: Café crème", "Groceries: BUY bread", "Groceries: 100% juice"])
    }

    @Test func sqliteGivesTheExpectedAnswers() async throws {
        Self.expectExpected(try await Self.sqliteAnswers())
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func postgresGivesTheExpectedAnswers() async throws {
        Self.expectExpected(try await Self.postgresAnswers())
    }

    // That both engines give the same answers is the differential check "the
    // reminders scenario gives the same answers on both engines" (DepotDifferential),
    // run for every engine by DifferentialTests and the MariaDB plug-in.
}

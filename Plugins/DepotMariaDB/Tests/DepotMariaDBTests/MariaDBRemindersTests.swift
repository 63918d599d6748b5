import Depot
import DepotMariaDB
import DepotMariaDBTesting
import DepotSQLite
import Foundation
import Reminders
import Testing

/// The reminders model unchanged on MariaDB: the scenario of the main
/// package's tests (every screen, view, search and edit the model offers, at
/// two time zones) gives the same answers as on SQLite.
@Suite(.serialized, .enabled(if: MariaDBTestServer.shouldRun, "no MariaDB server named (set DEPOT_MARIADB_URL; scripts/lib/mariadb.sh starts one)"))
struct MariaDBRemindersTests {
    @Test func theRemindersScenarioGivesTheSameAnswersAsOnSQLite() async throws {
        let sqlite = try await RemindersScenario.run(Store.sqliteInMemory())
        let databases = MariaDBScratchDatabases(base: try MariaDBTestServer.configuration())
        let store = try await databases.makeStore(Store.Configuration())
        let mariadb: RemindersScenario.Answers
        do {
            mariadb = try await RemindersScenario.run(store)
        } catch {
            await store.close()
            await databases.dropAll()
            throw error
        }
        await store.close()
        await databases.dropAll()
        // Field by field, so a difference names its part of the scenario.
        #expect(mariadb.home == sqlite.home)
        #expect(mariadb.homeInLosAngeles == sqlite.homeInLosAngeles)
        #expect(mariadb.listOrders == sqlite.listOrders)
        #expect(mariadb.storedChoice == sqlite.storedChoice)
        #expect(mariadb.views == sqlite.views)
        #expect(mariadb.viewsInLosAngeles == sqlite.viewsInLosAngeles)
        #expect(mariadb.tagged == sqlite.tagged)
        #expect(mariadb.searches == sqlite.searches)
        #expect(mariadb.searchCompletedCounts == sqlite.searchCompletedCounts)
        #expect(mariadb.tagTitles == sqlite.tagTitles)
        #expect(mariadb.afterDeletingCompletedMilk == sqlite.afterDeletingCompletedMilk)
        #expect(mariadb.listsAfterReordering == sqlite.listsAfterReordering)
        #expect(mariadb.afterDeletingWork == sqlite.afterDeletingWork)
        #expect(mariadb.movedReminder == sqlite.movedReminder)
        #expect(mariadb.more == sqlite.more)
        #expect(mariadb.screens == sqlite.screens)
        #expect(mariadb == sqlite)
    }
}

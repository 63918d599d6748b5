import Foundation
import Testing

/// Small things a user meets, each as a user would expect it.
extension RemindersCommandTests {
    @Test func aListMovedPastTheLastPlaceIsRefusedAndStaysWhereItWas() async throws {
        #expect(try await run(["lists", "add", "Home"]).status == 0)
        #expect(try await run(["lists", "add", "Work"]).status == 0)
        let moved = try await run(["lists", "move", "Home", "99"])
        #expect(moved.status == 1)
        #expect(moved.stderr == "reminders: there are 2 lists: a list's place is from 1 to 2, not 99\n", "\(moved.stderr)")
        #expect(try await run(["lists"]).stdout.hasPrefix("Home"), "not moved last")
        #expect(try await run(["lists", "move", "Home", "2"]).stdout.hasPrefix("Work"))
    }

    @Test func editWithNothingToChangeAndWatchCountZeroAreUsageErrors() async throws {
        #expect(try await run(["add", "Milk"]).status == 0)
        let edit = try await run(["edit", "1"])
        #expect(edit.status == 64 && edit.stderr.hasPrefix("Error: say what to change: --title, --notes, --due, --priority, --tag, --flag or --unflag\n"), "\(edit.stderr)")
        let watch = try await run(["watch", "all", "--count", "0"])
        #expect(watch.status == 64 && watch.stderr.hasPrefix("Error: --count takes a number of drawings, 1 or more, not 0\n"), "\(watch.stderr)")
        #expect(watch.stdout.isEmpty, "nothing drawn")
    }

    @Test func helpForASubcommandThatDoesNotExistIsAUsageError() async throws {
        let help = try await run(["help", "nosuch"])
        #expect(help.status == 64)
        #expect(help.stderr == "reminders: no subcommand \"nosuch\" to help with (reminders --help lists them)\n", "\(help.stderr)")
        #expect(help.stdout.isEmpty)
        #expect(try await run(["help", "view"]).status == 0)
    }

    @Test func taggedIsHeadedByTheTagAsStoredWhateverCaseWasTyped() async throws {
        #expect(try await run(["add", "Pay rent", "--tag", "Bills"]).status == 0)
        let tagged = try await run(["tagged", "BILLS"])
        #expect(tagged.status == 0)
        #expect(tagged.stdout.hasPrefix("#Bills\n"), "\(tagged.stdout)")
    }

    @Test func deletingCompletedMatchesOfNothingAsksNothingAndSaysSo() async throws {
        #expect(try await run(["add", "Milk"]).status == 0)
        let outcome = try await run(["search", "zzz", "--delete-completed"])
        #expect(outcome.status == 0, "no terminal, no --yes, and nothing to confirm: \(outcome.stderr)")
        #expect(outcome.stdout == "No completed reminder matches \"zzz\": nothing was deleted.\n")
    }

    @Test func deleteJSONNamesTheReminderItDeletedNotABareNumber() async throws {
        #expect(try await run(["add", "Milk"]).status == 0)
        let outcome = try await run(["delete", "1", "--yes", "--json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let deleted = (try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any])?["deleted"] as? [String: Any]
        #expect((deleted?["reminder"] as? [String: Any])?["title"] as? String == "Milk", "\(outcome.stdout)")
        #expect((deleted?["reminder"] as? [String: Any])?["number"] as? Int == 1)
    }

    @Test func deletingTheLastListSaysWhichListTakesItsPlaceTheSameOneAddMakes() async throws {
        #expect(try await run(["lists", "add", "Home"]).status == 0)
        let deleted = try await run(["lists", "delete", "Home", "--yes"])
        #expect(deleted.stdout == "Deleted the list \"Home\" and its 0 reminders.\nA database always keeps a list: an empty \"Reminders\" takes its place.\n", "\(deleted.stdout)")
        let json = try await run(["lists", "delete", "Reminders", "--yes", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((object?["deleted"] as? [String: Any])?["title"] as? String == "Reminders", "\(json.stdout)")
        #expect(object?["reminders"] as? Int == 0)
        #expect((object?["madeInItsPlace"] as? [String: Any])?["title"] as? String == "Reminders")
        // On a database with no list, add makes one of the same name.
        let fresh = try await run(["add", "Milk", "--database", home.appendingPathComponent("other.sqlite").path])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        #expect(fresh.stdout.contains("Reminders"), "\(fresh.stdout)")
    }

    @Test func theTopLevelHelpKeepsTheGlobalOptionsOnePerLineIndented() async throws {
        let help = try await run(["--help"], environment: environment.merging(["COLUMNS": "80"]) { $1 })
        #expect(help.status == 0)
        #expect(help.stdout.contains("""
              --database PATH|URL  an SQLite file, or postgres://user:pass@host/db
              --time-zone ZONE     whose days 'today' and 'overdue' mean (default: here)
              --json               JSON instead of a table
              --verbose            errors whole, with the SQL and the engine's detail

            """), "\(help.stdout)")
    }

    @Test func aSearchWordTooLongToIndexIsSaidToBeLeftOut() async throws {
        #expect(try await run(["add", "Milk"]).status == 0)
        let word = String(repeating: "x", count: 129)
        let outcome = try await run(["search", "milk \(word)"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr == "reminders: \"xxxxxxxxxxxxxxxxxxx…\" is left out of the search: words over 128 letters are not indexed\n", "\(outcome.stderr)")
        #expect(outcome.stdout.contains("Milk"), "the other words still search: \(outcome.stdout)")
    }
}

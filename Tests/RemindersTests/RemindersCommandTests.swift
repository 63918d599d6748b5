import Depot
import DepotSQLite
import Foundation
import Testing
import TestSupport

/// The `reminders` program, run as a newcomer runs it.
@Suite struct RemindersCommandTests {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let home = FileManager.default.temporaryDirectory.appendingPathComponent("depot-reminders-cli-\(UUID().uuidString)")

    /// The `reminders` program built beside the tests.
    func binary() throws -> URL {
        let folder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        return try #require([folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("reminders") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }, "reminders is built beside the tests")
    }

    /// A newcomer's environment: a fresh home, UTC, no database named.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = home.path
        environment["REMINDERS_DATABASE"] = nil
        environment["TZ"] = "UTC"
        return environment
    }

    /// Runs the command, through `launcher` (a program and its arguments, such as `setpriv ...`) when one is given.
    /// It waits on a thread of its own, not one of the task pool's (see `ChildProcess`).
    func run(_ arguments: [String], environment: [String: String]? = nil, through launcher: [String] = []) async throws -> Outcome {
        let (binary, environment) = (try binary(), environment ?? self.environment)
        return try await ChildProcess.onThreadOfItsOwn {
            let process = Process()
            if let program = launcher.first {
                process.executableURL = URL(fileURLWithPath: program)
                process.arguments = Array(launcher.dropFirst()) + [binary.path] + arguments
            } else {
                process.executableURL = binary
                process.arguments = arguments
            }
            process.environment = environment
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            // Both pipes at once: a child that fills one while the test reads only the other would wait forever.
            let errors = ChildProcess.PipeReader(err.fileHandleForReading)
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = errors.wait()
            process.waitUntilExit()
            return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
        }
    }

    @Test func theDemoRunsOnAFreshMachineAndCanRunAgain() async throws {
        let first = try await run(["demo"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("My Lists"))
        #expect(first.stdout.contains("Trip to Lisbon"))
        #expect(first.stdout.contains("#travel (4)"))
        #expect(!first.stdout.contains("\u{1B}["), "no colour when the output is not a terminal")
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("depot-reminders/demo.sqlite").path))
        let again = try await run(["demo"])
        #expect(again.status == 0)
        #expect(again.stdout == first.stdout)
    }

    @Test func versionNamesTheCommitTheCommandWasBuiltFrom() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let git = try await ChildProcess.run("/usr/bin/git", ["-C", root.path, "rev-parse", "--short=12", "HEAD"])
        let version = try await run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("reminders 0.9 (Depot, commit "), "\(version.stdout)")
        if git.status == 0 {
            let commit = git.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(version.stdout.contains("commit \(commit)"), "\(version.stdout) names HEAD, \(commit)")
        } else {
            #expect(version.stdout.contains("commit unknown"), "outside a git checkout: \(version.stdout)")
        }
    }

    @Test func aNewcomerAddsAndListsReminders() async throws {
        #expect(try await run(["lists", "add", "Groceries", "--color", "5FC94F"]).status == 0)
        let added = try await run(["add", "Oat milk", "--list", "groceries", "--due", "tomorrow", "--priority", "high", "--tag", "errand"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("Oat milk"))
        let shown = try await run(["show", "Groceries", "--json"])
        let decoded = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [[String: Any]]
        #expect(decoded?.count == 1)
        #expect((decoded?.first?["tags"] as? [String]) == ["errand"])
        #expect(FileManager.default.fileExists(atPath: home.appendingPathComponent("depot-reminders/reminders.sqlite").path))
        let stats = try await run(["stats", "--json"])
        #expect(stats.stdout.contains("\"scheduled\" : 1"))
    }

    @Test(arguments: [
        (["add", "x", "--list", "Nowhere"], "reminders: no list named \"Nowhere\"\n"),
        (["add", "x", "--due", "someday"], "reminders: cannot read the date \"someday\"; accepted: today, tomorrow, yesterday, tonight, a weekday (friday: the next one), next friday (next week's), in 30 minutes, in 2 hours, in 3 days, in 2 weeks, Dec 24, 24 December 2026, 24/12/2026 (in your locale's order), any day with a time (tomorrow 9am, friday at 17:00, Dec 24 noon), a time alone (9am: the next 9am), none, 2026-12-24, 2026-12-24 17:00, 2026-12-24T17:00, or ISO-8601 with Z or an offset (2026-12-24T17:00:00+01:00)\n"),
        (["add", "x", "--due", "0000-01-01"], "reminders: cannot read the date \"0000-01-01\": the year must be from 0001 to 9999\n"),
        (["add", "x", "--due", "13pm"], "reminders: cannot read the date \"13pm\"; accepted: today, tomorrow, yesterday, tonight, a weekday (friday: the next one), next friday (next week's), in 30 minutes, in 2 hours, in 3 days, in 2 weeks, Dec 24, 24 December 2026, 24/12/2026 (in your locale's order), any day with a time (tomorrow 9am, friday at 17:00, Dec 24 noon), a time alone (9am: the next 9am), none, 2026-12-24, 2026-12-24 17:00, 2026-12-24T17:00, or ISO-8601 with Z or an offset (2026-12-24T17:00:00+01:00)\n"),
        (["complete", "404"], "reminders: no reminder with id 404\n"),
        (["lists", "add", "x", "--color", "blue"], "reminders: a colour is RRGGBB or RRGGBBAA hex, such as 4A99EF (got \"blue\")\n"),
        (["stats", "--time-zone", "Mars/Olympus"], "reminders: unknown time zone \"Mars/Olympus\" (try UTC or Europe/Paris)\n"),
    ])
    func badInputIsOneLineOnStderrAndWritesNothing(arguments: [String], message: String) async throws {
        #expect(try await run(["lists", "add", "Inbox"]).status == 0)
        let outcome = try await run(arguments)
        #expect(outcome.status == 1)
        #expect(outcome.stderr == message)
        #expect(outcome.stdout.isEmpty)
        let all = try await run(["view", "all", "--json"])
        #expect(all.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]" || all.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    @Test func anUnreachableServerIsOneLineWithoutThePassword() async throws {
        let outcome = try await run(["stats", "--database", "postgres://me:hunter2@127.0.0.1:1/reminders"])
        #expect(outcome.status == 1)
        // It never connected: "cannot connect", not "connection lost".
        #expect(outcome.stderr.hasPrefix("reminders: connection error [cannot connect]: cannot connect to PostgreSQL at 127.0.0.1:1/reminders as me: "), "\(outcome.stderr)")
        #expect(!outcome.stderr.contains("lost"))
        #expect(outcome.stderr.split(separator: "\n").count == 1)
        #expect(!outcome.stderr.contains("hunter2"))
    }

    @Test(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
    func theSameCommandsWorkOnPostgreSQL() async throws {
        // A fresh schema for this test, named in the URL's search_path.
        let store = try await PostgresTestServer.freshStore()
        let schema = try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
        await store.close()
        let server = try #require(PostgresTestServer.url)
        let url = server + (server.contains("?") ? "&" : "?") + "search_path=\(schema)"
        let demo = try await run(["demo", "--database", url])
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("Trip to Lisbon"))
        #expect(!demo.stdout.contains(try #require(URLComponents(string: url)?.password)), "the password is never printed")
        let sqliteDemo = try await run(["demo"])
        // The home screen is the same on both engines (minus the line naming the database).
        let body = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("Demo data is in") } }
        #expect(body(demo.stdout) == body(sqliteDemo.stdout))
        // Sync is a device's: a PostgreSQL database is refused in one line that says what to run.
        for arguments in [["sync"], ["sync", "sign-in", "alice", "--server", "http://127.0.0.1:9"]] {
            let sync = try await run(arguments + ["--database", url])
            #expect(sync.status == 1)
            #expect(sync.stderr == "reminders: reminders sync syncs a device's database (SQLite); a PostgreSQL database is a server's: serve it with RemindersServer --sync\n",
                    "\(arguments): \(sync.stderr)")
        }
        let refused = try await run(["demo", "--database", url])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("pass --replace"))
        let search = try await run(["search", "TRAVEL", "--database", url, "--json"])
        #expect(search.status == 0)
        #expect(search.stdout.contains("\"completedCount\" : 1"))

        // Everything printed, on every path here and on error paths, holds no password.
        let password = try #require(URLComponents(string: url)?.password)
        var wrongPassword = try #require(URLComponents(string: url))
        wrongPassword.password = "wrong-\(password)"
        var environment = self.environment
        environment["REMINDERS_DATABASE"] = url
        let outcomes = [demo, refused, search,
                        try await run(["demo"], environment: environment),
                        try await run(["stats", "--database", try #require(wrongPassword.string)]),
                        try await run(["show", "Nowhere", "--database", url]),
                        try await run(["add", "x", "--due", "0000-01-01", "--database", url]),
                        try await run(["stats", "--database", url.replacingOccurrences(of: "search_path", with: "no_such_setting")])]
        for (index, outcome) in outcomes.enumerated() {
            #expect(!(outcome.stdout + outcome.stderr).contains(password), "run \(index) printed the password: \(outcome.stdout.suffix(300)) \(outcome.stderr)")
        }
        #expect(outcomes[3].status == 1 && outcomes[3].stderr.contains("pass --replace"), "REMINDERS_DATABASE reaches demo: \(outcomes[3].stderr)")
    }
}

extension RemindersCommandTests {
    @Test func versionUnknownSubcommandsAndGlobalOptionsBeforeTheSubcommand() async throws {
        let version = try await run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("reminders "), "\(version.stdout)")
        let bogus = try await run(["bogus"])
        #expect(bogus.status == 64)
        #expect(bogus.stderr == "reminders: unknown subcommand \"bogus\" (reminders --help lists them)\n")
        // A database you name goes in a folder that exists (only the default folder is made).
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let path = home.appendingPathComponent("elsewhere.sqlite").path
        #expect(try await run(["--database", path, "lists", "add", "Errands"]).status == 0)
        let before = try await run(["--database=\(path)", "--json", "lists"])
        let after = try await run(["lists", "--database", path, "--json"])
        #expect(before.status == 0 && after.status == 0, "\(before.stderr)\(after.stderr)")
        #expect(before.stdout == after.stdout)
        #expect(before.stdout.contains("\"title\" : \"Errands\""))
    }

    @Test func taggedHeadsItsTableWithOneHashAndEditFlags() async throws {
        #expect(try await run(["lists", "add", "Home"]).status == 0)
        #expect(try await run(["add", "Water plants", "--list", "Home", "--tag", "errand"]).status == 0)
        let tagged = try await run(["tagged", "#errand"])
        #expect(tagged.stdout.hasPrefix("#errand\n"), "\(tagged.stdout)")
        let flagged = try await run(["edit", "1", "--flag", "--json"])
        #expect(flagged.stdout.contains("\"isFlagged\" : true"), "\(flagged.stdout)\(flagged.stderr)")
        let unflagged = try await run(["edit", "1", "--unflag", "--json"])
        #expect(unflagged.stdout.contains("\"isFlagged\" : false"))
        let both = try await run(["edit", "1", "--flag", "--unflag"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("--flag and --unflag contradict each other"))
    }
}

extension RemindersCommandTests {
    @Test func columnsLineUpByDisplayWidthWithWideCharactersEmojiAndCombiningMarks() async throws {
        // Terminal columns each title takes, counted by hand.
        let titles: [(String, Int)] = [("日本語のメモ", 12), ("💡 idea", 7), ("e\u{301}te\u{301}", 3), ("plain", 5)]
        #expect(try await run(["lists", "add", "Wide"]).status == 0)
        for (title, _) in titles {
            #expect(try await run(["add", title, "--list", "Wide", "--due", "2026-12-01"]).status == 0)
        }
        let shown = try await run(["show", "Wide"])
        var ends: [Int] = []
        for (title, width) in titles {
            let line = try #require(shown.stdout.split(separator: "\n").first { $0.contains(title) }, "\(shown.stdout)")
            let before = try #require(line.range(of: "2026-12-01")).lowerBound
            let padding = line[..<before].reversed().prefix { $0 == " " }.count
            let prefix = line[..<before].dropLast(padding).dropLast(title.count)
            // Same columns before the title, then title and padding fill the same width.
            ends.append(prefix.count + width + padding)
        }
        #expect(Set(ends).count == 1, "due dates start at columns \(ends):\n\(shown.stdout)")
    }
}

extension RemindersCommandTests {
    @Test func datesAsPeopleTypeThemAndAnErrorThatListsTheForms() async throws {
        #expect(try await run(["lists", "add", "Dates"]).status == 0)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let today = calendar.startOfDay(for: Date())
        func nine(_ days: Int) -> String {
            let day = calendar.date(byAdding: .day, value: days, to: today) ?? today
            return ISO8601DateFormatter().string(from: calendar.date(byAdding: .hour, value: 9, to: day) ?? day)
        }
        let weekday = calendar.component(.weekday, from: today)   // 1 is Sunday
        let untilFriday = (6 - weekday + 7) % 7 == 0 ? 7 : (6 - weekday + 7) % 7
        // Next week's Friday: this week's (weeks start on Monday) plus seven days.
        let mondayBased = (weekday + 5) % 7
        // Said on a Friday, next Friday is the one after the coming one.
        let untilNextFriday = weekday == 6 ? 14 : 4 - mondayBased + 7
        func at(_ days: Int, _ hour: Int, _ minute: Int) -> String {
            let day = calendar.date(byAdding: .day, value: days, to: today) ?? today
            return ISO8601DateFormatter().string(from: calendar.date(bySettingHour: hour, minute: minute, second: 0, of: day) ?? day)
        }
        let cases: [(String, String)] = [
            ("today", nine(0)), ("tomorrow", nine(1)), ("yesterday", nine(-1)), ("in 3 days", nine(3)), ("in 2 weeks", nine(14)),
            ("friday", nine(untilFriday)), ("next Friday", nine(untilNextFriday)),
            ("tomorrow 5:30pm", at(1, 17, 30)), ("friday 17:00", at(untilFriday, 17, 0)), ("in 3 days 17:00", at(3, 17, 0)),
            // A time alone is the next such time: today's if it is still to come.
            ("9am", calendar.component(.hour, from: Date()) < 9 ? nine(0) : nine(1)), ("12am", at(1, 0, 0)), ("tomorrow 12pm", at(1, 12, 0)),
            ("2026-12-01 17:00", "2026-12-01T17:00:00Z"), ("2026-12-01", "2026-12-01T09:00:00Z"),
            ("2026-12-01T17:00:00+01:00", "2026-12-01T16:00:00Z"), ("2026-12-01T17:00Z", "2026-12-01T17:00:00Z"),
        ]
        for (typed, expected) in cases {
            let added = try await run(["add", "due \(typed)", "--list", "Dates", "--due", typed, "--json"])
            #expect(added.stdout.contains("\"dueDate\" : \"\(expected)\""), "\(typed): \(added.stdout)\(added.stderr)")
        }
        let bad = try await run(["add", "never", "--list", "Dates", "--due", "2026-02-30"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("cannot read the date \"2026-02-30\"; accepted: today, tomorrow, yesterday, tonight, a weekday"), "\(bad.stderr)")
        #expect(try await run(["add", "late", "--list", "Dates", "--due", "2026-12-01 25:00"]).status == 1)
    }
}

extension RemindersCommandTests {
    /// Runs the command on a pseudo-terminal (`script`), typing `answer` at its prompt
    /// (nothing when it is empty).
    func runOnTerminal(_ arguments: [String], answer: String, environment: [String: String]? = nil) async throws -> Outcome {
        let command = ([try binary().path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let environment = environment ?? self.environment
        return try await ChildProcess.onThreadOfItsOwn {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", command, "/dev/null"]
            process.environment = environment
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            if !answer.isEmpty {
                // A program that exited before reading leaves no reader: the write fails with
                // EPIPE, which must not kill the test process with SIGPIPE.
                signal(SIGPIPE, SIG_IGN)
                try? input.fileHandleForWriting.write(contentsOf: Data((answer + "\n").utf8))
            }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Outcome(status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: "")
        }
    }

    @Test func destructiveCommandsSayWhatTheyRemoveAskOnATerminalAndRefuseWithoutOne() async throws {
        #expect(try await run(["lists", "add", "Groceries"]).status == 0)
        for title in ["Milk", "Bread", "Eggs"] {
            #expect(try await run(["add", title, "--list", "Groceries", "--tag", "errand"]).status == 0)
        }
        #expect(try await run(["complete", "3"]).status == 0)
        // No terminal, no --yes: refused, nothing deleted.
        let refused = try await run(["lists", "delete", "Groceries"])
        #expect(refused.status == 1)
        #expect(refused.stderr == "reminders: Delete the list \"Groceries\" and its 3 reminders? Nothing was deleted: pass --yes to confirm (there is no terminal to ask on)\n")
        let search = try await run(["search", "eggs", "--delete-completed"])
        #expect(search.status == 1 && search.stderr.contains("Delete 1 reminder, completed, matching \"eggs\"?"), "\(search.stderr)")
        let tag = try await run(["tags", "delete", "#errand"])
        #expect(tag.status == 1 && tag.stderr.contains("Delete #errand? 3 reminders carry it (the reminders stay)."), "\(tag.stderr)")
        #expect(try await run(["delete", "1"]).status == 1)
        #expect(try await run(["lists", "--json"]).stdout.contains("\"incompleteCount\" : 2"))

        // On a terminal: asked, and "n" keeps everything.
        let declined = try await runOnTerminal(["delete", "1"], answer: "n")
        #expect(declined.stdout.contains("Delete 1 reminder, \"Milk\"? [y/N]"), "\(declined.stdout)")
        #expect(declined.status == 1)
        #expect(try await run(["search", "milk", "--json"]).stdout.contains("\"title\" : \"Milk\""))
        // "y" deletes.
        let confirmed = try await runOnTerminal(["delete", "1"], answer: "y")
        #expect(confirmed.status == 0, "\(confirmed.stdout)")
        #expect(confirmed.stdout.contains("Deleted reminder 1, \""))
        // --yes does not ask.
        let tagDeleted = try await run(["tags", "delete", "ERRAND", "--yes"])
        #expect(tagDeleted.status == 0)
        #expect(tagDeleted.stdout == "Deleted #errand; 2 reminders lost it.\n")
        let listDeleted = try await run(["lists", "delete", "Groceries", "--yes"])
        #expect(listDeleted.status == 0, "\(listDeleted.stderr)")
        // A database always has a list, and says so when it makes one.
        let lastDeleted = try await run(["lists", "delete", "Reminders", "--yes"])
        #expect(lastDeleted.stdout.hasSuffix("A database always keeps a list: an empty \"Reminders\" takes its place.\n"), "\(lastDeleted.stdout)")
        #expect(try await run(["lists"]).stdout.contains("Reminders"))
    }
}

extension RemindersCommandTests {
    @Test func lookingIsNotChangingAndSaveStoresTheView() async throws {
        #expect(try await run(["lists", "add", "Books"]).status == 0)
        #expect(try await run(["add", "Zola", "--list", "Books", "--due", "2026-12-01"]).status == 0)
        #expect(try await run(["add", "Austen", "--list", "Books", "--due", "2026-12-02"]).status == 0)
        let once = try await run(["show", "Books", "--sort", "title"])
        #expect(once.stdout.hasPrefix("Books — by title, ascending (this time; --save keeps it)\n"), "\(once.stdout)")
        #expect(once.stdout.range(of: "Austen")?.lowerBound ?? once.stdout.endIndex < once.stdout.range(of: "Zola")?.lowerBound ?? once.stdout.startIndex)
        let stored = try await run(["show", "Books"])
        #expect(stored.stdout.hasPrefix("Books — by due, ascending\n"), "the call above stored nothing: \(stored.stdout)")
        #expect(try await run(["show", "Books", "--sort", "title", "--no-ascending", "--save"]).status == 0)
        let saved = try await run(["show", "Books"])
        #expect(saved.stdout.hasPrefix("Books — by title, descending\n"), "\(saved.stdout)")
    }
}

extension RemindersCommandTests {
    @Test func theScriptStartsTheBuiltCommandAtOnceWhenNothingChanged() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("scripts/reminders").path
        // The binary was just built with the tests. (A rebuild from here would wait forever
        // for the build folder's lock, which `swift test` holds while it runs.)
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: try binary().path)
        _ = try await ChildProcess.run(script, ["--version"])
        let (status, stdout, stderr) = try await ChildProcess.onThreadOfItsOwn {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: script)
            process.arguments = ["--version"]
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let errors = ChildProcess.PipeReader(err.fileHandleForReading)
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: errors.wait(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, stdout, stderr)
        }
        #expect(status == 0)
        #expect(stdout.hasPrefix("reminders "))
        #expect(stderr.isEmpty, "nothing to rebuild, nothing said: \(stderr)")
    }

    @Test func readingCommandsNeverWriteAndADatabaseOfSomethingElseIsRefusedUntouched() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-read-only-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Another application's database: one table, foo.
        let other = folder.appendingPathComponent("other.sqlite").path
        let store = try Store.sqlite(at: other)
        try await store.write { db in try db.execute("CREATE TABLE foo (x INTEGER)") }
        await store.close()
        for arguments in [["stats"], ["lists"], ["add", "x"]] {
            let refused = try await run(arguments + ["--database", other])
            #expect(refused.status == 1)
            #expect(refused.stderr == "reminders: \(other) is not a reminders database (it holds foo); name another with --database\n", "\(refused.stderr)")
        }
        let reopened = try Store.sqlite(at: other)
        let tables = try await reopened.read { db in try db.fetchAll(String.self, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY 1") }
        await reopened.close()
        #expect(tables == ["foo"], "the other database was left as it was")

        // A path that holds nothing yet: reading refuses and creates nothing; writing starts it.
        let fresh = folder.appendingPathComponent("fresh.sqlite").path
        let looked = try await run(["stats", "--database", fresh])
        #expect(looked.status == 1 && looked.stderr.hasPrefix("reminders: there is no database at \(fresh)"), "\(looked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: fresh))
        #expect(try await run(["lists", "add", "Inbox", "--database", fresh]).status == 0)
        #expect(try await run(["stats", "--database", fresh]).status == 0)

        // A folder that does not exist is not made, and an empty name is one line.
        let nowhere = folder.appendingPathComponent("no/such/folder/x.sqlite").path
        let missing = try await run(["add", "x", "--database", nowhere])
        #expect(missing.status == 1 && missing.stderr == "reminders: there is no folder \(folder.appendingPathComponent("no/such/folder").path) for the database \(nowhere)\n", "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("no").path))
        let empty = try await run(["stats", "--database", ""])
        #expect(empty.status == 1 && empty.stderr.split(separator: "\n").count == 1, "\(empty.stderr)")
    }

    @Test func orderPlacesAReminderInItsListsManualOrder() async throws {
        #expect(try await run(["lists", "add", "Chores"]).status == 0)
        for title in ["one", "two", "three"] {
            #expect(try await run(["add", title, "--list", "Chores"]).status == 0)
        }
        func manual() async throws -> [String] {
            let shown = try await run(["show", "Chores", "--sort", "manual", "--json"])
            let rows = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [[String: Any]] ?? []
            return rows.compactMap { ($0["reminder"] as? [String: Any])?["title"] as? String }
        }
        #expect(try await manual() == ["one", "two", "three"])
        #expect(try await run(["order", "3", "--before", "1"]).status == 0)
        #expect(try await manual() == ["three", "one", "two"])
        #expect(try await run(["order", "3", "--after", "2"]).status == 0)
        #expect(try await manual() == ["one", "two", "three"])
        #expect(try await run(["order", "1", "--last"]).status == 0)
        #expect(try await manual() == ["two", "three", "one"])
        let unsaid = try await run(["order", "1"])
        #expect(unsaid.status == 64, "\(unsaid.stderr)")
    }
}

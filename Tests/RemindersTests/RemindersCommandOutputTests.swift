import Foundation
import Testing
import TestSupport

extension RemindersCommandTests {
    func json(_ outcome: Outcome) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8))
    }

    @Test func jsonShowsColoursAsTheCommandTakesThemAndListPlacesFromOne() async throws {
        #expect(try await run(["lists", "add", "Groceries", "--color", "5FC94F"]).status == 0)
        let added = try json(try await run(["lists", "add", "Work", "--color", "#ED8935", "--json"])) as? [String: Any]
        #expect(added?["color"] as? String == "#ED8935FF")
        #expect(added?["position"] as? Int == 2)
        let lists = try json(try await run(["lists", "--json"])) as? [[String: Any]]
        let groceries = lists?.first?["list"] as? [String: Any]
        #expect(groceries?["title"] as? String == "Groceries")
        #expect(groceries?["color"] as? String == "#5FC94FFF")
        #expect(groceries?["position"] as? Int == 1, "the place `lists move` takes")
        // What --json says is what the command takes back.
        #expect(try await run(["lists", "recolor", "Work", "ED8935FF"]).status == 0)
        let moved = try json(try await run(["lists", "move", "Work", "1", "--json"])) as? [[String: Any]]
        #expect(moved?.compactMap { ($0["list"] as? [String: Any])?["title"] as? String } == ["Work", "Groceries"])
        #expect(moved?.compactMap { ($0["list"] as? [String: Any])?["position"] as? Int } == [1, 2])
        #expect(try await run(["add", "Oat milk", "--list", "Groceries"]).status == 0)
        let shown = try json(try await run(["show", "Groceries", "--json"])) as? [[String: Any]]
        #expect(shown?.first?["listColor"] as? String == "#5FC94FFF")
        let home = try json(try await run(["stats", "--json"])) as? [String: Any]
        let homeLists = (home?["lists"] as? [[String: Any]])?.compactMap { $0["list"] as? [String: Any] }
        #expect(homeLists?.compactMap { $0["color"] as? String } == ["#ED8935FF", "#5FC94FFF"])
    }

    @Test func aRemindersDetailShowsItsNotesInFull() async throws {
        #expect(try await run(["lists", "add", "Trips"]).status == 0)
        let added = try await run(["add", "Pack", "--list", "Trips", "--notes", "passport\nchargers, the long cable"])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("    passport\n    chargers, the long cable\n"), "\(added.stdout)")
        let detail = try await run(["detail", "1"])
        #expect(detail.status == 0, "\(detail.stderr)")
        #expect(detail.stdout.hasSuffix("Pack                 Trips\n    passport\n    chargers, the long cable\n") || detail.stdout.contains("    passport\n    chargers, the long cable\n"), "\(detail.stdout)")
        let json = try json(try await run(["detail", "1", "--json"])) as? [String: Any]
        #expect((json?["reminder"] as? [String: Any])?["notes"] as? String == "passport\nchargers, the long cable")
        #expect(json?["notesPreview"] as? String == "passport chargers, the long cable")
        #expect(try await run(["detail", "2"]).stderr == "reminders: no reminder with id 2\n")
    }

    /// The commands of the README's "Try it", in order, on a fresh database.
    @Test func theReadmesExamplesWorkOnAFreshDatabaseInOrder() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "## Try it"))
        let end = try #require(readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex))
        let commands = readme[start.upperBound..<end.lowerBound].split(separator: "\n")
            .filter { $0.hasPrefix("scripts/reminders ") }
            .map { Self.words(String($0)).dropFirst() }
        #expect(commands.count >= 8, "the README's commands: \(commands)")
        var ran = 0
        for command in commands {
            var arguments = Array(command)
            if arguments.first == "watch" { arguments += ["--count", "1"] }
            if let index = arguments.firstIndex(of: "--database"), index + 1 < arguments.count, arguments[index + 1].hasPrefix("postgres://") {
                guard PostgresTestServer.shouldRun else { continue }
                let store = try await PostgresTestServer.freshStore()
                let schema = try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
                await store.close()
                let server = try #require(PostgresTestServer.url)
                arguments[index + 1] = server + (server.contains("?") ? "&" : "?") + "search_path=\(schema)"
            }
            let outcome = try await run(arguments)
            #expect(outcome.status == 0, "reminders \(command.joined(separator: " ")): \(outcome.stderr)")
            ran += 1
        }
        #expect(ran >= commands.count - (PostgresTestServer.shouldRun ? 0 : 1))
    }

    /// Shell words: spaces split, double quotes group, `#` starts a comment.
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quoted = false
        var inWord = false
        for character in line {
            if character == "\"" {
                quoted.toggle()
                inWord = true
            } else if character == " " && !quoted {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else if character == "#" && !quoted && !inWord {
                break
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

/// A database file the command cannot write: reading commands work, the others
/// fail with one line and no SQL, and a file that is not a database is one line too.
extension RemindersCommandTests {
    /// Runs the command as an unprivileged user when the tests run as root, for
    /// whom file permissions change nothing.
    func runUnprivileged(_ arguments: [String]) async throws -> Outcome {
        guard getuid() == 0 else { return try await run(arguments) }
        var environment = self.environment
        environment["HOME"] = "/nonexistent"
        return try await run(arguments, environment: environment, through: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"])
    }

    @Test func readingCommandsWorkOnAReadOnlyDatabaseFileAndWritesFailInOneLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-readonly-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("reminders.sqlite").path
        #expect(try await run(["lists", "add", "Groceries", "--database", path]).status == 0)
        #expect(try await run(["add", "Oat milk", "--list", "Groceries", "--notes", "the barista one", "--database", path]).status == 0)
        // Read-only for everyone: the file, and the folder (no journal can be made beside it).
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path) }
        for arguments in [["stats"], ["lists"], ["show", "Groceries"], ["view", "all"], ["search", "milk"], ["detail", "1"], ["tags"]] {
            let outcome = try await runUnprivileged(arguments + ["--database", path])
            #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
            #expect(outcome.stderr.isEmpty, "\(arguments): \(outcome.stderr)")
        }
        #expect(try await runUnprivileged(["search", "milk", "--database", path]).stdout.contains("Oat milk"))
        let write = try await runUnprivileged(["add", "Bread", "--list", "Groceries", "--database", path])
        #expect(write.status == 1)
        #expect(write.stderr.hasPrefix("reminders: cannot write to \(path): the file is read-only"), "\(write.stderr)")
        #expect(write.stderr.split(separator: "\n").count == 1)
        #expect(!write.stderr.contains("sql:") && !write.stderr.contains("INSERT"), "\(write.stderr)")
    }

    @Test func aFileThatIsNotADatabaseIsOneLineWithoutSQL() async throws {
        let path = home.appendingPathComponent("notes.txt").path
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        for arguments in [["stats"], ["lists", "add", "Groceries"]] {
            let outcome = try await run(arguments + ["--database", path])
            #expect(outcome.status == 1)
            #expect(outcome.stderr == "reminders: \(path) is not a reminders database (SQLite says: file is not a database)\n", "\(outcome.stderr)")
        }
        // Nothing was written to it.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(repeating: 0x41, count: 4096))
    }
}

/// On a terminal: colour, and columns that still line up around it.
extension RemindersCommandTests {
    @Test func onATerminalColumnsLineUpAroundTheColoursAndNoColorTurnsThemOff() async throws {
        let titles: [(String, Int)] = [("日本語のメモ", 12), ("💡 idea", 7), ("e\u{301}te\u{301}", 3), ("plain", 5)]
        #expect(try await run(["lists", "add", "Wide", "--color", "5FC94F"]).status == 0)
        for (index, (title, _)) in titles.enumerated() {
            #expect(try await run(["add", title, "--list", "Wide", "--due", "2099-12-0\(index + 1)", "--priority", index == 0 ? "high" : "none"]).status == 0)
        }
        var coloured = environment
        coloured["NO_COLOR"] = nil
        let shown = try await runOnTerminal(["show", "Wide"], answer: "", environment: coloured)
        #expect(shown.status == 0, "\(shown.stdout)")
        #expect(shown.stdout.contains("\u{1B}[38;2;95;201;79m●"), "the list's colour as a 24-bit swatch: \(shown.stdout)")
        #expect(shown.stdout.contains("\u{1B}[1mWide"), "the heading in bold")
        // Far ahead: a due date already past is shown red (overdue), not blue, whatever day the suite runs.
        #expect(shown.stdout.contains("\u{1B}[34m2099-12-01 09:00\u{1B}[0m"), "due dates in blue")
        // Without the escapes, the due dates start in one column.
        let plain = shown.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
            .replacingOccurrences(of: "\r", with: "")
        var ends: [Int] = []
        for (index, (title, width)) in titles.enumerated() {
            let line = try #require(plain.split(separator: "\n").first { $0.contains(title) }, "\(plain)")
            let before = try #require(line.range(of: "2099-12-0\(index + 1)")).lowerBound
            let padding = line[..<before].reversed().prefix { $0 == " " }.count
            let prefix = line[..<before].dropLast(padding).dropLast(title.count)
            ends.append(Output.width(String(prefix)) + width + padding)
        }
        #expect(Set(ends).count == 1, "due dates start at columns \(ends):\n\(plain)")

        var environment = self.environment
        environment["NO_COLOR"] = "1"
        let uncoloured = try await runOnTerminal(["show", "Wide"], answer: "", environment: environment)
        #expect(uncoloured.status == 0)
        #expect(!uncoloured.stdout.contains("\u{1B}["), "NO_COLOR: \(uncoloured.stdout)")
    }

    /// Display widths of the prefix cells: the priority marks and symbols are one column each.
    enum Output {
        static func width(_ text: String) -> Int { text.count }
    }
}

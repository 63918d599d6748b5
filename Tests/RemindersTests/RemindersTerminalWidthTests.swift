import DepotTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Every listing of the demo, drawn on a pseudo-terminal 80 columns wide (and
/// 50 rows), with long titles, CJK and emoji added: no line is wider than the terminal.
extension RemindersCommandTests {
    /// Columns a line takes on a terminal, as the C library counts them (`wcwidth`
    /// in a UTF-8 locale): a measure independent of the command's own.
    static func terminalWidth(_ line: String) -> Int {
        _ = setlocale(LC_CTYPE, "C.UTF-8")
        var width = 0
        for scalar in line.unicodeScalars {
            width += max(0, Int(wcwidth(Int32(bitPattern: scalar.value))))
        }
        return width
    }

    /// The C library's `wcwidth` (not in Swift's Glibc module), looked up once.
    static let wcwidth: @convention(c) (Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "wcwidth") else { return { _ in -1 } }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()

    /// The command's output on a terminal of `columns` columns, its colour escapes removed.
    func drawnOnTerminal(_ arguments: [String], columns: Int) async throws -> String {
        let command = ([try binary().path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let environment = self.environment
        let data = try await ChildProcess.onThreadOfItsOwn {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", "stty cols \(columns) rows 50; " + command, "/dev/null"]
            process.environment = environment
            let output = Pipe(), input = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            withExtendedLifetime(input) {}
            return data
        }
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r", with: "")
            .replacing(/\u{1B}\[[0-9;]*m/, with: "")
    }

    @Test func everyListingOfTheDemoFitsAnEightyColumnTerminal() async throws {
        #expect(try await run(["demo"]).status == 0)
        let demo = ["--database", home.appendingPathComponent("depot-reminders/demo.sqlite").path]
        let long = "A very long title that keeps going and going, well past any width a terminal has"
        #expect(try await run(["add", long, "--list", "Groceries", "--tag", "travel", "--tag", "family", "--due", "tomorrow 9am"] + demo).status == 0)
        #expect(try await run(["add", "漢字のタイトルはとても長いですね、もっと長くしましょう", "--list", "Work", "--tag", "長いタグ"] + demo).status == 0)
        #expect(try await run(["add", "Family picnic 👩‍👩‍👧 with 🍉 and 🧺 and a long, long list of things", "--list", "Trip to Lisbon", "--flag"] + demo).status == 0)
        #expect(try await run(["lists", "add", "A list whose title is much longer than a column should be, with 漢字"] + demo).status == 0)
        let listings: [[String]] = [
            ["stats"], ["lists"], ["view", "all"], ["view", "today"], ["view", "scheduled"], ["view", "flagged"], ["view", "completed"],
            ["show", "Groceries"], ["show", "Work"], ["tagged", "travel"], ["search", "a"], ["tags"], ["tags", "picker"],
        ]
        for arguments in listings {
            let drawn = try await drawnOnTerminal(arguments + demo, columns: 80)
            let lines = drawn.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.count > 1, "\(arguments) drew: \(drawn)")
            for line in lines where Self.terminalWidth(line) > 80 {
                Issue.record("\(arguments): a line of \(Self.terminalWidth(line)) columns: \(line)")
            }
        }
        // The long title is cut, not dropped: its beginning is there, with the ellipsis.
        #expect(try await drawnOnTerminal(["view", "all"] + demo, columns: 80).contains("A very long"))
    }
}

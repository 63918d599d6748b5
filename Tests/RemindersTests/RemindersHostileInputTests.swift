import Depot
import DepotSQLite
import Foundation
import Reminders
import Testing
import TestSupport

/// Titles and notes anyone with write access could plant: huge, with escape
/// sequences, control characters, newlines, right-to-left overrides and
/// combining marks. Every listing draws them quickly, safely and on one line.
@Suite(.serialized) struct RemindersHostileInputTests {
    let commands = RemindersCommandTests()

    /// 1 MB of text with everything a terminal would obey in it.
    static let hostileTitle: String = {
        let piece = "Pay \u{1B}[31mred\u{1B}[0m bill\nline two\r\u{07}\u{7F}\u{9B}2J \u{202E}txet dessergorp\u{202C} e\u{301}\u{301} 👩‍👩‍👧 漢字 "
        return String(repeating: piece, count: 1_000_000 / piece.utf8.count + 1)
    }()

    /// A database holding a list and a reminder with hostile text (`times`
    /// megabytes of it in each field), made through the model.
    func hostileDatabase(times: Int = 1) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("hostile.sqlite").path
        let store = try Store.sqlite(at: path)
        let model = RemindersModel(store: store)
        try await model.migrate()
        _ = try await model.createList(title: "Inbox \u{1B}]0;owned\u{07}\nsecond line")
        _ = try await model.addReminder(ReminderDraft(title: Self.hostileTitle, notes: Self.hostileTitle, tags: ["tag\u{1B}[2J"]), to: "1")
        if times > 1 {
            // Longer text made by SQLite itself: the megabytes never pass through this process's Swift
            // heap, whose resident size other suites measure while this one runs.
            let repeated = Array(repeating: "\"title\"", count: times).joined(separator: " || ")
            let repeatedNotes = Array(repeating: "\"notes\"", count: times).joined(separator: " || ")
            try await store.write { db in
                try db.execute("UPDATE \"reminders\" SET \"title\" = \(unsafeRaw: repeated), \"notes\" = \(unsafeRaw: repeatedNotes)")
            }
        }
        await store.close()
        return path
    }

    /// The children's user and system time from bash's `times` (its last line
    /// on stderr: `0m0.150s 0m0.040s`), removed from `stderr`.
    static func childProcessorTime(_ stderr: inout String) throws -> Duration {
        var lines = stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        let last = lines.popLast()
        let children = try #require(last, "bash printed its times")
        _ = lines.popLast()   // the shell's own
        stderr = lines.joined(separator: "\n")
        var total = Duration.zero
        for field in children.split(separator: " ") {
            // 0m0.150s
            let parts = field.dropLast().split(separator: "m")
            let minutes = try #require(parts.first.flatMap { Double($0) }, "\(children)")
            let seconds = try #require(parts.last.flatMap { Double($0) }, "\(children)")
            total += .milliseconds(Int((minutes * 60 + seconds) * 1000))
        }
        return total
    }

    /// No byte a terminal would obey: no C0 control but the newline, no DEL, no
    /// C1 control, no bidirectional override (the output is not a terminal, so no colour either).
    static func unsafeCharacters(in text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }.prefix(5).map { String(format: "U+%04X", $0.value) }
    }

    /// Runs the command on `path` through bash, whose `times` says how much
    /// processor time it took: a measure that other work on the machine does not inflate.
    func runTimed(_ arguments: [String], on path: String) async throws -> (outcome: RemindersCommandTests.Outcome, cpu: Duration) {
        var outcome = try await commands.run(arguments + ["--database", path],
                                       through: ["/bin/bash", "-c", #"status=0; "$0" "$@" || status=$?; times >&2; exit $status"#])
        let cpu = try Self.childProcessorTime(&outcome.stderr)
        return (outcome, cpu)
    }

    @Test(arguments: [["view", "all"], ["show", "1"], ["lists"], ["stats"], ["tagged", "tag\u{1B}[2J"], ["search", "bill"], ["detail", "1"]])
    func everyListingOfAMegabyteTitleDrawsInLinearTimeAndSafely(arguments: [String]) async throws {
        let (one, four) = try await (hostileDatabase(times: 1), hostileDatabase(times: 4))
        let (outcome, cpuOne) = try await runTimed(arguments, on: one)
        #expect(outcome.status == 0, "\(outcome.stderr.prefix(300))")
        // No bound in seconds (the machine's speed and the sanitizer's would set it): four times the
        // text takes at most eight times the processor time, where drawing that is linear takes
        // four times at most and drawing that was quadratic (it took minutes) sixteen.
        let (outcomeFour, cpuFour) = try await runTimed(arguments, on: four)
        #expect(outcomeFour.status == 0, "\(outcomeFour.stderr.prefix(300))")
        print("reminders \(arguments): \(cpuOne) of processor time on 1 MB, \(cpuFour) on 4 MB")
        #expect(cpuFour < cpuOne * 8, "\(arguments) took \(cpuOne) of processor time on 1 MB, \(cpuFour) on 4 MB")
        #expect(Self.unsafeCharacters(in: outcome.stdout + outcome.stderr).isEmpty,
                "\(arguments) printed \(Self.unsafeCharacters(in: outcome.stdout + outcome.stderr))")
        if arguments != ["detail", "1"] {
            // Listings cut long cells; only `detail` and --json show the whole text.
            #expect(outcome.stdout.utf8.count < 20_000, "\(arguments) printed \(outcome.stdout.utf8.count) bytes")
            #expect(outcomeFour.stdout.utf8.count == outcome.stdout.utf8.count, "\(arguments) printed more of a longer title")
        }
    }

    @Test func eachKindOfUnsafeCharacterIsShownEscapedAndLineBreaksAsSpaces() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-escapes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("escapes.sqlite").path
        let store = try Store.sqlite(at: path)
        let model = RemindersModel(store: store)
        try await model.migrate()
        _ = try await model.createList(title: "Inbox")
        let title = "a\u{1B}b\u{9B}c\u{61C}d\u{200E}e\u{202E}f\u{2069}g\nh\ti\u{7F}j é 漢\u{200D}k"
        _ = try await model.addReminder(ReminderDraft(title: title), to: "Inbox")
        await store.close()
        let outcome = try await commands.run(["detail", "1", "--database", path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains(#"a\u{1B}b\u{9B}c\u{61C}d\u{200E}e\u{202E}f\u{2069}g h i\u{7F}j é 漢\#u{200D}k"#), "\(outcome.stdout)")
    }

    @Test func jsonKeepsTheWholeTitleEscapedAsJSON() async throws {
        let path = try await hostileDatabase()
        let outcome = try await commands.run(["view", "all", "--json", "--database", path])
        #expect(outcome.status == 0)
        let decoded = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]]
        let title = (decoded?.first?["reminder"] as? [String: Any])?["title"] as? String ?? ""
        let expected = Self.hostileTitle.trimmingCharacters(in: .whitespacesAndNewlines)
        // Compared apart from #expect, which would print a megabyte on failure.
        let same = title.unicodeScalars.elementsEqual(expected.unicodeScalars)
        #expect(same, "the title in JSON has \(title.unicodeScalars.count) scalars, stored \(expected.unicodeScalars.count)")
    }

    @Test func watchStopsSoonAfterSIGINTWhileDrawingAMegabyteTitle() async throws {
        let path = try await hostileDatabase()
        let process = Process()
        process.executableURL = try commands.binary()
        process.arguments = ["watch", "all", "--database", path]
        process.environment = commands.environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let drawn = DrawnSignal(), ended = DrawnSignal()
        process.terminationHandler = { _ in ended.set() }
        try process.run()
        // A reading thread, not a readabilityHandler (see WatchingProcess).
        let reading = output.fileHandleForReading
        Thread {
            readUntilEnd(reading) { data in
                if String(decoding: data, as: UTF8.self).contains("---") { drawn.set() }
            }
        }.start()
        defer { if process.isRunning { process.terminate() } }
        // Waits for the first drawing (the guard only ends a hung run).
        try await drawn.wait(upTo: .seconds(600))
        #expect(drawn.isSet, "watch drew nothing")
        kill(process.processIdentifier, SIGINT)
        let interrupted = ContinuousClock.now
        try await ended.wait(upTo: .seconds(600))
        // Measured from the signal, as a timeout's own test is. It stops at the drawing's next
        // check (within 0.1 s on a quiet machine); before, it ran the whole drawing out, and then
        // the next. The bound is wide so a busy machine or the thread sanitizer does not fail it.
        let stopped = (ended.time ?? .now) - interrupted
        #expect(ended.isSet && stopped < .seconds(10), "watch ended \(stopped) after SIGINT")
    }
}

/// An event a test waits for, and when it came.
private final class DrawnSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var came: ContinuousClock.Instant?
    var isSet: Bool { lock.withLock { came != nil } }
    var time: ContinuousClock.Instant? { lock.withLock { came } }
    func set() { lock.withLock { if came == nil { came = .now } } }
    /// Returns once the event came, or after `limit` (a guard against a hung run, not a measure).
    func wait(upTo limit: Duration) async throws {
        let start = ContinuousClock.now
        while !isSet, ContinuousClock.now - start < limit { try await Task.sleep(for: .milliseconds(10)) }
    }
}

import Depot
import Foundation

extension ConformanceSuite {
    /// Runs the checks whose names contain `filter` (every check when nil)
    /// against fresh stores from `makeStore`, printing one line per check
    /// (`PASS`, `SKIP` with the capability the store declares missing, `FAIL`
    /// with what differed) and a summary, as `depot-conformance` does.
    /// Returns how many checks failed: a runner exits 1 when any did.
    ///
    /// ```swift
    /// let failed = await ConformanceSuite.runPrinting(against: "MyEngine at \(url)", makeStore: { configuration in
    ///     try await MyEngine.freshStore(configuration)
    /// }, cleanUp: { await MyEngine.dropScratchDatabases() })
    /// exit(failed == 0 ? 0 : 1)
    /// ```
    ///
    /// `cleanUp` runs after each check, to remove what its stores left behind.
    public static func runPrinting(
        against target: String, notes: [String] = [], filter: String? = nil,
        makeStore: @escaping StoreFactory, cleanUp: @Sendable () async -> Void = {}
    ) async -> Int {
        let selected = checks.filter { check in filter.map { check.name.contains($0) } ?? true }
        print("Depot conformance: \(selected.count) checks against \(target)")
        for note in notes { print("  \(note)") }
        var passed = 0
        var failed = 0
        var skipped: [(name: String, capability: String)] = []
        for check in selected {
            let started = Date()
            do {
                try await check.run(using: makeStore)
                passed += 1
                print("PASS  \(check.name)  (\(Int(Date().timeIntervalSince(started) * 1000)) ms)")
            } catch let skip as ConformanceSkipped {
                skipped.append((check.name, skip.capability))
                print("SKIP  \(check.name)  (the store declares no \(skip.capability))")
            } catch {
                failed += 1
                let reason = "\(error)".replacingOccurrences(of: "\(check.name): ", with: "")
                print("FAIL  \(check.name)\n      \(reason)")
            }
            await cleanUp()
        }
        if !skipped.isEmpty {
            print("Skipped for a capability the store declares missing:")
            for (name, capability) in skipped { print("  \(capability): \(name)") }
        }
        print("\(passed) passed, \(failed) failed" + (skipped.isEmpty ? "" : ", \(skipped.count) skipped"))
        return failed
    }
}

/// What a conformance runner's command line asks: one database (a path or a
/// URL) and, with `--filter TEXT`, only the checks whose names contain TEXT.
///
/// ```swift
/// let arguments = ConformanceRunnerArguments.parse(command: "depot-conformance-myengine", usage: usage)
/// ```
public struct ConformanceRunnerArguments: Sendable {
    /// The database the checks run against.
    public let target: String
    /// The text check names must contain; nil runs every check.
    public let filter: String?

    /// Reads the process's arguments: `--help` prints `usage` and exits 0;
    /// anything but one database and an optional filter fails with exit status 2.
    public static func parse(_ arguments: [String] = Array(CommandLine.arguments.dropFirst()), command: String, usage: String) -> Self {
        var arguments = arguments
        var filter: String?
        if let index = arguments.firstIndex(of: "--filter") {
            guard index + 1 < arguments.count else { fail(command, "--filter needs a text\n\n\(usage)") }
            filter = arguments[index + 1]
            arguments.removeSubrange(index...index + 1)
        }
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            exit(0)
        }
        guard arguments.count == 1, let target = arguments.first else { fail(command, "name one database\n\n\(usage)") }
        return Self(target: target, filter: filter)
    }

    /// Prints `command: message` to standard error and exits with status 2:
    /// the database cannot be used, or the command line is wrong.
    public static func fail(_ command: String, _ message: String) -> Never {
        FileHandle.standardError.write(Data("\(command): \(message)\n".utf8))
        exit(2)
    }
}

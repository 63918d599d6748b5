import Foundation
import Testing
import TestSupport

/// Several `reminders` processes starting together on a database that does not
/// exist yet, as an app and its extension, or `watch` and `add`, do.
@Suite struct RemindersConcurrentStartTests {
    @Test func tenProcessesOpeningOneNewFileAtOnceAllSucceed() async throws {
        let commands = RemindersCommandTests()
        let binary = try commands.binary()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-concurrent-open-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var failures: [String] = []
        for round in 0..<20 {
            let path = folder.appendingPathComponent("round-\(round).sqlite").path
            let outcomes = try await withThrowingTaskGroup(of: (Int32, String).self) { group in
                for process in 0..<10 {
                    group.addTask {
                        try await ChildProcess.run(binary.path, ["add", "from process \(process)", "--database", path])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for (status, output) in outcomes where status != 0 {
                failures.append("round \(round): exit \(status): \(output)")
            }
            let listed = try await ChildProcess.run(binary.path, ["view", "all", "--json", "--database", path])
            let reminders = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]]
            #expect(reminders?.count == 10 - outcomes.filter { $0.0 != 0 }.count, "round \(round): \(listed.output.prefix(300))")
        }
        #expect(failures.isEmpty, "\(failures.count) of 200 starts failed: \(failures.prefix(3))")
    }
}

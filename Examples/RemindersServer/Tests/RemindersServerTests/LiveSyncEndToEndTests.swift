import DepotPostgres
import Foundation
import Testing

/// Live sync as a person sees it: two `reminders watch --sync` devices, one
/// on each of two `RemindersServer --sync` instances on one PostgreSQL
/// database, and a third device that edits through either instance. Every
/// edit is drawn by both watchers without anyone running `reminders sync`
/// on them: the instances hear each other's commits through PostgreSQL
/// (`LISTEN/NOTIFY`), and each watcher's long poll wakes on them.
///
/// In the serialized suite of the other end-to-end tests: each starts
/// servers and many `reminders` processes, one such test at a time. (When
/// `Device.run` still blocked a cooperative thread until its command
/// exited, two of them at once left the servers' handlers no thread on two
/// cores, and the commands' requests timed out.)
extension SyncEndToEndTests {
    @Test func watchersOnTwoServerInstancesDrawEveryEditOfAThirdDevice() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: SyncEndToEndTests.command.path),
                "build the main package first: \(SyncEndToEndTests.command.path)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let laptop = Device(database: folder.appendingPathComponent("laptop.sqlite").path)
        let phone = Device(database: folder.appendingPathComponent("phone.sqlite").path)
        let tablet = Device(database: folder.appendingPathComponent("tablet.sqlite").path)
        final class Captured: @unchecked Sendable { var configuration: PostgresConfiguration? }
        let captured = Captured()
        try await withSyncServerOnPostgres(configure: { captured.configuration = $0 }) { first, _ in
            let configuration = try #require(captured.configuration)
            try await withSyncServer(postgres: configuration, label: "sync-server-2") { second, _ in
                try await laptop.run(["lists", "add", "Groceries"])
                try await laptop.run(["add", "Milk", "--list", "Groceries"])
                try await laptop.run(["sync", "sign-up", "alice", "--server", first.absoluteString])
                try await laptop.run(["sync"])
                try await phone.run(["sync", "sign-in", "alice", "--server", second.absoluteString])
                try await phone.run(["sync"])
                try await tablet.run(["sync", "sign-in", "alice", "--server", first.absoluteString])
                try await tablet.run(["sync"])
                let watchers = [try laptop.start(["watch", "Groceries", "--sync"]), try phone.start(["watch", "Groceries", "--sync"])]
                defer {
                    for watcher in watchers where watcher.process.isRunning { watcher.process.terminate() }
                }
                for watcher in watchers { try await watcher.waitForOutput(containing: "Milk") }
                // The tablet edits through the first instance, then through the second.
                try await tablet.run(["add", "Eggs", "--list", "Groceries"])
                try await tablet.run(["sync"])
                for watcher in watchers { try await watcher.waitForOutput(containing: "Eggs") }
                try await tablet.run(["sync", "sign-out"])
                try await tablet.run(["sync", "sign-in", "alice", "--server", second.absoluteString])
                try await tablet.run(["add", "Bread", "--list", "Groceries"])
                try await tablet.run(["sync"])
                for watcher in watchers { try await watcher.waitForOutput(containing: "Bread") }
                // A watcher's own edit (another process on its file) goes out at once, and the other draws it.
                try await laptop.run(["add", "Butter", "--list", "Groceries"])
                try await watchers[1].waitForOutput(containing: "Butter")
                for watcher in watchers {
                    watcher.process.terminate()
                    _ = try await watcher.finish(within: .seconds(30))
                }
                try await tablet.run(["sync"])
                #expect(try await tablet.reminders(in: "Groceries") == ["Milk": false, "Eggs": false, "Bread": false, "Butter": false])
            }
        }
    }
}

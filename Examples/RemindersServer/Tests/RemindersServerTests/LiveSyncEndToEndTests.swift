import Depot
import DepotPostgres
import Foundation
import Logging
import RemindersServerApp
import Testing

/// Live sync as a person sees it: two `reminders watch --sync` devices, one
/// on each of two `RemindersServer --sync` instances on one PostgreSQL
/// database, and a third device that edits through either instance. Every
/// edit is drawn by both watchers without anyone running `reminders sync`
/// on them: the instances hear each other's commits through PostgreSQL
/// (`LISTEN/NOTIFY`), and each watcher's long poll wakes on them.
///
/// In the serialized suite of the other end-to-end tests: `Device.run`
/// blocks its thread until the command exits, and two such tests at once
/// on two cores left no thread for the servers' handlers (the commands'
/// requests timed out).
extension SyncEndToEndTests {
    /// A second server instance on the database `configuration` names, served over HTTP while `body` runs.
    static func withSecondInstance(_ configuration: PostgresConfiguration, _ body: (URL) async throws -> Void) async throws {
        let quiet = Logger(label: "sync-server-2") { _ in SwiftLogNoOpLogHandler() }
        let store = try await RemindersRoutes.store(postgres: configuration, logger: quiet)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let app = try await RemindersRoutes.application(store: store, port: 0, logger: quiet, sync: true,
                                                        onServerRunning: { port in listening.yield(port); listening.finish() })
        let running = Task { try await app.runService() }
        var iterator = ports.makeAsyncIterator()
        do {
            let port = try #require(await iterator.next(), "the second instance listens")
            try await body(try #require(URL(string: "http://127.0.0.1:\(port)")))
        } catch {
            running.cancel()
            _ = try? await running.value
            await store.close()
            throw error
        }
        running.cancel()
        _ = try? await running.value
        await store.close()
    }

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
            try await Self.withSecondInstance(configuration) { second in
                try laptop.run(["lists", "add", "Groceries"])
                try laptop.run(["add", "Milk", "--list", "Groceries"])
                try laptop.run(["sync", "sign-up", "alice", "--server", first.absoluteString])
                try laptop.run(["sync"])
                try phone.run(["sync", "sign-in", "alice", "--server", second.absoluteString])
                try phone.run(["sync"])
                try tablet.run(["sync", "sign-in", "alice", "--server", first.absoluteString])
                try tablet.run(["sync"])
                let watchers = [try laptop.start(["watch", "Groceries", "--sync"]), try phone.start(["watch", "Groceries", "--sync"])]
                defer {
                    for watcher in watchers where watcher.process.isRunning { watcher.process.terminate() }
                }
                for watcher in watchers { try await watcher.waitForOutput(containing: "Milk") }
                // The tablet edits through the first instance, then through the second.
                try tablet.run(["add", "Eggs", "--list", "Groceries"])
                try tablet.run(["sync"])
                for watcher in watchers { try await watcher.waitForOutput(containing: "Eggs") }
                try tablet.run(["sync", "sign-out"])
                try tablet.run(["sync", "sign-in", "alice", "--server", second.absoluteString])
                try tablet.run(["add", "Bread", "--list", "Groceries"])
                try tablet.run(["sync"])
                for watcher in watchers { try await watcher.waitForOutput(containing: "Bread") }
                // A watcher's own edit (another process on its file) goes out at once, and the other draws it.
                try laptop.run(["add", "Butter", "--list", "Groceries"])
                try await watchers[1].waitForOutput(containing: "Butter")
                for watcher in watchers {
                    watcher.process.terminate()
                    _ = try await watcher.finish(within: .seconds(30))
                }
                try tablet.run(["sync"])
                #expect(try tablet.reminders(in: "Groceries") == ["Milk": false, "Eggs": false, "Bread": false, "Butter": false])
            }
        }
    }
}

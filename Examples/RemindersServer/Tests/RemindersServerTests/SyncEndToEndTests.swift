import DepotTesting
import Foundation
import Testing

/// The whole thing a person does: a server on PostgreSQL, two `reminders`
/// processes on two SQLite files (two devices of one account), and a second
/// account a list is shared with. Runs the `reminders` executable the main
/// package built (scripts/test builds it first).
@Suite(.serialized) struct SyncEndToEndTests {
    /// The main package's `reminders`, built before these tests.
    static let command: URL = {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { root.deleteLastPathComponent() }
        return root.appendingPathComponent(".build/debug/reminders")
    }()

    struct Device {
        var database: String
        var password = "correct-horse-battery"

        /// Runs `reminders ARGUMENTS --database D`; its stdout and stderr. The
        /// process is waited for on a thread of its own: a cooperative thread
        /// blocked until it exits is one fewer for the servers' handlers (on
        /// two cores, two blocked runs left none, and the command's requests timed out).
        @discardableResult
        func run(_ arguments: [String], expecting status: Int32 = 0,
                 sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
            let (exit, stdout, stderr) = try await ChildProcess.onThreadOfItsOwn { try runWaiting(arguments) }
            #expect(exit == status, "reminders \(arguments.joined(separator: " ")): \(stdout) \(stderr)", sourceLocation: sourceLocation)
            return stdout + stderr
        }

        /// Runs the command and blocks until it exits: its status, stdout and stderr.
        private func runWaiting(_ arguments: [String]) throws -> (Int32, String, String) {
            let process = Process()
            process.executableURL = SyncEndToEndTests.command
            process.arguments = arguments + ["--database", database]
            var environment = ProcessInfo.processInfo.environment
            environment["REMINDERS_PASSWORD"] = password
            environment["NO_COLOR"] = "1"
            process.environment = environment
            let (out, err) = (Pipe(), Pipe())
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let output = out.fileHandleForReading.readDataToEndOfFile()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
        }

        /// Starts `reminders ARGUMENTS --database D` without waiting.
        func start(_ arguments: [String]) throws -> Running {
            let process = Process()
            process.executableURL = SyncEndToEndTests.command
            process.arguments = arguments + ["--database", database]
            var environment = ProcessInfo.processInfo.environment
            environment["NO_COLOR"] = "1"
            process.environment = environment
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(UUID().uuidString).txt")
            FileManager.default.createFile(atPath: output.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: output)
            try process.run()
            return Running(process: process, output: output)
        }

        /// The reminders of a list, title → completed.
        func reminders(in list: String) async throws -> [String: Bool] {
            let text = try await run(["show", list, "--completed", "--json"])
            struct Item: Decodable { var reminder: Reminder }
            struct Reminder: Decodable { var title: String; var isCompleted: Bool }
            guard let items = try? JSONDecoder().decode([Item].self, from: Data(text.utf8)) else { return [:] }
            return Dictionary(items.map { ($0.reminder.title, $0.reminder.isCompleted) }, uniquingKeysWith: { a, _ in a })
        }

        /// The titles of the lists.
        func lists() async throws -> [String] {
            let text = try await run(["lists", "--json"])
            struct Summary: Decodable { var list: List }
            struct List: Decodable { var title: String }
            return (try? JSONDecoder().decode([Summary].self, from: Data(text.utf8)))?.map(\.list.title).sorted() ?? []
        }

        /// The number this device gave a reminder of a list.
        func number(of title: String, in list: String) async throws -> String {
            let text = try await run(["show", list, "--completed", "--json"])
            struct Item: Decodable { var reminder: Reminder }
            struct Reminder: Decodable { var title: String; var number: Int64? }
            let items = try JSONDecoder().decode([Item].self, from: Data(text.utf8))
            let number = try #require(items.first { $0.reminder.title == title }?.reminder.number)
            return String(number)
        }
    }

    /// A process started by ``Device/start(_:)``.
    struct Running {
        var process: Process
        var output: URL

        /// Waits until its output holds `text` (a bound on liveness, not a timing).
        func waitForOutput(containing text: String, within limit: Duration = .seconds(120)) async throws {
            let deadline = ContinuousClock.now + limit
            while !String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self).contains(text) {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    Issue.record("no \"\(text)\" in its output within \(limit), or it exited")
                    return
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        /// Its output once it exits; a process still running after `limit` is killed and fails the test.
        func finish(within limit: Duration) async throws -> String {
            let deadline = ContinuousClock.now + limit
            while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            if process.isRunning {
                process.terminate()
                Issue.record("still running after \(limit)")
            }
            process.waitUntilExit()
            defer { try? FileManager.default.removeItem(at: output) }
            return String(decoding: try Data(contentsOf: output), as: UTF8.self)
        }
    }

    /// A laptop restored from a backup, through the real command and a real
    /// server: the restored copy is told once, goes on as a new device, and
    /// every change of both copies reaches every device. A reminder added
    /// offline to a list just unshared is not kept, and the command says so.
    @Test func aDeviceRestoredFromABackupLosesNothingAndADroppedChangeIsTold() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.command.path), "build the main package first: \(Self.command.path)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-restore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let laptop = Device(database: folder.appendingPathComponent("laptop.sqlite").path)
        let phone = Device(database: folder.appendingPathComponent("phone.sqlite").path)
        let bobs = Device(database: folder.appendingPathComponent("bob.sqlite").path, password: "bobs-own-password")
        let backup = folder.appendingPathComponent("backup.sqlite").path
        try await withSyncServerOnPostgres { server, _ in
            try await laptop.run(["lists", "add", "Groceries"])
            try await laptop.run(["add", "Milk", "--list", "Groceries"])
            try await laptop.run(["sync", "sign-up", "alice", "--server", server.absoluteString])
            try await laptop.run(["sync"])
            // The backup: the file as it is between two commands (each closes the database, folding its -wal in).
            try FileManager.default.copyItem(atPath: laptop.database, toPath: backup)
            try await laptop.run(["add", "After the backup", "--list", "Groceries"])
            try await laptop.run(["sync"])
            // Restored: the laptop's file is the backup again; it adds a reminder and syncs.
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: laptop.database + suffix) }
            try FileManager.default.copyItem(atPath: backup, toPath: laptop.database)
            try await laptop.run(["add", "On the restored laptop", "--list", "Groceries"])
            let restored = try await laptop.run(["sync"])
            #expect(restored.contains("restored from a backup or copied"), "\(restored)")
            #expect(!(try await laptop.run(["sync"])).contains("restored"), "told once")
            try await phone.run(["sync", "sign-in", "alice", "--server", server.absoluteString])
            try await phone.run(["sync"])
            let all = ["Milk": false, "After the backup": false, "On the restored laptop": false]
            #expect(try await phone.reminders(in: "Groceries") == all, "every change of both copies")
            #expect(try await laptop.reminders(in: "Groceries") == all)

            // Bob adds a reminder offline to a list alice stops sharing: told at his sync, not silently gone.
            try await bobs.run(["sync", "sign-up", "bob", "--server", server.absoluteString])
            try await laptop.run(["sync", "share", "Groceries", "--with", "bob"])
            try await bobs.run(["sync"])
            try await bobs.run(["add", "Bread", "--list", "Groceries"])
            try await laptop.run(["sync", "unshare", "Groceries", "--with", "bob"])
            let dropped = try await bobs.run(["sync"])
            #expect(dropped.contains("sent 0 changes"), "\(dropped)")
            #expect(dropped.contains("Not kept: a reminder changed here in a list that is no longer shared with you"), "\(dropped)")
            #expect(try await bobs.lists() == [])
        }
    }

    @Test func twoDevicesAndASecondAccountSyncThroughTheServer() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.command.path), "build the main package first: \(Self.command.path)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let laptop = Device(database: folder.appendingPathComponent("laptop.sqlite").path)
        let phone = Device(database: folder.appendingPathComponent("phone.sqlite").path)
        let bobs = Device(database: folder.appendingPathComponent("bob.sqlite").path, password: "bobs-own-password")

        // Offline first: the command works and says sync is not set up.
        try await laptop.run(["lists", "add", "Groceries"])
        try await laptop.run(["add", "Milk", "--list", "Groceries", "--tag", "errand"])
        let offline = try await laptop.run(["sync"], expecting: 1)
        #expect(offline.contains("not signed in"), "\(offline)")

        try await withSyncServerOnPostgres { server, _ in
            try await laptop.run(["sync", "sign-up", "alice", "--server", server.absoluteString])
            try await laptop.run(["sync"])
            try await phone.run(["sync", "sign-in", "alice", "--server", server.absoluteString])
            try await phone.run(["sync"])
            #expect(try await phone.reminders(in: "Groceries") == ["Milk": false], "a reminder added on one device appears on the other")
            // A wrong password at sign-in is said as such, not as a device the server forgot.
            let stranger = Device(database: folder.appendingPathComponent("stranger.sqlite").path, password: "not-alices-password")
            let refused = try await stranger.run(["sync", "sign-in", "alice", "--server", server.absoluteString], expecting: 1)
            #expect(refused.contains("does not know that name with that password"), "\(refused)")
            #expect(!refused.contains("does not know this device"), "\(refused)")

            // Offline edits on both: another column on each merges; one column on both: the later edit wins.
            let onLaptop = try await laptop.number(of: "Milk", in: "Groceries"), onPhone = try await phone.number(of: "Milk", in: "Groceries")
            try await laptop.run(["complete", onLaptop])
            try await laptop.run(["edit", onLaptop, "--title", "Milk, 2%"])
            try await phone.run(["edit", onPhone, "--title", "Oat milk"])   // later: wins
            let status = try await phone.run(["sync", "--status"])
            #expect(status.contains("1 change to send"), "\(status)")
            for device in [laptop, phone, laptop] { try await device.run(["sync"]) }
            #expect(try await laptop.reminders(in: "Groceries") == ["Oat milk": true])
            #expect(try await phone.reminders(in: "Groceries") == ["Oat milk": true], "both converge: the later title, and the completion")

            // Another account sees nothing, until a list is shared with it; then it leaves when unshared.
            try await bobs.run(["lists", "add", "Garage"])
            try await bobs.run(["sync", "sign-up", "bob", "--server", server.absoluteString])
            try await bobs.run(["sync"])
            #expect(try await bobs.lists() == ["Garage"])
            try await laptop.run(["sync", "share", "Groceries", "--with", "bob"])
            try await bobs.run(["sync"])
            #expect(try await bobs.lists() == ["Garage", "Groceries"])
            #expect(try await bobs.reminders(in: "Groceries") == ["Oat milk": true])
            try await bobs.run(["add", "Bread", "--list", "Groceries"])
            try await bobs.run(["sync"])
            // A watch on the phone redraws when a sync in another process brings bob's reminder.
            let watch = try phone.start(["watch", "Groceries", "--count", "2"])
            // Its first drawing (ended by a line of dashes) before the sync, so the second has Bread.
            try await watch.waitForOutput(containing: "---")
            try await phone.run(["sync"])
            let drawn = try await watch.finish(within: .seconds(20))
            #expect(drawn.components(separatedBy: "Bread").count == 2, "the second drawing has it: \(drawn)")
            #expect(try await phone.reminders(in: "Groceries") == ["Oat milk": true, "Bread": false], "bob's reminder reached alice's phone")
            try await laptop.run(["sync", "unshare", "Groceries", "--with", "bob"])
            try await bobs.run(["sync"])
            #expect(try await bobs.lists() == ["Garage"], "unshared: gone from bob's device")
            #expect(try await laptop.lists() == ["Groceries"])
            #expect(try await phone.lists() == ["Groceries"], "alice never sees bob's own list")

            // A device signed out from the server is told to sign in again; its reminders stay.
            try await phone.run(["sync", "sign-out"])
            let signedOut = try await phone.run(["sync"], expecting: 1)
            #expect(signedOut.contains("not signed in"), "\(signedOut)")
            #expect(try await phone.reminders(in: "Groceries").count == 2)
        }
        // The server is gone: the command says it works offline and keeps the change.
        try await laptop.run(["add", "Eggs", "--list", "Groceries"])
        let down = try await laptop.run(["sync"], expecting: 1)
        #expect(down.contains("working offline: changes stay on this device"), "\(down)")
        #expect(try await laptop.run(["sync", "--status"]).contains("1 change to send"))
    }
}

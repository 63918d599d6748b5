import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
import Testing
import TestSupport

/// Clients on SQLite files and a server on PostgreSQL, edits made offline on
/// each client, syncs at random moments through a transport that loses
/// requests and answers and delivers twice: once everyone syncs until quiet,
/// every replica equals the server.
@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct SyncConvergenceTests {
    static let tables = SyncReplicaTests.tables

    static func server() async throws -> SyncServer {
        let store = try await PostgresTestServer.freshStore()
        try await store.write { db in
            try db.execute("CREATE TABLE \"syncNotes\" (\"id\" uuid PRIMARY KEY, \"title\" text NOT NULL, \"body\" text, \"rank\" bigint NOT NULL)")
            try SyncServer.installSyncServer(in: db)
        }
        return SyncServer(store: store, tables: tables)
    }

    @Test func clientsAndTheServerConvergeThroughAFaultyTransport() async throws {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let operations = ProcessInfo.processInfo.environment["DEPOT_SYNC_OPERATIONS"].flatMap { Int($0) } ?? 1_500
        print("SyncConvergenceTests: seed \(seed), \(operations) operations (replay with DEPOT_SYNC_SEED=\(seed))")
        var g = SeededGenerator(seed: seed)
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server()
        let transport = InProcessSyncTransport(server: server, seed: seed)
        var faults = InProcessSyncTransport.Faults()
        (faults.dropRequest, faults.dropAnswer, faults.duplicate) = (0.1, 0.15, 0.1)
        transport.faults = faults
        var clients: [SyncClient] = []
        for name in ["laptop", "phone", "tablet"] {
            var client = SyncClient(store: try await SyncReplicaTests.replica(folder, name), tables: Self.tables, transport: transport)
            client.pageSize = 3   // pushes and pulls of several pages
            clients.append(client)
        }
        let ids = (0..<12).map { _ in UUID() }
        var (syncs, lost, backwards) = (0, 0, 0)
        /// The node's clock: it must move forward with every write that changed a row, even within a millisecond.
        func clock(_ store: Store) async throws -> Int64 {
            try await store.read { db in try db.fetchOne(Int64.self, "SELECT \"hlc\" FROM \"depot_sync_state\"") ?? 0 }
        }
        for step in 0..<operations {
            let client = g.pick(clients), store = client.store, id = g.pick(ids)
            let before = try await clock(store)
            var changed = false
            let title = g.pick(["Milk", "Bread", "Eggs", "Tea", "Café"]) + " \(step)", rank = Int.random(in: 0...3, using: &g)
            switch Int.random(in: 0..<12, using: &g) {
            case 0...3:
                changed = try await store.write { db in
                    guard try db.find(SyncNote.self, id: id) == nil else { return false }
                    try db.insert(SyncNote(id: id, title: title, body: nil, rank: rank))
                    return true
                }
            case 4...6:
                changed = try await store.write { db in
                    try db.execute("UPDATE \"syncNotes\" SET \"title\" = \(title) WHERE \"id\" = \(id.uuidString.lowercased())") > 0
                }
            case 7:
                let body: String? = g.chance(2) ? "note \(step)" : nil
                changed = try await store.write { db in
                    try db.execute("""
                        UPDATE "syncNotes" SET "rank" = \(rank), "body" = \(body)
                        WHERE "id" = \(id.uuidString.lowercased()) AND ("rank" IS NOT \(rank) OR "body" IS NOT \(body))
                        """) > 0
                }
            case 8:
                try await store.write { db in _ = try db.delete(SyncNote.self, id: id) }
            default:
                syncs += 1
                do { try await client.sync() } catch is InProcessSyncTransport.Lost { lost += 1 }
            }
            let after = try await clock(store)
            if after < before || (changed && after == before) { backwards += 1 }
        }
        #expect(backwards == 0, "seed \(seed): a device's clock did not move forward with \(backwards) of its writes")
        // Quiet: no faults, everyone syncs until nothing is pending and everyone has pulled everything.
        transport.faults = InProcessSyncTransport.Faults()
        for _ in 0..<2 {
            for client in clients { try await client.sync() }
        }
        for client in clients { #expect(try await client.pendingCount() == 0) }
        // Exactly once: every push a client had acknowledged was applied once, retries and duplicates included.
        let counts = try await server.pushCounts()
        for client in clients {
            let node = try await client.store.read { db in try db.sync.node() }
            let pushed = try await client.store.read { db in try db.fetchOne(Int64.self, "SELECT \"pushed\" FROM \"depot_sync_state\"") ?? 0 }
            let count = counts[node]
            #expect(count?.lastPush == pushed && count?.applied == pushed, "seed \(seed): \(pushed) pushes acknowledged, the server says \(String(describing: count))")
        }
        let onServer = try await server.store.read { db in try db.fetchAll(SyncNote.self, "SELECT * FROM \"syncNotes\" ORDER BY \"id\"::text") }
        for client in clients {
            let local = try await client.store.read { db in try db.fetchAll(SyncNote.self, "SELECT * FROM \"syncNotes\" ORDER BY \"id\"") }
            #expect(local == onServer, "seed \(seed): a client differs from the server")
        }
        print("SyncConvergenceTests: \(syncs) syncs, \(lost) lost in transit, \(onServer.count) notes at the end, \(transport.bytes) bytes on the wire")
        for client in clients { await client.store.close() }
        await server.store.close()
    }
}

extension SyncConvergenceTests {
    @Test func anObservationOfAReplicaWakesWhenAPullBringsAnotherDevicesChange() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server()
        let transport = InProcessSyncTransport(server: server, seed: 1)
        let phone = SyncClient(store: try await SyncReplicaTests.replica(folder, "phone"), tables: Self.tables, transport: transport)
        let laptop = SyncClient(store: try await SyncReplicaTests.replica(folder, "laptop"), tables: Self.tables, transport: transport)
        try await laptop.store.write { db in try db.enableObservation(of: ["syncNotes"]) }
        let titles = laptop.store.observe { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \"syncNotes\" ORDER BY \"title\"") }
        let values = titles.makeAsyncIterator()
        #expect(try await ObservationWait.next(values) == [])
        try await phone.store.write { db in try db.insert(SyncNote(id: UUID(), title: "Milk", body: nil, rank: 1)) }
        try await phone.sync()
        try await laptop.sync()
        #expect(try await ObservationWait.next(values, "after the pull") == ["Milk"])
        await phone.store.close()
        await laptop.store.close()
        await server.store.close()
    }
}

extension SyncConvergenceTests {
    /// The URL a probe reaches `server`'s schema by.
    static func probeURL(of server: SyncServer) async throws -> String {
        let schema = try await server.store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") } ?? ""
        let base = try #require(PostgresTestServer.url)
        return base + (base.contains("?") ? "&" : "?") + "search_path=\(schema)"
    }

    /// The probe built beside the tests.
    static func probe() throws -> URL {
        let folder = try #require(Bundle.main.executableURL?.deletingLastPathComponent())
        return try #require([folder, folder.deletingLastPathComponent()].map { $0.appendingPathComponent("DepotSyncProbe") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }, "DepotSyncProbe is built beside the tests")
    }

    /// Two probe processes write and sync at once and are killed with SIGKILL
    /// at random moments, inside writes, pushes and pulls, and restarted. Then
    /// each replica syncs until quiet: both equal the server, nothing is left
    /// pending, and the server applied each acknowledged push once.
    @Test func clientsKilledMidSyncAndRestartedLoseNothingAndConverge() async throws {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max / 2)
        print("SyncConvergenceTests (kills): seed \(seed) (replay with DEPOT_SYNC_SEED=\(seed))")
        var g = SeededGenerator(seed: seed)
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server()
        let url = try await Self.probeURL(of: server)
        let paths = ["a", "b"].map { folder.appendingPathComponent("probe-\($0).sqlite").path }
        var kills = 0
        for round in 0..<8 {
            let processes = try paths.enumerated().map { index, path in
                let process = Process()
                process.executableURL = try Self.probe()
                process.arguments = [path, url, String(seed &+ UInt64(round * 2 + index))]
                let output = Pipe(), errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                try process.run()
                return (process, errors, output)
            }
            // Each probe says "ready" once its replica exists; then it writes and syncs until killed.
            for (process, _, output) in processes {
                let reading = output.fileHandleForReading
                let ready = try await ChildProcess.onThreadOfItsOwn { reading.availableData }
                #expect(String(decoding: ready, as: UTF8.self).contains("ready") || !process.isRunning, "seed \(seed): the probe started")
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 100...700, using: &g)))
            for (process, errors, _) in processes {
                if process.isRunning {
                    kill(process.processIdentifier, SIGKILL)
                    kills += 1
                }
                try await ChildProcess.onThreadOfItsOwn { process.waitUntilExit() }
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(process.terminationReason == .uncaughtSignal, "seed \(seed): the probe stopped by itself: \(message)")
            }
        }
        // Recovery: each replica, as it was left, syncs until quiet.
        let transport = InProcessSyncTransport(server: server, seed: seed)
        var clients: [SyncClient] = []
        for path in paths { clients.append(SyncClient(store: try Store.sqlite(at: path), tables: Self.tables, transport: transport)) }
        for _ in 0..<2 {
            for client in clients { try await client.sync() }
        }
        let onServer = try await server.store.read { db in try db.fetchAll(SyncNote.self, "SELECT * FROM \"syncNotes\" ORDER BY \"id\"::text") }
        let counts = try await server.pushCounts()
        for client in clients {
            #expect(try await client.pendingCount() == 0)
            let local = try await client.store.read { db in try db.fetchAll(SyncNote.self, "SELECT * FROM \"syncNotes\" ORDER BY \"id\"") }
            #expect(local == onServer, "seed \(seed): a replica differs from the server after recovery")
            let node = try await client.store.read { db in try db.sync.node() }
            let pushed = try await client.store.read { db in try db.fetchOne(Int64.self, "SELECT \"pushed\" FROM \"depot_sync_state\"") ?? 0 }
            #expect(counts[node]?.applied == pushed && counts[node]?.lastPush == pushed, "seed \(seed): pushes applied once")
            await client.store.close()
        }
        print("SyncConvergenceTests (kills): \(kills) kills, \(onServer.count) notes on the server")
        #expect(kills >= 12, "the probes were killed while running")
        await server.store.close()
    }
}

extension SyncConvergenceTests {
    /// A probe whose test process is gone (killed: no chance to stop its
    /// children) ends by itself, instead of writing and syncing on.
    @Test func aProbeEndsWhenTheProcessThatStartedItIsGone() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server()
        let url = try await Self.probeURL(of: server)
        // A shell starts the probe and waits for it: the shell stands for a test process.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "\"$0\" \"$1\" \"$2\" 1 & echo \"pid $!\"; wait", try Self.probe().path,
                           folder.appendingPathComponent("orphan.sqlite").path, url]
        let output = Pipe()
        shell.standardOutput = output
        try shell.run()
        let reading = output.fileHandleForReading
        var said = ""
        while !(said.contains("pid ") && said.contains("ready")) {
            let data = try await ChildProcess.onThreadOfItsOwn { reading.availableData }
            guard !data.isEmpty else { break }
            said += String(decoding: data, as: UTF8.self)
        }
        let pid = try #require(said.split(separator: "\n").first { $0.hasPrefix("pid ") }.flatMap { Int32($0.dropFirst(4)) }, "the shell said \(said)")
        #expect(said.contains("ready"), "the probe started: \(said)")
        #expect(Self.runs(pid), "the probe runs while the shell does")
        kill(shell.processIdentifier, SIGKILL)
        // The ends are what this waits for; the bound only stops a hang. (Not waitUntilExit: Foundation
        // learns of the shell's end through a descriptor the probe inherited, so it waits for the probe too.)
        let start = ContinuousClock.now
        while Self.runs(shell.processIdentifier) || Self.runs(pid), ContinuousClock.now - start < .seconds(60) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let ran = Self.runs(pid)
        if ran { kill(pid, SIGKILL) }
        #expect(!ran, "the probe went on after the process that started it was killed")
        try await ChildProcess.onThreadOfItsOwn { shell.waitUntilExit() }
        await server.store.close()
    }

    /// Whether the process runs (a zombie, ended and not reaped yet, does not).
    static func runs(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].dropFirst(2).hasPrefix("Z")
    }
}

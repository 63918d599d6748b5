import Depot
import DepotSQLite
import DepotSync
import Foundation
import Reminders
import Testing

/// A transport that times each request and counts failures, for the figures.
final class TimedTransport: SyncTransport, @unchecked Sendable {
    let inner: HTTPSyncTransport
    let recorder: LoadRecorder
    init(_ inner: HTTPSyncTransport, _ recorder: LoadRecorder) {
        self.inner = inner
        self.recorder = recorder
    }
    func push(_ push: SyncPush) async throws -> SyncPushAnswer { try await timed { try await inner.push(push) } }
    func pull(_ pull: SyncPull) async throws -> SyncPage { try await timed { try await inner.pull(pull) } }
    private func timed<T>(_ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        do {
            let answer = try await body()
            recorder.record(ContinuousClock.now - start)
            return answer
        } catch {
            recorder.fail(error)
            throw error
        }
    }
}

/// Request latencies and failures of every client.
final class LoadRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var latencies: [Duration] = []
    private var failures: [String] = []
    func record(_ latency: Duration) { lock.withLock { latencies.append(latency) } }
    func fail(_ error: any Error) { lock.withLock { failures.append("\(error)") } }
    var snapshot: (latencies: [Duration], failures: [String]) { lock.withLock { (latencies, failures) } }
}

/// 50 clients (10 accounts of 5 devices) syncing against the server on
/// PostgreSQL over loopback for 30 seconds (DEPOT_SYNC_LOAD_SECONDS), each
/// adding and completing its own reminders between syncs: no request fails,
/// no change is lost, and every device of an account ends equal.
@Suite struct SyncLoadTests {
    struct Client {
        var account: Int
        var model: RemindersModel
        var client: SyncClient
        var list: String
    }

    @Test func fiftyClientsSyncingForThirtySecondsLoseNothing() async throws {
        let seconds = ProcessInfo.processInfo.environment["DEPOT_SYNC_LOAD_SECONDS"].flatMap(Double.init) ?? 30
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withSyncServerOnPostgres { server, _ in
            let recorder = LoadRecorder()
            var clients: [Client] = []
            for account in 0..<10 {
                for device in 0..<5 {
                    let made = try await HTTPDevice.make(server, folder: folder, prefix: "account", account: account, device: device)
                    let transport = TimedTransport(HTTPSyncTransport(base: server.appendingPathComponent("sync"), token: made.token), recorder)
                    var client = try made.model.syncClient(transport: transport)
                    client.pageSize = 200
                    clients.append(Client(account: account, model: made.model, client: client, list: made.list))
                }
            }
            let deadline = ContinuousClock.now + .seconds(seconds)
            let start = ContinuousClock.now
            // Each client: add a reminder, sometimes complete one of its own, sync; until the deadline.
            let written = try await withThrowingTaskGroup(of: (Int, [String: Bool]).self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        var mine: [String: Bool] = [:], numbers: [String: Int64] = [:], step = 0
                        while ContinuousClock.now < deadline {
                            step += 1
                            let title = "r\(index)-\(step)"
                            let added = try await client.model.addReminder(ReminderDraft(title: title), to: client.list)
                            mine[title] = false
                            numbers[title] = added.reminder.number
                            if step % 3 == 0, let pick = mine.keys.sorted().dropLast().randomElement(), let number = numbers[pick] {
                                let done = !(mine[pick] ?? false)
                                try await client.model.complete(number, done)
                                mine[pick] = done
                            }
                            try await client.client.sync()
                        }
                        return (client.account, mine)
                    }
                }
                var byAccount: [Int: [String: Bool]] = [:]
                for try await (account, mine) in group { byAccount[account, default: [:]].merge(mine) { a, _ in a } }
                return byAccount
            }
            let elapsed = ContinuousClock.now - start
            // Quiet: two rounds of syncs bring every device up to date.
            for _ in 0..<2 { for client in clients { try await client.client.sync() } }
            let (latencies, failures) = recorder.snapshot
            #expect(failures.isEmpty, "\(failures.count) failed requests, first: \(failures.first ?? "")")
            for client in clients {
                let held = try await client.model.store.read { db in
                    try db.fetchAll(Reminder.all).map { ($0.title, $0.isCompleted) }
                }
                let state = Dictionary(held, uniquingKeysWith: { a, _ in a })
                #expect(state == written[client.account] ?? [:], "device of account \(client.account): every change, nothing else")
            }
            let sorted = latencies.sorted()
            let p99 = sorted.isEmpty ? .zero : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let changes = written.values.reduce(0) { $0 + $1.count }
            print("SyncLoadTests: 50 clients, \(String(format: "%.1f", seconds)) s, \(latencies.count) requests, "
                  + "\(String(format: "%.1f", Double(latencies.count) / seconds)) requests/s, p99 \(p99), p50 \(sorted.isEmpty ? .zero : sorted[sorted.count / 2]), "
                  + "\(changes) reminders written, \(failures.count) errors")
        }
    }
}

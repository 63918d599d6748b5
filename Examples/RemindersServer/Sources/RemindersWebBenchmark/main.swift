// The web app with 50,000 reminders: how long each page takes to be served,
// end to end over HTTP on loopback (the request, the session's lookup, the
// reads, the markup), on SQLite and, when DEPOT_POSTGRES_URL names a server,
// on PostgreSQL.
//
//     swift run -c release --package-path Examples/RemindersServer RemindersWebBenchmark
//
// One account holds one list of 25,000 reminders and 25 lists of 1,000, with
// ten tags, due dates, flags and done ones spread through them; each page is
// fetched 5 times to warm up, then 30 times, and its median and slowest time
// are printed. The seeding goes through the sync server's edits, as a web
// form's does, so every row is in the sync log.
import Depot
import DepotPostgres
import DepotSync
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Reminders
import RemindersServerApp

let quiet = Logger(label: "benchmark") { _ in SwiftLogNoOpLogHandler() }
let environment = ProcessInfo.processInfo.environment
let total = Int(environment["DEPOT_WEB_BENCHMARK_REMINDERS"] ?? "") ?? 50_000

/// What stopped the benchmark, said in one line.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

struct Timing {
    var page: String
    var bytes: Int
    /// How many reminders the page shows.
    var rows: Int
    var median: Double
    var slowest: Double
}

/// Sends a request with the session cookie; the answer's status and body.
func fetch(_ url: URL, method: String = "GET", cookie: String? = nil, form: String? = nil) async throws -> (Int, Data) {
    var request = URLRequest(url: url, timeoutInterval: 120)
    request.httpMethod = method
    if let cookie { request.setValue("depot_session=\(cookie)", forHTTPHeaderField: "Cookie") }
    if let form {
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(form.utf8)
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

func run(on store: Store, engine: String) async throws -> [Timing] {
    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    let app = try await RemindersRoutes.application(store: store, port: 0, logger: quiet, sync: true,
                                                    onServerRunning: { port in listening.yield(port); listening.finish() })
    let running = Task { try await app.runService() }
    defer { running.cancel() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next(), let base = URL(string: "http://127.0.0.1:\(port)") else { throw Failure("the server did not start") }

    // An account made through the sync API: its device token is what the web app's session cookie holds.
    var signUp = URLRequest(url: base.appendingPathComponent("sync/accounts"))
    signUp.httpMethod = "POST"
    signUp.setValue("application/json", forHTTPHeaderField: "Content-Type")
    signUp.httpBody = Data(#"{"name": "bench", "password": "correct horse battery"}"#.utf8)
    let (answer, response) = try await URLSession.shared.data(for: signUp)
    struct Session: Decodable { var token: String }
    guard (response as? HTTPURLResponse)?.statusCode == 201 || (response as? HTTPURLResponse)?.statusCode == 200,
          let cookie = try? JSONDecoder().decode(Session.self, from: answer).token else {
        throw Failure("the sign-up answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
    }
    let account = try await store.read { db in try db.fetchOne(String.self, "SELECT \"id\" FROM \"syncAccounts\" WHERE \"name\" = 'bench'") } ?? ""

    // The account's data, through the server's edits (one version of the log each batch).
    let server = try RemindersModel(store: store).syncServer()
    let namespace = UUID(uuidString: account) ?? Tag.modelNamespace
    let tags = (0..<10).map { Tag(title: "tag\($0)", namespace: namespace) }
    let big = RemindersList(title: "Inbox", position: 0)
    let lists = [big] + (1...25).map { RemindersList(title: "List \($0)", position: $0 * 1024) }
    let clock = ContinuousClock()
    let seeding = clock.now
    try await server.edit(lists.map { .save($0) } + tags.map { .save($0) }, account: account)
    let now = Date()
    var batch: [SyncEdit] = []
    var tagged: (reminder: UUID, list: UUID)?
    for index in 0..<total {
        let list = index < total / 2 ? big : lists[1 + index % 25]
        let reminder = Reminder(title: "Reminder \(index) about something to do", notes: index % 7 == 0 ? "Some notes for \(index)" : "",
                                isCompleted: index % 5 == 0, isFlagged: index % 11 == 0, priority: Priority(rawValue: index % 4) ?? .none,
                                dueDate: index % 3 == 0 ? now.addingTimeInterval(Double(index % 20 - 5) * 86_400) : nil,
                                position: index * 1024, remindersListID: list.id)
        batch.append(.save(reminder))
        if index % 4 == 0 { batch.append(.save(ReminderTag(reminderID: reminder.id, tagID: tags[(index / 4) % 10].id))) }
        if index == total / 2 + 1 { tagged = (reminder.id, list.id) }
        if batch.count >= 2_000 {
            try await server.edit(batch, account: account)
            batch.removeAll(keepingCapacity: true)
        }
    }
    if !batch.isEmpty { try await server.edit(batch, account: account) }
    print("\(engine): \(total) reminders in \(lists.count) lists seeded through the server's edits in \(String(format: "%.1f", milliseconds(clock.now - seeding) / 1000)) s")

    let key = { (id: UUID) in id.uuidString.lowercased() }
    var pages: [(String, String)] = [
        ("home", "web"),
        ("a list of 25,000 (first page)", "web/lists/\(key(big.id))"),
        ("a list of 25,000 (page 50)", "web/lists/\(key(big.id))?from=15000"),
        ("a list of 1,000", "web/lists/\(key(lists[1].id))"),
        ("tag page", "web/tags/\(key(tags[3].id))"),
        ("search \"something 1234\"", "web/search?q=something%201234"),
        ("search \"rem\"", "web/search?q=rem"),
    ]
    for smart in ["today", "scheduled", "all", "flagged", "completed"] { pages.append(("smart list \(smart)", "web/smart/\(smart)")) }
    if let tagged { pages.append(("a reminder", "web/reminders/\(key(tagged.reminder))")) }

    var timings: [Timing] = []
    for (name, path) in pages {
        guard let url = URL(string: path, relativeTo: base) else { continue }
        var times: [Double] = [], bytes = 0, rows = 0
        for round in 0..<35 {
            let start = clock.now
            let (status, body) = try await fetch(url, cookie: cookie)
            let elapsed = milliseconds(clock.now - start)
            guard status == 200 else {
                throw Failure("\(name): status \(status)")
            }
            bytes = body.count
            rows = String(decoding: body, as: UTF8.self).components(separatedBy: "<a class=\"title\"").count - 1
            if round >= 5 { times.append(elapsed) }
        }
        times.sort()
        timings.append(Timing(page: name, bytes: bytes, rows: rows, median: times[times.count / 2], slowest: times[times.count - 1]))
    }
    return timings
}

func report(_ engine: String, _ timings: [Timing]) {
    func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
    print("\n\(engine), \(total) reminders:")
    print("  " + "page".padding(toLength: 32, withPad: " ", startingAt: 0) + column("reminders", 10) + column("bytes", 10) + column("median ms", 11) + column("slowest ms", 11))
    for timing in timings {
        print("  " + timing.page.padding(toLength: 32, withPad: " ", startingAt: 0) + column(String(timing.rows), 10) + column(String(timing.bytes), 10)
              + column(String(format: "%.1f", timing.median), 11) + column(String(format: "%.1f", timing.slowest), 11))
    }
    let worst = timings.map(\.slowest).max() ?? 0
    print("  slowest of all: \(String(format: "%.1f", worst)) ms (the bound is 200 ms)")
}

func main() async throws {
let path = FileManager.default.temporaryDirectory.appendingPathComponent("depot-web-benchmark-\(UUID().uuidString).sqlite").path
do {
    let store = try await RemindersRoutes.store(path, logger: quiet)
    report("SQLite", try await run(on: store, engine: "SQLite"))
    await store.close()
}
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

if let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty {
    var configuration = try PostgresConfiguration(url: url)
    let schema = "web_benchmark_" + UUID().uuidString.prefix(8).lowercased()
    let admin = try await Store.postgres(configuration)
    try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
    configuration.searchPath = schema
    do {
        let store = try await RemindersRoutes.store(postgres: configuration, logger: quiet)
        report("PostgreSQL", try await run(on: store, engine: "PostgreSQL"))
        await store.close()
    } catch {
        print("PostgreSQL: \(error)")
    }
    try? await admin.write { db in try db.execute("DROP SCHEMA \(ident: schema) CASCADE") }
    await admin.close()
}
}

do {
    try await main()
} catch {
    print("the benchmark stopped: \(error)")
    exit(1)
}

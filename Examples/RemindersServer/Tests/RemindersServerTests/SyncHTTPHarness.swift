import Depot
import DepotPostgres
import DepotSQLite
import DepotSync
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Logging
import Reminders
import RemindersServerApp
import Testing

/// The sync server (`--sync`) on a real loopback port, on a PostgreSQL schema
/// of its own, for the length of `body`. In CI the PostgreSQL server must be
/// there (scripts/test starts one): a missing one fails.
func withSyncServerOnPostgres(configure: (inout PostgresConfiguration) -> Void = { _ in },
                              _ body: @Sendable (URL, Store) async throws -> Void) async throws {
    try await withScratchPostgresSchema("sync_http_") { configuration in
        var configuration = configuration
        configuration.maxConnections = 8
        configure(&configuration)
        try await withSyncServer(postgres: configuration, label: "sync-server", body)
    }
}

/// Runs `body` with the test's PostgreSQL (`DEPOT_POSTGRES_URL`) in a schema
/// of its own, dropped afterwards; nothing without a server, except in CI,
/// where a missing server fails the test.
func withScratchPostgresSchema(_ prefix: String, _ body: (PostgresConfiguration) async throws -> Void) async throws {
    let environment = ProcessInfo.processInfo.environment
    guard let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty else {
        #expect(environment["CI"] != "true", "CI must name a PostgreSQL server (DEPOT_POSTGRES_URL)")
        return
    }
    var configuration = try PostgresConfiguration(url: url)
    let schema = prefix + UUID().uuidString.prefix(8).lowercased()
    let admin = try await Store.postgres(configuration)
    try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
    configuration.searchPath = schema
    do {
        try await body(configuration)
    } catch {
        try? await admin.write { db in try db.execute("DROP SCHEMA \(ident: schema) CASCADE") }
        await admin.close()
        throw error
    }
    try? await admin.write { db in try db.execute("DROP SCHEMA \(ident: schema) CASCADE") }
    await admin.close()
}

/// A sync server instance on the PostgreSQL database `configuration` names,
/// served on a loopback port for the length of `body`, then stopped and its
/// store closed: the first of a test, or a second on the same database.
func withSyncServer(postgres configuration: PostgresConfiguration, label: String,
                    _ body: @Sendable (URL, Store) async throws -> Void) async throws {
    let quiet = Logger(label: label) { _ in SwiftLogNoOpLogHandler() }
    let store = try await RemindersRoutes.store(postgres: configuration, logger: quiet)
    do {
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: quiet, sync: true, onServerRunning: $0) }) { client in
            try await body(try #require(URL(string: "http://127.0.0.1:\(client.port)")), store)
        }
    } catch {
        await store.close()
        throw error
    }
    await store.close()
}

/// One HTTP request with a JSON body, for the account routes.
func request(_ method: String, _ url: URL, token: String? = nil, json: [String: String]? = nil) async throws -> (status: Int, body: Data) {
    var request = URLRequest(url: url, timeoutInterval: 60)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let json {
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(json)
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
}

/// A session the account routes answer with.
struct HTTPSession: Decodable {
    var account: UUID
    var name: String
    var token: String
    var device: UUID
}

/// A device of a test over HTTP: its model on an SQLite file, signed in, with
/// a list of its own, and the token its transport needs.
struct HTTPDevice {
    var account: Int
    var model: RemindersModel
    var list: String
    var token: String

    /// Device `device` of account `"\(prefix)\(account)"`: the first signs the account up, the others sign in.
    static func make(_ server: URL, folder: URL, prefix: String, account: Int, device: Int) async throws -> HTTPDevice {
        let answer = try await request("POST", server.appendingPathComponent("/sync/" + (device == 0 ? "accounts" : "sessions")),
                                       json: ["name": "\(prefix)\(account)", "password": "password-\(account)"])
        try #require(answer.status == (device == 0 ? 201 : 200), "\(String(decoding: answer.body, as: UTF8.self))")
        let session = try JSONDecoder().decode(HTTPSession.self, from: answer.body)
        let model = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent("a\(account)d\(device).sqlite").path))
        try await model.migrate()
        try await model.signIn(server: server.absoluteString, accountName: session.name, accountID: session.account,
                               device: session.device, token: session.token)
        try await model.enableSync()
        let list = "List \(account).\(device)"
        try await model.createList(title: list)
        return HTTPDevice(account: account, model: model, list: list, token: session.token)
    }
}

/// Kills one of the PostgreSQL backends named `application` at random, every
/// few milliseconds (a random wait in `range`), until `deadline`, through
/// `admin`'s own connection; the task's value is how many it killed.
func killBackends(of application: String, through admin: Store, everyMilliseconds range: ClosedRange<Int>,
                  until deadline: ContinuousClock.Instant) -> Task<Int, Never> {
    Task {
        var kills = 0
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(Int.random(in: range)))
            kills += (try? await admin.write { db in
                try db.fetchOne(Int.self, """
                    SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE application_name = \(application) ORDER BY random() LIMIT 1) AS k
                    """)
            }) ?? 0
        }
        return kills
    }
}

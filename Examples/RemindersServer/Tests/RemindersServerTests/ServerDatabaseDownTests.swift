import Depot
import DepotPostgres
import DepotTesting
import Foundation
import Hummingbird
import Logging
import RemindersServerApp
import Testing

/// PostgreSQL going away under a running server: every route answers 503 with
/// one line of JSON at once, and serves again when the database is back. In CI
/// the server must be there (scripts/test starts one): a missing one fails.
@Suite struct ServerDatabaseDownTests {
    @Test func whileThePostgreSQLServerIsDownEveryRouteAnswers503WithinTwoSeconds() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty else {
            #expect(environment["CI"] != "true", "CI must name a PostgreSQL server (DEPOT_POSTGRES_URL)")
            return
        }
        var configuration = try PostgresConfiguration(url: url)
        let schema = "server_down_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await Store.postgres(configuration)
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        await admin.close()
        // The server reaches PostgreSQL through a proxy the test can take down.
        let proxy = try TCPProxy(to: configuration.host, port: configuration.port)
        try proxy.start()
        defer { proxy.stop() }
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.searchPath = schema
        let captured = CapturedLogs()
        let store = try await RemindersRoutes.store(postgres: configuration, logger: Logger(label: "store") { _ in SwiftLogNoOpLogHandler() })
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: captured.logger(), onServerRunning: $0) }) { raw in
            let client = Client(client: raw)
            #expect(try await client.send(.post, "/lists", #"{"title": "Errands"}"#).status == .created)
            #expect(try await client.send(.get, "/home").status == .ok)
            proxy.stop()
            let requests: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/home", nil), (.get, "/lists", nil), (.get, "/health", nil), (.get, "/lists/errands", nil),
                (.post, "/lists", #"{"title": "Work"}"#), (.post, "/lists/errands/reminders", #"{"title": "Milk"}"#),
                (.get, "/search?q=milk", nil),
            ]
            var answered: [String] = []
            for (method, uri, body) in requests {
                let started = ContinuousClock.now
                let answer = try await client.send(method, uri, body)
                answered.append("\(method) \(uri) \(ContinuousClock.now - started)")
                #expect(answer.status == .serviceUnavailable, "\(method) \(uri): \(answer.status) \(answer.text)")
                #expect(answer.error == "the database is unavailable; try again", "\(method) \(uri): \(answer.text)")
                #expect(answer.headers[.retryAfter] == "1")
            }
            // Prompt because nothing was waited for: each failure is the refused
            // connection itself (checked in the log below), never a checkout or
            // connect timeout running out. A figure, not a wall-clock bound.
            print("database down: answered \(answered.joined(separator: ", "))")
            try proxy.start()
            #expect(try await client.send(.get, "/lists").status == .ok, "serves again once the database is back")
            #expect(try await client.send(.post, "/lists", #"{"title": "Work"}"#).status == .created)
        }
        let failures = captured.records.filter { $0.message == "request" && "\($0.metadata["http.status"] ?? "")" == "503" }
        #expect(failures.count == 7)
        #expect(failures.allSatisfy { $0.level == .error && "\($0.metadata["error"] ?? "")".hasPrefix("database: connection error") },
                "\(failures.map { $0.metadata["error"] ?? "" })")
        #expect(!failures.contains { "\($0.metadata["error"] ?? "")".localizedCaseInsensitiveContains("timeout") },
                "a request waited for a timeout: \(failures.map { $0.metadata["error"] ?? "" })")
        #expect(!captured.text.contains(configuration.password ?? "no password"), "no password in any log record")
    }
}

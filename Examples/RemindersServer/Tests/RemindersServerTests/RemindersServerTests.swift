import Depot
import DepotPostgres
import DepotSQLite
import DepotTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RemindersServerApp
import Testing

@Suite struct RemindersServerTests {
    @Test func aClientAddsAListAndAReminderThenReadsThemBack() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let logger = Logger(label: "test")
        let store = try await RemindersRoutes.store(path, logger: logger)
        let app = try await RemindersRoutes.application(store: store, logger: logger)
        try await app.test(.router) { client in
            try await client.execute(uri: "/lists", method: .post, body: ByteBuffer(string: #"{"title": "Errands"}"#)) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/lists/errands/reminders", method: .post,
                                     body: ByteBuffer(string: #"{"title": "Buy milk", "isFlagged": true}"#)) { response in
                #expect(response.status == .created)
                #expect(String(buffer: response.body).contains("Buy milk"))
            }
            try await client.execute(uri: "/lists/Errands/reminders", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("Buy milk"))
            }
            try await client.execute(uri: "/search?q=MILK", method: .get) { response in
                #expect(String(buffer: response.body).contains("Buy milk"))
            }
            try await client.execute(uri: "/home", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("\"flagged\":1"))
            }
            try await client.execute(uri: "/lists/nowhere/reminders", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// The same requests against PostgreSQL, in a schema of their own. In CI the
    /// server must be there (scripts/test starts one): a missing one fails.
    @Test func theSameServerRunsOnPostgreSQL() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["DEPOT_POSTGRES_URL"], !url.isEmpty else {
            #expect(environment["CI"] != "true", "CI must name a PostgreSQL server (DEPOT_POSTGRES_URL)")
            return
        }
        var configuration = try PostgresConfiguration(url: url)
        let schema = "server_test_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await Store.postgres(configuration)
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        await admin.close()
        configuration.searchPath = schema
        let store = try await Store.postgres(configuration)
        let app = try await RemindersRoutes.application(store: store, logger: Logger(label: "test"))
        try await app.test(.router) { client in
            try await client.execute(uri: "/lists", method: .post, body: ByteBuffer(string: #"{"title": "Work"}"#)) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/lists/work/reminders", method: .post, body: ByteBuffer(string: #"{"title": "Ship it"}"#)) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/search?q=ship", method: .get) { response in
                #expect(String(buffer: response.body).contains("Ship it"))
            }
        }
    }

    @Test func eachRequestsStatementsAreLoggedThroughTheRequestsLogger() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let captured = CapturedLogs()
        let logger = captured.logger()
        let store = try await RemindersRoutes.store(path, logger: Logger(label: "store") { _ in SwiftLogNoOpLogHandler() })
        let app = try await RemindersRoutes.application(store: store, logger: logger)
        try await app.test(.router) { client in
            try await client.execute(uri: "/lists", method: .get) { response in #expect(response.status == .ok) }
        }
        let statements = captured.records.filter { $0.message == "statement" }
        #expect(!statements.isEmpty)
        // Hummingbird gives each request's logger its request id: the statements carry it.
        #expect(statements.allSatisfy { $0.metadata.keys.contains { $0.contains("request") || $0.contains("id") } }, "\(statements.map(\.metadata))")
    }
}

import Depot
import DepotPostgres
import DepotSQLite
import DepotTesting
import Foundation
import Hummingbird
import Logging
import RemindersServerApp
import Testing

@Suite struct RemindersServerTests {
    @Test func aClientAddsAListAndAReminderThenReadsThemBack() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let logger = Logger(label: "test")
        let store = try await RemindersRoutes.store(path, logger: logger)
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: logger, onServerRunning: $0) }) { client in
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

    /// `?limit=` pages a list's reminders by keyset: the Link header's next
    /// page, followed to the end, gives every reminder once, in the list's
    /// order, while reminders are added between pages; a bad limit or cursor is 400.
    @Test func aListsRemindersPageThroughTheLinkHeader() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let logger = Logger(label: "test")
        let store = try await RemindersRoutes.store(path, logger: logger)
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: logger, onServerRunning: $0) }) { client in
            try await client.execute(uri: "/lists", method: .post, body: ByteBuffer(string: #"{"title": "Errands"}"#)) { _ in }
            for index in 1...11 {
                try await client.execute(uri: "/lists/Errands/reminders", method: .post, body: ByteBuffer(string: #"{"title": "Task \#(index)"}"#)) { response in
                    #expect(response.status == .created)
                }
            }
            func titles(_ body: ByteBuffer) throws -> [String] {
                let rows = try JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [[String: Any]] ?? []
                return rows.compactMap { ($0["reminder"] as? [String: Any])?["title"] as? String }
            }
            var whole: [String] = []
            try await client.execute(uri: "/lists/Errands/reminders", method: .get) { response in whole = try titles(response.body) }
            #expect(whole.count == 11, "\(whole)")
            var seen: [String] = []
            var uri: String? = "/lists/Errands/reminders?limit=4"
            var pages = 0
            while let next = uri, pages < 10 {
                pages += 1
                var link: String?
                try await client.execute(uri: next, method: .get) { response in
                    #expect(response.status == .ok)
                    seen += try titles(response.body)
                    link = response.headers[HTTPFields.Element.Name("Link")!]
                    if pages == 1 { #expect(response.headers[HTTPFields.Element.Name("X-Total-Count")!] == "11") }
                }
                uri = link.flatMap { header in
                    header.range(of: #"<[^>]+>"#, options: .regularExpression).map { String(header[$0].dropFirst().dropLast()) }
                }
                try await client.execute(uri: "/lists/Errands/reminders", method: .post, body: ByteBuffer(string: #"{"title": "Added \#(pages)"}"#)) { _ in }
            }
            #expect(Array(seen.prefix(11)) == whole && Set(seen).count == seen.count, "every reminder once, in order: \(seen)")
            for bad in ["limit=0", "limit=1001", "limit=x", "after=not-a-cursor"] {
                try await client.execute(uri: "/lists/Errands/reminders?\(bad)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
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
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: Logger(label: "test"), onServerRunning: $0) }) { client in
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
        try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: logger, onServerRunning: $0) }) { client in
            try await client.execute(uri: "/lists", method: .get) { response in #expect(response.status == .ok) }
        }
        let statements = captured.records.filter { $0.message == "statement" }
        #expect(!statements.isEmpty)
        // Hummingbird gives each request's logger its request id: the statements carry it.
        #expect(statements.allSatisfy { $0.metadata.keys.contains { $0.contains("request") || $0.contains("id") } }, "\(statements.map(\.metadata))")
    }
}

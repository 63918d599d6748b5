import Depot
import DepotMariaDB
import DepotMariaDBTesting
import DepotPostgres
import Foundation
import Hummingbird
import Logging
import RemindersServerApp
import Testing

/// A person at the web app through the router's test client: keeps the
/// session cookie as a browser would, and the CSRF token of the last page.
struct WebVisitor {
    let client: Client
    var cookie: String?
    var csrf: String?
    /// Headers sent with every request (a proxy's, say).
    var headers: HTTPFields = [:]

    init(_ client: Client) { self.client = client }

    /// A GET; the page's CSRF token is kept.
    mutating func get(_ path: String) async throws -> Answer {
        let answer = try await client.send(.get, path, headers: requestHeaders(form: false))
        take(answer)
        return answer
    }

    /// A form posted with these fields, and the CSRF token unless `csrf` is false.
    mutating func post(_ path: String, _ fields: [(String, String)] = [], csrf: Bool = true) async throws -> Answer {
        var fields = fields
        if csrf, let token = self.csrf { fields.append(("csrf", token)) }
        let body = fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        let answer = try await client.send(.post, path, body, headers: requestHeaders(form: true))
        take(answer)
        return answer
    }

    /// Signs up (or in) through the web forms: the test fails unless it lands on the home page.
    mutating func signUp(_ name: String, password: String = "correct horse battery", signIn: Bool = false,
                         sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answer = try await post(signIn ? "/web/sign-in" : "/web/sign-up", [("name", name), ("password", password)], csrf: false)
        #expect(answer.status == .seeOther && answer.headers[.location] == "/web", "\(answer.status) \(answer.text)", sourceLocation: sourceLocation)
        _ = try await get("/web")
    }

    private func requestHeaders(form: Bool) -> HTTPFields {
        var fields = headers
        if let cookie { fields[.cookie] = "\(WebVisitor.cookieName)=\(cookie)" }
        if form { fields[.contentType] = "application/x-www-form-urlencoded" }
        return fields
    }

    private mutating func take(_ answer: Answer) {
        if let set = answer.headers[.setCookie], set.hasPrefix("\(Self.cookieName)=") {
            let value = set.dropFirst(Self.cookieName.count + 1).prefix { $0 != ";" }
            cookie = value.isEmpty ? nil : String(value)
        }
        if let range = answer.text.range(of: #"name="csrf" value="[0-9a-f]{64}""#, options: .regularExpression) {
            csrf = String(answer.text[range].dropFirst(#"name="csrf" value=""#.count).dropLast())
        }
    }

    static let cookieName = "depot_session"

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

extension Answer {
    /// The id at the end of a redirect's location (`/web/lists/<id>`).
    var locationID: String? { headers[.location].map { String($0.split(separator: "/").last ?? "") } }
}

/// The engines the web app is served on in its tests: the same pages, the
/// same answers. In CI the servers must be there (scripts/test starts them).
enum WebEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres, mariadb

    var testDescription: String { rawValue }

    /// Runs `body` against the app in sync mode on a fresh database of this engine.
    func withServer(_ body: @Sendable (Client, Store) async throws -> Void) async throws {
        let environment = ProcessInfo.processInfo.environment
        let quiet = Logger(label: "store") { _ in SwiftLogNoOpLogHandler() }
        switch self {
        case .sqlite:
            try await withSyncServer(body)
        case .postgres:
            try await withScratchPostgresSchema("web_") { configuration in
                let store = try await RemindersRoutes.store(postgres: configuration, logger: quiet)
                do { try await withSyncServer(store, body) } catch { await store.close(); throw error }
                await store.close()
            }
        case .mariadb:
            guard let url = environment["DEPOT_MARIADB_URL"], !url.isEmpty else {
                #expect(environment["CI"] != "true", "CI must name a MariaDB server (DEPOT_MARIADB_URL)")
                return
            }
            let scratch = MariaDBScratchDatabases(base: try MariaDBConfiguration(url: url))
            let database = try await scratch.makeDatabase()
            do {
                let store = try await RemindersRoutes.store(mariadb: try MariaDBConfiguration(url: url).with(database: database), logger: quiet)
                do { try await withSyncServer(store, body) } catch { await store.close(); throw error }
                await store.close()
            } catch {
                await scratch.dropAll()
                throw error
            }
            await scratch.dropAll()
        }
    }
}

/// What a test reads off a page: the reminders' titles and ids, in the page's order.
protocol ReadsWebPages {}

extension ReadsWebPages {
    /// The reminders' titles on a list page, in the page's order.
    func titles(_ page: Answer) -> [String] {
        matches(page.text, #"<a class="title" href="/web/reminders/[0-9a-f-]{36}">([^<]*)</a>"#).map(unescape)
    }

    /// The reminders' ids on a list page, in the page's order.
    func reminderIDs(_ page: Answer) -> [String] {
        matches(page.text, #"data-id="([0-9a-f-]{36})""#)
    }

    func matches(_ text: String, _ pattern: String) -> [String] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }
}

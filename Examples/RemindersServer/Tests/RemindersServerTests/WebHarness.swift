import Foundation
import Hummingbird
import HummingbirdTesting
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

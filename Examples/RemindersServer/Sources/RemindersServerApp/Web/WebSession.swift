import Foundation
import Hummingbird
import Logging

/// A person signed in to the web app: a device of their account (made at
/// sign-in, deleted at sign-out, so a copied cookie stops working then),
/// whose token the session cookie holds.
struct WebSession: Sendable {
    /// The account's id: what the sync server is told.
    let account: String
    /// The device the sign-in made.
    let device: String
    /// The account's name, as shown.
    let name: String
    let token: BearerToken

    /// The name of the cookie that holds the token: `HttpOnly` (no script
    /// reads it), `SameSite=Lax` (no other site's form posts it), `Secure`
    /// when the page came over TLS, scoped to `/web`.
    static let cookie = "depot_session"

    /// The form field every form posts, and the value it must hold: derived
    /// from the session's secret token, so a page of another site cannot know
    /// it, and the server stores nothing more.
    var csrf: String { BearerToken.sha256("csrf\u{0}" + token.text) }

    /// The session a request's cookie names, or nil (no cookie, a malformed
    /// one, a token no device holds any more).
    static func current(_ request: Request, _ sync: SyncEndpoints, logger: Logger) async throws -> WebSession? {
        guard let value = cookieValue(request, named: cookie), let token = BearerToken(cookieValue: value) else { return nil }
        return try await sync.accounts.holder(of: token, logger: logger).map { WebSession(account: $0.account, device: $0.device, name: $0.name, token: token) }
    }

    /// A cookie's value from the request's `Cookie` headers.
    static func cookieValue(_ request: Request, named name: String) -> Substring? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                return trimmed[trimmed.index(after: equals)...]
            }
        }
        return nil
    }

    /// Whether the page came over TLS (directly, or through a proxy that says so).
    static func isSecure(_ request: Request) -> Bool {
        request.uri.scheme == .https
            || HTTPFields.Element.Name("X-Forwarded-Proto").flatMap { request.headers[$0] }?.lowercased() == "https"
    }

    /// The `Set-Cookie` value that signs this session in.
    static func setCookie(_ token: BearerToken, secure: Bool) -> String {
        "\(cookie)=\(token.text); Path=/web; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that forgets the session.
    static func clearCookie(secure: Bool) -> String {
        "\(cookie)=; Path=/web; HttpOnly; SameSite=Lax; Max-Age=0" + (secure ? "; Secure" : "")
    }

    /// Refuses a form without this session's token (posted from another
    /// site, or from a page of a session signed out since).
    func check(_ form: WebForm) throws {
        guard let sent = form["csrf"], Self.constantTimeEqual(sent, csrf) else {
            throw ServerError(status: .forbidden, message: "this form is out of date or came from another site: reload the page and send it again",
                              cause: "csrf")
        }
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

/// A form's fields, from an `application/x-www-form-urlencoded` body.
struct WebForm: Sendable {
    private var fields: [(String, String)] = []

    /// The first value of a field.
    subscript(_ name: String) -> String? { fields.first { $0.0 == name }?.1 }

    /// Every value of a field, in order (a multiple choice).
    func all(_ name: String) -> [String] { fields.filter { $0.0 == name }.map(\.1) }

    init(_ pairs: [(String, String)]) { fields = pairs }

    /// The form a request posted: at most 64 KiB (413 past that), percent-decoded (400 when it is not).
    static func read(_ request: Request) async throws -> WebForm {
        var request = request
        let buffer = try await request.collectBody(upTo: 64 * 1024)
        return try parse(String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    static func parse(_ body: String) throws -> WebForm {
        var pairs: [(String, String)] = []
        for field in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) throws -> String {
                guard let text = part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw ServerError(status: .badRequest, message: "the form is not valid percent-encoded text", cause: "bad form")
                }
                return text
            }
            pairs.append((try decode(parts[0]), parts.count > 1 ? try decode(parts[1]) : ""))
        }
        return WebForm(pairs)
    }
}

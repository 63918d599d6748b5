import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport to a sync server over HTTP: `POST <base>/push`,
/// `POST <base>/pull` and the long poll `POST <base>/wait`, JSON bodies in
/// the engine's wire form, a bearer token.
///
/// ```swift
/// let transport = HTTPSyncTransport(base: URL(string: "https://sync.example.com/sync")!, token: token)
/// let client = SyncClient(store: store, tables: tables, transport: transport)
/// try await client.sync()
/// ```
///
/// Any failure throws: a request that never got an answer (the server is
/// down: nothing to retry but the whole sync, which is safe), a push the
/// server refused for what it holds (409 or 422 with a `reason`) as
/// ``SyncPushRefused``, which ``SyncClient`` acts on, or any other answer
/// than 200 as ``SyncHTTPError`` with the server's one-line message.
public struct HTTPSyncTransport: SyncTransport {
    /// The URL the `push` and `pull` paths are appended to.
    public var base: URL
    /// The bearer token the server issued to this device.
    public var token: String
    /// How long a request may take, in seconds.
    public var timeout: TimeInterval = 60
    private let session: URLSession

    /// A transport to the sync endpoints under `base`, as the device `token` names.
    public init(base: URL, token: String, session: URLSession = .shared) {
        self.base = base
        self.token = token
        self.session = session
    }

    public func push(_ push: SyncPush) async throws -> SyncPushAnswer {
        try await post("push", push)
    }

    public func pull(_ pull: SyncPull) async throws -> SyncPage {
        try await post("pull", pull)
    }

    /// `POST <base>/wait`, held by the server until it changes or the wait's
    /// timeout passes; nil from a server without the route (404), which the
    /// client then polls.
    public func wait(_ wait: SyncWait) async throws -> SyncWaitAnswer? {
        do {
            return try await post("wait", wait, timeout: TimeInterval(wait.timeout) + timeout) as SyncWaitAnswer
        } catch let error as SyncHTTPError where error.status == 404 {
            return nil
        }
    }

    private func post<Body: SyncWireMessage, Answer: SyncWireMessage>(_ path: String, _ body: Body, timeout: TimeInterval? = nil) async throws -> Answer {
        var request = URLRequest(url: base.appendingPathComponent(path), timeoutInterval: timeout ?? self.timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.httpBody = try body.wireJSON()
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw SyncHTTPError(status: 0, message: "the answer is not HTTP") }
        guard http.statusCode == 200 else {
            // A push the server refused for what it holds, with what the client is to do.
            if [409, 422].contains(http.statusCode), let refusal = try? JSONDecoder().decode(Refusal.self, from: data),
               let latest = Int64(refusal.latestAccepted) {
                throw SyncPushRefused(refusal.reason, latestAccepted: HybridTimestamp(rawValue: latest), message: refusal.error)
            }
            throw SyncHTTPError(status: http.statusCode, body: data)
        }
        return try Answer(wireJSON: data)
    }
}

/// The body of a push the server refused for what it holds.
private struct Refusal: Decodable {
    var error: String
    var reason: SyncPushRefused.Reason
    var latestAccepted: String
}

/// An answer from a sync server other than 200: its status and its one-line message.
public struct SyncHTTPError: Error, CustomStringConvertible, Sendable {
    /// The HTTP status (401: the device is signed out; 403: refused; 413: too large).
    public var status: Int
    /// The server's message: the `error` of its JSON body, or its first line of text.
    public var message: String

    /// An error from its parts.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// An error from an answer's body: `{"error": "…"}`, or the first 200 characters of its text.
    public init(status: Int, body: Data) {
        struct Failure: Decodable { var error: String }
        let message = (try? JSONDecoder().decode(Failure.self, from: body).error)
            ?? String(decoding: body.prefix(200), as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        self.init(status: status, message: message.isEmpty ? HTTPURLResponse.localizedString(forStatusCode: status) : message)
    }

    public var description: String { "the sync server answered \(status): \(message)" }
}

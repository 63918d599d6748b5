import DepotSync
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The reminders server's account routes (`/sync/accounts`, `/sync/sessions`,
/// `/sync/shares`), as the command calls them.
struct SyncAccountClient {
    /// The server's URL, without `/sync`.
    var server: URL
    /// The device's token, for the routes that need one.
    var token: String?

    /// What signing up or in answers.
    struct Session: Decodable {
        var account: UUID
        var name: String
        var token: String
        var device: UUID
    }

    /// A list's shares.
    struct Share: Decodable {
        var list: UUID
        var with: [String]
    }

    /// The sync endpoints' base, for ``HTTPSyncTransport``.
    var syncBase: URL { server.appendingPathComponent("sync") }

    func signUp(name: String, password: String) async throws -> Session {
        try await send("POST", "accounts", ["name": name, "password": password], expecting: 201)
    }

    func signIn(name: String, password: String) async throws -> Session {
        try await send("POST", "sessions", ["name": name, "password": password], expecting: 200)
    }

    func signOut() async throws {
        let _: Empty = try await send("DELETE", "sessions", nil as [String: String]?, expecting: 204)
    }

    func share(list: UUID, with name: String) async throws {
        let _: Empty = try await send("POST", "shares", ["list": list.uuidString.lowercased(), "with": name], expecting: 204)
    }

    func unshare(list: UUID, with name: String) async throws {
        let path = "shares/\(list.uuidString.lowercased())/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)"
        let _: Empty = try await send("DELETE", path, nil as [String: String]?, expecting: 204)
    }

    func shares() async throws -> [Share] {
        try await send("GET", "shares", nil as [String: String]?, expecting: 200)
    }

    private struct Empty: Decodable {}

    private func send<Answer: Decodable>(_ method: String, _ path: String, _ body: [String: String]?, expecting status: Int) async throws -> Answer {
        var request = URLRequest(url: syncBase.appendingPathComponent(path), timeoutInterval: 30)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard code == status else { throw SyncHTTPError(status: code, body: data) }
        if Answer.self == Empty.self, let empty = Empty() as? Answer { return empty }
        return try JSONDecoder().decode(Answer.self, from: data)
    }
}

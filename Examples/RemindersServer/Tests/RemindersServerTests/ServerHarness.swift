import Depot
import DepotTesting
import Foundation
import Hummingbird
import Logging
import RemindersServerApp
import Testing

/// An answer, with its body as text and as JSON.
struct Answer {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var text: String
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }
    /// The `error` of a failure's one line of JSON.
    var error: String? { object["error"] as? String }
}

/// A client of the app, served on a loopback port.
struct Client {
    let client: LoopbackHTTPClient

    func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil) async throws -> Answer {
        try await client.execute(uri: uri, method: method, body: body.map { ByteBuffer(string: $0) }) { response in
            Answer(status: response.status, headers: response.headers, text: String(buffer: response.body))
        }
    }
}

/// A temporary SQLite file for one test.
func temporaryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("reminders-server-\(UUID().uuidString).sqlite").path
}

/// Runs `body` against the app on a fresh SQLite file, with `logger` for the app.
func withServer(logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                _ body: @Sendable (Client) async throws -> Void) async throws {
    let path = temporaryPath()
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let store = try await RemindersRoutes.store(path, logger: Logger(label: "store") { _ in SwiftLogNoOpLogHandler() })
    try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: logger, onServerRunning: $0) }) { client in
        try await body(Client(client: client))
    }
}

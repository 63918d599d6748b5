import DepotTesting
import Foundation
import Hummingbird
import Logging
import Testing

/// One log line per request, with its status and duration, and no user text.
@Suite struct ServerLogTests {
    @Test func eachRequestLogsOneLineWithRouteStatusAndDurationAndNoUserText() async throws {
        let captured = CapturedLogs()
        let secret = "SECRET-\(UUID().uuidString)"
        try await withServer(logger: captured.logger()) { client in
            _ = try await client.send(.post, "/lists", #"{"title": "\#(secret)"}"#)
            _ = try await client.send(.post, "/lists", #"{"title": "\#(secret)"}"#)                  // 409
            _ = try await client.send(.post, "/lists/\(secret)/reminders", #"{"title": "\#(secret)", "\#(secret)": 1}"#)  // 422
            _ = try await client.send(.get, "/search?q=\(secret)")
            _ = try await client.send(.get, "/lists/\(secret)-missing")                                // 404
            _ = try await client.send(.delete, "/home")                                                // 405
            _ = try await client.send(.post, "/lists", "{\(secret)")                                   // 400
        }
        let requests = captured.records.filter { $0.message == "request" }
        #expect(requests.count == 7)
        let statuses = requests.compactMap { $0.metadata["http.status"].map { "\($0)" } }
        #expect(statuses == ["201", "409", "422", "200", "404", "405", "400"])
        #expect(requests.allSatisfy { $0.metadata["duration_ms"] != nil && $0.metadata["http.route"] != nil })
        #expect(requests.map { "\($0.metadata["http.route"] ?? "")" } ==
                ["/lists", "/lists", "/lists/{list}/reminders", "/search", "/lists/{list}", "unmatched", "/lists"])
        // Failures say why, in words that hold none of the client's text.
        #expect(requests.map { $0.metadata["error"] != nil } == [false, true, true, false, true, true, true], "every failure has a cause")
        #expect(!captured.text.contains(secret), "no user text in any log record")
    }
}

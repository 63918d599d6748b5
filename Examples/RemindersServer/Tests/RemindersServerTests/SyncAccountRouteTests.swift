import DepotTesting
import Foundation
import Hummingbird
import Testing

/// Accounts and devices on the sync server: sign-up, sign-in, sign-out, the
/// devices list, and each way those are refused.
@Suite struct SyncAccountRouteTests {
    @Test func signUpSignInListAndSignOutDevices() async throws {
        try await withSyncServer { client, _ in
            let laptop = try await client.signUp("Alice.B-1_")
            #expect(laptop.name == "alice.b-1_", "names are lowercased")
            #expect(UUID(uuidString: laptop.account)?.uuidString.lowercased() == laptop.account)
            #expect(UUID(uuidString: laptop.device)?.uuidString.lowercased() == laptop.device)
            #expect(laptop.token.count == 64 && laptop.token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            let phone = try await client.signIn("ALICE.b-1_")
            #expect(phone.account == laptop.account && phone.device != laptop.device && phone.token != laptop.token)

            let devices = try await client.send(.get, "/sync/devices", token: phone.token)
            #expect(devices.status == .ok)
            #expect(devices.array.map { $0["id"] as? String } == [laptop.device, phone.device])
            #expect(devices.array.map { $0["current"] as? Bool } == [false, true])
            // RFC 3339, with the fraction of a second the database holds.
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions.insert(.withFractionalSeconds)
            #expect(devices.array.allSatisfy { ($0["createdAt"] as? String).flatMap { ISO8601DateFormatter().date(from: $0) ?? fractional.date(from: $0) } != nil },
                    "\(devices.array.map { $0["createdAt"] ?? "-" })")

            // The phone signs out: its token stops working, the laptop's does not.
            #expect(try await client.send(.delete, "/sync/sessions", token: phone.token).status == .noContent)
            #expect(try await client.send(.get, "/sync/devices", token: phone.token).status == .unauthorized)
            let left = try await client.send(.get, "/sync/devices", token: laptop.token)
            #expect(left.array.map { $0["id"] as? String } == [laptop.device])
        }
    }

    @Test func aDeviceRemovedFromAnotherDeviceIsSignedOut() async throws {
        try await withSyncServer { client, _ in
            let laptop = try await client.signUp("alice")
            let phone = try await client.signIn("alice")
            let bob = try await client.signUp("bob")
            // Bob cannot remove alice's device: it is not in his account.
            let foreign = try await client.send(.delete, "/sync/devices/\(phone.device)", token: bob.token)
            #expect(foreign.status == .notFound, "\(foreign.text)")
            #expect(try await client.send(.get, "/sync/devices", token: phone.token).status == .ok)
            // Upper case ids name the same device.
            #expect(try await client.send(.delete, "/sync/devices/\(phone.device.uppercased())", token: laptop.token).status == .noContent)
            let removed = try await client.send(.get, "/sync/devices", token: phone.token)
            #expect(removed.status == .unauthorized)
            #expect(removed.headers[.wwwAuthenticate] == "Bearer")
            #expect(try await client.send(.delete, "/sync/devices/\(phone.device)", token: laptop.token).status == .notFound, "gone already")
            #expect(try await client.send(.delete, "/sync/devices/not-a-device", token: laptop.token).status == .notFound)
        }
    }

    @Test func aTakenNameIs409AndCreatesNothing() async throws {
        try await withSyncServer { client, store in
            _ = try await client.signUp("alice")
            let before = try await serverState(store)
            let taken = try await client.send(.post, "/sync/accounts", #"{"name": "ALICE", "password": "another password"}"#)
            #expect(taken.status == .conflict)
            #expect(taken.error == #"the name "alice" is taken; choose another"#)
            #expect(try await serverState(store) == before, "no account, no device")
        }
    }

    @Test func aBadNamePasswordOrFieldIs422() async throws {
        try await withSyncServer { client, store in
            let before = try await serverState(store)
            let long = String(repeating: "a", count: 65)
            let cases: [(String, String)] = [
                (#"{"name": "", "password": "long enough"}"#, #""name" is 1 to 64 characters"#),
                (#"{"name": "\#(long)", "password": "long enough"}"#, #""name" is 1 to 64 characters"#),
                (#"{"name": "al ice", "password": "long enough"}"#, #""name" is 1 to 64 characters"#),
                (#"{"name": "ålice", "password": "long enough"}"#, #""name" is 1 to 64 characters"#),
                (#"{"name": "alice", "password": "short"}"#, #""password" is 8 to 200 characters"#),
                (#"{"name": "alice", "password": "\#(String(repeating: "p", count: 201))"}"#, #""password" is 8 to 200 characters"#),
                (#"{"name": "alice"}"#, #""password" is required"#),
                (#"{"name": 7, "password": "long enough"}"#, #""name" must be text"#),
                (#"{"name": "alice", "password": "long enough", "admin": true}"#, #"unknown field "admin""#),
            ]
            for (body, message) in cases {
                let answer = try await client.send(.post, "/sync/accounts", body)
                #expect(answer.status == .unprocessableContent, "\(body): \(answer.text)")
                #expect(answer.error?.contains(message) == true, "\(body): \(answer.text)")
            }
            #expect(try await client.send(.post, "/sync/accounts", "{").status == .badRequest)
            #expect(try await serverState(store) == before)
            // The longest name and password are taken.
            _ = try await client.signUp(String(repeating: "a", count: 64), password: String(repeating: "p", count: 200))
            _ = try await client.signIn(String(repeating: "a", count: 64), password: String(repeating: "p", count: 200))
        }
    }

    @Test func aWrongPasswordAndAnUnknownNameAreTheSame401() async throws {
        try await withSyncServer { client, store in
            _ = try await client.signUp("alice", password: "correct horse battery")
            let before = try await serverState(store)
            // Past bcrypt's 72 bytes: every character counts.
            let long = String(repeating: "x", count: 100)
            _ = try await client.signUp("carol", password: long + "1")
            let answers = [
                try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse batterY"}"#),
                try await client.send(.post, "/sync/sessions", #"{"name": "nobody", "password": "correct horse battery"}"#),
                try await client.send(.post, "/sync/sessions", #"{"name": "carol", "password": "\#(long)2"}"#),
            ]
            for answer in answers {
                #expect(answer.status == .unauthorized)
                #expect(answer.text == #"{"error":"wrong name or password"}"#)
            }
            #expect(try await serverState(store).filter { $0.hasPrefix("device") }.count == before.filter { $0.hasPrefix("device") }.count + 1,
                    "no device for a refused sign-in (carol's sign-up made one)")
        }
    }

    @Test func everyAuthenticatedRouteRefusesAMissingMalformedOrUnknownToken() async throws {
        try await withSyncServer { client, _ in
            let alice = try await client.signUp("alice")
            let unknown = String(repeating: "ab", count: 32)
            let headers: [HTTPFields] = [
                [:], [.authorization: alice.token], [.authorization: "Basic \(alice.token)"], [.authorization: "Bearer"],
                [.authorization: "Bearer \(alice.token) extra"], [.authorization: "Bearer \(alice.token.dropLast())"],
                [.authorization: "Bearer \(alice.token.dropLast())g"], [.authorization: "Bearer \(unknown)"],
            ]
            let routes: [(HTTPRequest.Method, String, String?)] = [
                (.delete, "/sync/sessions", nil), (.get, "/sync/devices", nil), (.delete, "/sync/devices/\(alice.device)", nil),
                (.post, "/sync/push", "{}"), (.post, "/sync/pull", "{}"), (.get, "/sync/shares", nil),
                (.post, "/sync/shares", "{}"), (.delete, "/sync/shares/\(UUID())/bob", nil),
            ]
            for (method, uri, body) in routes {
                for header in headers {
                    let answer = try await client.send(method, uri, body, headers: header)
                    #expect(answer.status == .unauthorized, "\(method) \(uri) \(header): \(answer.status)")
                    #expect(answer.error?.isEmpty == false && !answer.text.contains(alice.token.prefix(16)), "\(answer.text)")
                }
            }
            // The scheme's case does not matter; the device is still signed in.
            #expect(try await client.send(.get, "/sync/devices", headers: [.authorization: "bearer \(alice.token.uppercased())"]).status == .ok)
        }
    }

    @Test func aSyncServerServesNoneOfTheModelsRoutes() async throws {
        try await withSyncServer { client, _ in
            for (method, uri, body) in [(HTTPRequest.Method.get, "/lists", nil), (.post, "/lists", #"{"title": "x"}"#), (.get, "/home", nil),
                                        (.get, "/search?q=x", nil), (.get, "/reminders/1", nil), (.delete, "/lists/x", nil)] {
                let answer = try await client.send(method, uri, body)
                #expect(answer.status == .notFound, "\(method) \(uri)")
                #expect(answer.text == #"{"error":"this server syncs: the model's routes are off; see GET \/ for the routes"}"#, "\(answer.text)")
            }
            let index = try await client.send(.get, "/")
            let routes = index.array.map { "\($0["method"] ?? "") \($0["path"] ?? "")" }
            #expect(routes.contains("POST /sync/push") && routes.contains("DELETE /sync/shares/:list/:name") && routes.contains("GET /health"))
            #expect(!routes.contains("GET /lists"))
            #expect(try await client.send(.get, "/health").status == .ok)
            #expect(try await client.send(.put, "/sync/push").status == .methodNotAllowed)
        }
    }

    @Test func noTokenNorPasswordIsEverLogged() async throws {
        let captured = CapturedLogs()
        let password = "secret-\(UUID().uuidString)"
        try await withSyncServer(logger: captured.logger(level: .trace)) { client, _ in
            let alice = try await client.signUp("alice", password: password)
            let phone = try await client.signIn("alice", password: password)
            _ = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "\#(password)x"}"#)
            _ = try await client.send(.post, "/sync/accounts", #"{"name": "alice", "password": "\#(password)"}"#)
            _ = try await client.pull(as: alice)
            _ = try await client.send(.post, "/sync/push", "{", token: phone.token)
            _ = try await client.send(.delete, "/sync/sessions", token: phone.token)
            _ = try await client.send(.get, "/sync/devices", token: phone.token)
            let requests = captured.records.filter { $0.message == "request" }
            #expect(requests.map { "\($0.metadata["http.status"] ?? "")" } == ["201", "200", "401", "409", "200", "400", "204", "401"])
            #expect(captured.records.contains { $0.message == "statement" }, "statements are logged at this level")
            #expect(!captured.text.contains(password))
            for token in [alice.token, phone.token] {
                #expect(!captured.text.contains(token) && !captured.text.contains(token.uppercased()))
            }
        }
    }
}

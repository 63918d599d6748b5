import Foundation
import Hummingbird
import Testing

/// Each status the server answers, with its one line of JSON.
@Suite struct ServerStatusTests {
    @Test func aBodyThatIsNotAJSONObjectIs400() async throws {
        try await withServer { client in
            for body in ["", "{", "not json", "[1, 2]", "\"Errands\"", "null"] {
                let answer = try await client.send(.post, "/lists", body)
                #expect(answer.status == .badRequest, "\(body)")
                #expect(answer.error?.isEmpty == false, "\(body): \(answer.text)")
                #expect(!answer.text.contains("\n"), "one line")
            }
        }
    }

    @Test func aWrongOrUnknownFieldIs422AndNamesTheField() async throws {
        try await withServer { client in
            #expect(try await client.send(.post, "/lists", #"{"title": "Errands"}"#).status == .created)
            let cases: [(String, String, String, String)] = [
                ("POST", "/lists", #"{"title": "   "}"#, "a title cannot be empty"),
                ("POST", "/lists", ##"{"title": "Work", "colour": "#FF0000"}"##, #"unknown field "colour""#),
                ("POST", "/lists", #"{"title": "Work", "color": "red"}"#, #""color" must be"#),
                ("POST", "/lists", #"{"title": 7}"#, #""title" must be text"#),
                ("POST", "/lists", #"{}"#, #""title" is required"#),
                ("POST", "/lists/errands/reminders", #"{"title": "Milk", "priority": 7}"#, #""priority" is 0 (none)"#),
                ("POST", "/lists/errands/reminders", #"{"title": "Milk", "priority": "high"}"#, #""priority" must be a whole number"#),
                ("POST", "/lists/errands/reminders", #"{"title": "Milk", "dueDate": "tomorrow"}"#, #""dueDate" must be an ISO 8601 date"#),
                ("POST", "/lists/errands/reminders", #"{"title": "Milk", "isFlagged": 1}"#, #""isFlagged" must be true or false"#),
                ("PATCH", "/lists/errands", #"{"position": 0}"#, #""position" counts from 1"#),
                ("PATCH", "/lists/errands", #"{"sort": "random"}"#, #""sort" is one of dueDate"#),
                ("PATCH", "/lists/errands", #"{"title": null}"#, #""title" cannot be null"#),
                ("PATCH", "/lists/errands", #"{}"#, "the body changes nothing"),
            ]
            for (method, uri, body, message) in cases {
                let answer = try await client.send(HTTPRequest.Method(method)!, uri, body)
                #expect(answer.status == .unprocessableContent, "\(method) \(uri) \(body): \(answer.status)")
                #expect(answer.error?.contains(message) == true, "\(body): \(answer.text)")
            }
            // Nothing of a refused body was applied.
            let lists = try await client.send(.get, "/lists")
            #expect(lists.array.count == 1)
            #expect(try await client.send(.get, "/lists/errands/reminders").array.isEmpty)
        }
    }

    @Test func aTitleInUseIs409() async throws {
        try await withServer { client in
            #expect(try await client.send(.post, "/lists", #"{"title": "Errands"}"#).status == .created)
            #expect(try await client.send(.post, "/lists", #"{"title": "Work"}"#).status == .created)
            let duplicate = try await client.send(.post, "/lists", #"{"title": "ERRANDS"}"#)
            #expect(duplicate.status == .conflict)
            #expect(duplicate.error == #"a list named "Errands" exists already; choose another title"#)
            let rename = try await client.send(.patch, "/lists/work", ##"{"title": "errands", "color": "#000000"}"##)
            #expect(rename.status == .conflict)
            // All or nothing: the colour that came with the refused title was not applied.
            let work = try await client.send(.get, "/lists/work")
            #expect((work.object["list"] as? [String: Any])?["color"] as? String == "#4A99EFFF")
        }
    }

    @Test func whatDoesNotExistIs404() async throws {
        try await withServer { client in
            let cases = [("/lists/nowhere", #"no list named "nowhere""#), ("/lists/nowhere/reminders", #"no list named "nowhere""#),
                         ("/reminders/999", "no reminder with id 999"), ("/reminders/abc", #"no reminder with id "abc""#),
                         ("/no/such/route", "no such route")]
            for (uri, message) in cases {
                let answer = try await client.send(.get, uri)
                #expect(answer.status == .notFound, "\(uri)")
                #expect(answer.error?.contains(message) == true, "\(uri): \(answer.text)")
            }
            #expect(try await client.send(.delete, "/reminders/999").status == .notFound)
            #expect(try await client.send(.patch, "/reminders/999", #"{"title": "x"}"#).status == .notFound)
        }
    }

    @Test func aMethodARouteDoesNotTakeIs405WithAllow() async throws {
        try await withServer { client in
            // HEAD wherever GET.
            for (method, uri, allowed) in [(HTTPRequest.Method.delete, "/home", "GET, HEAD"), (.put, "/lists", "GET, HEAD, POST"),
                                           (.post, "/reminders/1", "DELETE, GET, HEAD, PATCH"), (.get, "/reminders/1/complete", "DELETE, POST")] {
                let answer = try await client.send(method, uri, "{}")
                #expect(answer.status == .methodNotAllowed, "\(method) \(uri)")
                #expect(answer.headers[.allow] == allowed, "\(method) \(uri)")
                #expect(answer.error?.contains("not allowed") == true, "\(answer.text)")
            }
        }
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        try await withServer { client in
            let title = String(repeating: "x", count: 3 * 1024 * 1024)
            let answer = try await client.send(.post, "/lists", #"{"title": "\#(title)"}"#)
            #expect(answer.status == .contentTooLarge)
            #expect(answer.error != nil, "\(answer.text.prefix(200))")
        }
    }

    @Test func theRoutesListThemselves() async throws {
        try await withServer { client in
            let answer = try await client.send(.get, "/")
            #expect(answer.status == .ok)
            let routes = answer.array.map { "\($0["method"] ?? "") \($0["path"] ?? "")" }
            #expect(routes.contains("PATCH /reminders/:id"))
            #expect(routes.contains("DELETE /reminders/:id/complete"))
            #expect(try await client.send(.get, "/health").status == .ok)
        }
    }
}

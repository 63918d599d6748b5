import Foundation
import Hummingbird
import Testing

/// Every field a body holds is applied, in the command's --json forms.
@Suite struct ServerFieldTests {
    @Test func everyFieldOfANewListAndReminderIsApplied() async throws {
        try await withServer { client in
            let list = try await client.send(.post, "/lists", ##"{"title": "Errands", "color": "#FF0000"}"##)
            #expect(list.status == .created)
            #expect(list.object["color"] as? String == "#FF0000FF")
            #expect(list.object["position"] as? Int == 1, "places count from 1, as the command's --json")
            let body = #"{"title": "Buy milk", "notes": "oat", "dueDate": "2026-12-01T17:30:00Z", "priority": 3, "isFlagged": true, "tags": ["errand", "food"]}"#
            let added = try await client.send(.post, "/lists/errands/reminders", body)
            #expect(added.status == .created, "\(added.text)")
            let reminder = try #require(added.object["reminder"] as? [String: Any])
            #expect(reminder["title"] as? String == "Buy milk")
            #expect(reminder["notes"] as? String == "oat")
            #expect(reminder["dueDate"] as? String == "2026-12-01T17:30:00Z")
            #expect(reminder["priority"] as? Int == 3)
            #expect(reminder["isFlagged"] as? Bool == true)
            #expect(added.object["tags"] as? [String] == ["errand", "food"])
            #expect(added.object["listColor"] as? String == "#FF0000FF")
        }
    }

    @Test func anEditAppliesEveryFieldAndNullClearsTheDueDate() async throws {
        try await withServer { client in
            _ = try await client.send(.post, "/lists", #"{"title": "Errands"}"#)
            _ = try await client.send(.post, "/lists", #"{"title": "Home"}"#)
            let added = try await client.send(.post, "/lists/errands/reminders", #"{"title": "Milk", "dueDate": "2026-12-01T17:30:00Z", "tags": ["a"]}"#)
            let id = try #require((added.object["reminder"] as? [String: Any])?["number"] as? Int)
            let edit = #"{"title": "Oat milk", "notes": "2 l", "dueDate": null, "priority": 2, "isFlagged": true, "isCompleted": true, "list": "home", "tags": ["b", "c"]}"#
            let edited = try await client.send(.patch, "/reminders/\(id)", edit)
            #expect(edited.status == .ok, "\(edited.text)")
            let reminder = try #require(edited.object["reminder"] as? [String: Any])
            #expect(reminder["title"] as? String == "Oat milk")
            #expect(reminder["notes"] as? String == "2 l")
            #expect(reminder["dueDate"] == nil, "null cleared it")
            #expect(reminder["priority"] as? Int == 2)
            #expect(reminder["isFlagged"] as? Bool == true)
            #expect(reminder["isCompleted"] as? Bool == true)
            #expect(edited.object["listTitle"] as? String == "Home")
            #expect(edited.object["tags"] as? [String] == ["b", "c"], "tags replace the reminder's tags")
            // Undo the completion, then delete.
            let undone = try await client.send(.delete, "/reminders/\(id)/complete")
            #expect((undone.object["reminder"] as? [String: Any])?["isCompleted"] as? Bool == false)
            let done = try await client.send(.post, "/reminders/\(id)/complete")
            #expect((done.object["reminder"] as? [String: Any])?["isCompleted"] as? Bool == true)
            #expect(try await client.send(.delete, "/reminders/\(id)").status == .noContent)
            #expect(try await client.send(.get, "/reminders/\(id)").status == .notFound)
        }
    }

    @Test func aListEditAppliesEveryFieldAndDeleteRemovesIt() async throws {
        try await withServer { client in
            for title in ["A", "B", "C"] { _ = try await client.send(.post, "/lists", #"{"title": "\#(title)"}"#) }
            let body = ##"{"title": "Z", "color": "#00FF0080", "position": 1, "sort": "priority", "sortAscending": false, "showCompleted": true}"##
            let edited = try await client.send(.patch, "/lists/c", body)
            #expect(edited.status == .ok, "\(edited.text)")
            #expect(edited.object["title"] as? String == "Z")
            #expect(edited.object["color"] as? String == "#00FF0080")
            #expect(edited.object["position"] as? Int == 1)
            #expect(edited.object["sort"] as? String == "priority")
            #expect(edited.object["sortAscending"] as? Bool == false)
            #expect(edited.object["showCompleted"] as? Bool == true)
            let order = try await client.send(.get, "/lists").array.compactMap { ($0["list"] as? [String: Any])?["title"] as? String }
            #expect(order == ["Z", "A", "B"])
            #expect(try await client.send(.delete, "/lists/a").status == .noContent)
            #expect(try await client.send(.get, "/lists/a").status == .notFound)
        }
    }

    @Test func hostileTextIsStoredAndReturnedExactly() async throws {
        try await withServer { client in
            _ = try await client.send(.post, "/lists", #"{"title": "Errands"}"#)
            // (U+0000 is refused on every engine: ServerHTTPDetailTests.)
            let hostile = ["\u{1B}[31mred\u{1B}[0m", "line\nbreak\r\ttab\u{1}soh", "\u{202E}right-to-left", "e\u{301}\u{301}\u{301} combining",
                           String(repeating: "long title ", count: 90_000)]
            for title in hostile {
                let body = try JSONSerialization.data(withJSONObject: ["title": title, "notes": title])
                let added = try await client.send(.post, "/lists/errands/reminders", String(decoding: body, as: UTF8.self))
                #expect(added.status == .created)
                let reminder = try #require(added.object["reminder"] as? [String: Any])
                let id = try #require(reminder["number"] as? Int)
                let read = try await client.send(.get, "/reminders/\(id)")
                let stored = (read.object["reminder"] as? [String: Any])?["title"] as? String
                // Compared outside #expect: printing a megabyte on failure takes minutes.
                let same = stored == title.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(same, "title of \(title.utf8.count) bytes came back as \(stored?.utf8.count ?? -1) bytes")
            }
        }
    }
}

import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders
import Testing

/// Sharing a list: only its owner shares it, with an account by name; the
/// other account's devices get it at their next pull, and forget it when it
/// is no longer shared.
@Suite struct SyncShareRouteTests {
    @Test func aListSharedWithBobReachesHimAndLeavesWhenUnshared() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice"), bob = try await client.signUp("bob"), carol = try await client.signUp("carol")
            let (replica, list, reminder) = try await SyncSecurityTests.alicesList(client, alice)
            defer { replica.remove() }
            let key = list.id.uuidString.lowercased()
            #expect(try await client.send(.get, "/sync/shares", token: alice.token).text == "[]")
            let shared = try await client.send(.post, "/sync/shares", #"{"list": "\#(list.id.uuidString)", "with": "BOB"}"#, token: alice.token)
            #expect(shared.status == .noContent, "\(shared.text)")
            #expect(try await client.send(.post, "/sync/shares", #"{"list": "\#(key)", "with": "carol"}"#, token: alice.token).status == .noContent)
            let listed = try await client.send(.get, "/sync/shares", token: alice.token)
            #expect(listed.array.count == 1)
            #expect(listed.array.first?["list"] as? String == key)
            #expect(listed.array.first?["with"] as? [String] == ["bob", "carol"], "names, not ids")
            #expect(try await client.send(.get, "/sync/shares", token: bob.token).text == "[]", "bob owns no list")

            let page = try wire(SyncPage.self, try await client.pull(as: bob))
            #expect(Set(page.changes.map(\.key)) == [key, reminder.uuidString.lowercased()], "bob gets the list and what is in it")

            #expect(try await client.send(.delete, "/sync/shares/\(key)/bob", token: alice.token).status == .noContent)
            let later = try wire(SyncPage.self, try await client.pull(after: page.next, as: bob))
            #expect(later.changes.count == 2 && later.changes.allSatisfy(\.isEvicted), "bob's devices forget it")
            #expect((try await client.send(.get, "/sync/shares", token: alice.token)).array.first?["with"] as? [String] == ["carol"])
            // A share that is not there is a 404 and records nothing.
            let before = try await serverState(store)
            let again = try await client.send(.delete, "/sync/shares/\(key)/bob", token: alice.token)
            #expect(again.status == .notFound && again.error == #"the account shares no list with this id with "bob""#, "\(again.text)")
            #expect(try await client.send(.delete, "/sync/shares/\(key)/carol", token: carol.token).status == .notFound, "only the owner unshares")
            #expect(try await client.send(.delete, "/sync/shares/not-a-uuid/carol", token: alice.token).status == .notFound)
            #expect(try await serverState(store) == before)
        }
    }

    @Test func onlyTheOwnerSharesAListTheServerHas() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice"), bob = try await client.signUp("bob")
            _ = try await client.signUp("carol")
            let (replica, list, _) = try await SyncSecurityTests.alicesList(client, alice)
            defer { replica.remove() }
            let before = try await serverState(store)
            let cases: [(Session, String, HTTPResponse.Status, String)] = [
                (bob, #"{"list": "\#(list.id)", "with": "carol"}"#, .forbidden, "the account owns no list with this id on the server"),
                (bob, #"{"list": "\#(list.id)", "with": "bob"}"#, .unprocessableContent, "a list is shared with another account"),
                (alice, #"{"list": "\#(UUID())", "with": "bob"}"#, .forbidden, "the account owns no list with this id on the server"),
                (alice, #"{"list": "\#(list.id)", "with": "nobody"}"#, .notFound, #"no account is named "nobody""#),
                (alice, #"{"list": "\#(list.id)", "with": "alice"}"#, .unprocessableContent, "not with its owner"),
                (alice, #"{"list": "groceries", "with": "bob"}"#, .unprocessableContent, #""list" must be a list's id"#),
                (alice, #"{"list": "\#(list.id)"}"#, .unprocessableContent, #""with" is required"#),
                (alice, #"{"list": "\#(list.id)", "with": "bob", "role": "admin"}"#, .unprocessableContent, #"unknown field "role""#),
            ]
            for (session, body, status, message) in cases {
                let answer = try await client.send(.post, "/sync/shares", body, token: session.token)
                #expect(answer.status == status, "\(session.name) \(body): \(answer.status) \(answer.text)")
                #expect(answer.error?.contains(message) == true, "\(body): \(answer.text)")
            }
            #expect(try await serverState(store) == before, "no share, no eviction, no version")
            let pulled = try wire(SyncPage.self, try await client.pull(as: bob))
            #expect(pulled.changes.isEmpty)
        }
    }
}

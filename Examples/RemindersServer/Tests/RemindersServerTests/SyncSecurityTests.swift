import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders
import Testing

/// What one account may not do to another through the sync routes, and
/// what a refused request leaves behind: nothing. Each test compares all
/// the server stores before and after.
@Suite struct SyncSecurityTests {
    /// Alice's device makes a list with a reminder and pushes it.
    static func alicesList(_ client: Client, _ alice: Session) async throws -> (replica: Replica, list: RemindersList, reminder: UUID) {
        let replica = try await Replica.make()
        let list = try await replica.model.createList(title: "Home")
        let reminder = try await replica.model.addReminder(ReminderDraft(title: "Paint the door"), to: list.title)
        let answer = try await client.push(try await replica.push(), as: alice)
        #expect(answer.status == .ok, "\(answer.text)")
        return (replica, list, reminder.reminder.id)
    }

    @Test func aPushNamingAnotherAccountsRowsIs403AndAppliesNothing() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice"), bob = try await client.signUp("bob")
            let (replica, list, reminder) = try await Self.alicesList(client, alice)
            defer { replica.remove() }
            let before = try await serverState(store)
            let bobNode = UUID()
            let (listKey, reminderKey) = (list.id.uuidString.lowercased(), reminder.uuidString.lowercased())
            let bobsList = UUID()
            let own = handWritten(RemindersList.tableName, key: bobsList.uuidString.lowercased(), [
                "id": .uuid(bobsList), "title": .text("Bob's"), "color": .integer(0), "position": .integer(0),
                "sort": .text("dueDate"), "sortAscending": .bool(true), "showCompleted": .bool(false)], by: bobNode)
            let deleted = SyncRow(causalLength: 2), spy = UUID()
            let attacks: [(String, [SyncChange])] = [
                ("a rename of alice's list", [handWritten(RemindersList.tableName, key: listKey, ["id": .uuid(list.id), "title": .text("Mine")], by: bobNode)]),
                ("a reminder added to alice's list", [handWritten(Reminder.tableName, key: spy.uuidString.lowercased(), [
                    "id": .uuid(spy), "remindersListID": .uuid(list.id), "title": .text("Spy")], by: bobNode)]),
                ("a delete of alice's reminder", [SyncChange(table: Reminder.tableName, key: reminderKey, row: deleted)]),
                ("alice's reminder moved to bob's own list, with that list", [own, handWritten(Reminder.tableName, key: reminderKey, [
                    "id": .uuid(reminder), "remindersListID": .uuid(bobsList)], by: bobNode)]),
                ("bob's own list, then a rename of alice's", [own, handWritten(RemindersList.tableName, key: listKey, ["title": .text("Mine")], by: bobNode)]),
            ]
            for (attack, changes) in attacks {
                let answer = try await client.push(SyncPush(client: bobNode, number: 1, changes: changes), as: bob)
                #expect(answer.status == .forbidden, "\(attack): \(answer.status) \(answer.text)")
                #expect(answer.error == "the push writes a \(changes.last?.table ?? "") row the account may not write", "\(attack): \(answer.text)")
            }
            #expect(try await serverState(store) == before, "nothing of a refused push was applied, not even bob's own list")
            // Bob's own list alone is his to push.
            #expect(try await client.push(SyncPush(client: bobNode, number: 1, changes: [own]), as: bob).status == .ok)
        }
    }

    @Test func aPullWithAnotherAccountsCursorGetsNoneOfItsRows() async throws {
        try await withSyncServer { client, _ in
            let alice = try await client.signUp("alice"), bob = try await client.signUp("bob")
            let (replica, list, reminder) = try await Self.alicesList(client, alice)
            defer { replica.remove() }
            let alicesKeys: Set<String> = [list.id.uuidString.lowercased(), reminder.uuidString.lowercased()]
            // Alice reads her rows one at a time: her cursor stops between them.
            let first = try wire(SyncPage.self, try await client.pull(limit: 1, as: alice))
            #expect(first.changes.count == 1 && !first.isCaughtUp)
            #expect(Set(try wire(SyncPage.self, try await client.pull(as: alice)).changes.map(\.key)) == alicesKeys)
            var before = first.next
            (before.version, before.table, before.key) = (before.version - 1, "", "")
            for cursor in [SyncCursor.start, first.next, before] {
                let answer = try await client.pull(after: cursor, as: bob)
                #expect(answer.status == .ok, "\(answer.text)")
                let page = try wire(SyncPage.self, answer)
                #expect(page.changes.isEmpty, "bob gets none of alice's rows after \(cursor): \(page.changes.map(\.key))")
                #expect(page.isCaughtUp)
            }
        }
    }

    @Test func theTokenOfARemovedOrSignedOutDeviceIs401AndChangesNothing() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice")
            let phone = try await client.signIn("alice"), tablet = try await client.signIn("alice")
            #expect(try await client.send(.delete, "/sync/devices/\(phone.device)", token: alice.token).status == .noContent)
            #expect(try await client.send(.delete, "/sync/sessions", token: tablet.token).status == .noContent)
            let replica = try await Replica.make()
            defer { replica.remove() }
            _ = try await replica.model.createList(title: "Home")
            let push = try await replica.push()
            let before = try await serverState(store)
            for device in [phone, tablet] {
                let pushed = try await client.push(push, as: device)
                #expect(pushed.status == .unauthorized, "\(pushed.text)")
                #expect(pushed.error == "the token is not valid (signed out, or its device was removed); sign in again")
                #expect(try await client.pull(as: device).status == .unauthorized)
                #expect(try await client.send(.get, "/sync/devices", token: device.token).status == .unauthorized)
                #expect(try await client.send(.delete, "/sync/devices/\(alice.device)", token: device.token).status == .unauthorized)
            }
            #expect(try await serverState(store) == before)
            #expect(try await client.push(push, as: alice).status == .ok, "the account's signed-in device still pushes")
        }
    }

    @Test func aReplayedPushIsADuplicateAndAppliedOnce() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice")
            let replica = try await Replica.make()
            defer { replica.remove() }
            _ = try await replica.model.createList(title: "Home")
            let body = try wireJSON(try await replica.push())
            let first = try await client.send(.post, "/sync/push", body, token: alice.token)
            #expect(first.status == .ok)
            let applied = try wire(SyncPushAnswer.self, first)
            #expect(!applied.wasDuplicate)
            let after = try await serverState(store)
            let again = try await client.send(.post, "/sync/push", body, token: alice.token)
            #expect(again.status == .ok)
            let duplicate = try wire(SyncPushAnswer.self, again)
            #expect(duplicate.wasDuplicate && duplicate.version == applied.version)
            #expect(try await serverState(store) == after, "nothing applied twice")
            #expect(after.contains { $0.hasPrefix("client ") && $0.hasSuffix(" 1 1 \(alice.account)") }, "one push, applied once: \(after)")
        }
    }

    /// Stamps past the server's drift bound (a day ahead, the last value a
    /// stamp holds) and keys that are not of their table's type are refused
    /// with a 422 that says why, and change nothing; a copied device's push
    /// under a used number is a 409 the client acts on.
    @Test func aStampPastTheDriftBoundOrAKeyOfAnotherTypeIs422AndACopiedDevice409() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice")
            let (replica, _, _) = try await Self.alicesList(client, alice)
            defer { replica.remove() }
            let node = try await replica.node()
            let before = try await serverState(store)
            let list = UUID()
            let values: [String: Value] = ["id": .uuid(list), "title": .text("Work"), "color": .integer(0), "position": .integer(1),
                                           "sort": .text("dueDate"), "sortAscending": .bool(true), "showCompleted": .bool(false)]
            func stamped(_ raw: Int64, key: String? = nil, _ values: [String: Value] = values) -> SyncChange {
                var row = SyncRow()
                row.write(values, stamp: SyncStamp(time: HybridTimestamp(rawValue: raw), node: node))
                return SyncChange(table: RemindersList.tableName, key: key ?? list.uuidString.lowercased(), row: row)
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let cases: [(String, SyncChange, String, String)] = [
                ("a day ahead", stamped((now + 86_400_000) << 16), "stamp-ahead", "ahead of the server's clock"),
                ("the last stamp", stamped(Int64.max), "stamp-ahead", "ahead of the server's clock"),
                ("before 1970", stamped(-1), "malformed-stamp", "before 1970"),
                ("an injected key", stamped(now << 16, key: "' OR '1'='1"), "malformed-key", "not of its table's key type"),
                ("a delete under an injected key", SyncChange(table: RemindersList.tableName, key: "' OR '1'='1", row: SyncRow(causalLength: 2)),
                 "malformed-key", "not of its table's key type"),
            ]
            for (name, change, reason, message) in cases {
                let answer = try await client.push(SyncPush(client: node, number: 2, changes: [change]), as: alice)
                #expect(answer.status == .unprocessableContent, "\(name): \(answer.status) \(answer.text)")
                #expect(answer.error?.contains(message) == true, "\(name): \(answer.text)")
                #expect(answer.text.contains(#""reason":"\#(reason)""#), "\(name): \(answer.text)")
                #expect(!answer.text.contains("OR '1'") && !answer.text.contains("Work"), "no key, no value: \(answer.text)")
            }
            #expect(try await serverState(store) == before, "nothing of a refused push was applied")
            // Push 1 again with other content: a copy of the device (a restored backup), 409.
            let copied = try await client.push(SyncPush(client: node, number: 1, changes: [stamped(now << 16)]), as: alice)
            #expect(copied.status == .conflict, "\(copied.text)")
            #expect(copied.text.contains(#""reason":"device-copied""#), "\(copied.text)")
            #expect(try await serverState(store) == before)
        }
    }

    @Test func alicesPushReplayedWithBobsTokenIs403() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice"), bob = try await client.signUp("bob")
            let replica = try await Replica.make()
            defer { replica.remove() }
            _ = try await replica.model.createList(title: "Home")
            let body = try wireJSON(try await replica.push())
            #expect(try await client.send(.post, "/sync/push", body, token: alice.token).status == .ok)
            let before = try await serverState(store)
            let replayed = try await client.send(.post, "/sync/push", body, token: bob.token)
            #expect(replayed.status == .forbidden)
            #expect(replayed.error == "the push names a device of another account")
            // The next push of alice's device, under bob's token: refused the same.
            _ = try await replica.model.createList(title: "Work")
            let next = try await client.push(try await replica.push(2), as: bob)
            #expect(next.status == .forbidden, "\(next.text)")
            #expect(try await serverState(store) == before)
        }
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice")
            let before = try await serverState(store)
            let notes = String(repeating: "x", count: 4 * 1024 * 1024)
            let push = try await client.send(.post, "/sync/push", #"{"client": "\#(UUID())", "number": 1, "changes": [], "pad": "\#(notes)"}"#, token: alice.token)
            #expect(push.status == .contentTooLarge)
            #expect(push.error == "the body is larger than this route takes (4 MiB)")
            let padding = String(repeating: " ", count: 64 * 1024)
            let pull = try await client.send(.post, "/sync/pull", #"{"after": {"version": 0, "table": "", "key": ""}, "limit": 10}\#(padding)"#, token: alice.token)
            #expect(pull.status == .contentTooLarge)
            #expect(pull.error == "the body is larger than this route takes (64 KiB)")
            let signUp = try await client.send(.post, "/sync/accounts", #"{"name": "bob", "password": "long enough"}\#(padding)"#)
            #expect(signUp.status == .contentTooLarge)
            #expect(try await serverState(store) == before)
            // Just under the limits: read, and refused or served on their merits.
            let under = String(repeating: "x", count: 4 * 1024 * 1024 - 200)
            let big = try await client.send(.post, "/sync/push", #"{"client": "\#(UUID())", "number": 1, "changes": [], "pad": "\#(under)"}"#, token: alice.token)
            #expect(big.status == .ok, "an unknown field is ignored, as Codable does: \(big.text.prefix(200))")
        }
    }

    @Test func aMalformedPushOrPullIs400AndAPullLimitOutOfRangeIs422() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice")
            let before = try await serverState(store)
            let bodies = ["", "{", "[]", "null", #"{"client": "not a uuid", "number": 1, "changes": []}"#, #"{"number": 1, "changes": []}"#,
                          #"{"client": "\#(UUID())", "number": 1, "changes": [{"table": "reminders", "key": "k", "row": {"cl": 1, "writes": [{"time": 1, "node": "\#(UUID())", "values": {"title": ["nonsense", "x"]}}]}}]}"#]
            for body in bodies {
                let answer = try await client.send(.post, "/sync/push", body, token: alice.token)
                #expect(answer.status == .badRequest, "\(body): \(answer.text)")
                #expect(answer.error?.hasPrefix(body.isEmpty ? "the body is empty" : "the body is not a valid SyncPush") == true, "\(answer.text)")
                #expect(!answer.text.contains("\n"))
            }
            #expect(try await client.send(.post, "/sync/pull", #"{"limit": 10}"#, token: alice.token).status == .badRequest)
            for limit in [0, -1, 1001] {
                let answer = try await client.pull(limit: limit, as: alice)
                #expect(answer.status == .unprocessableContent)
                #expect(answer.error == #""limit" is 1 to 1000"#)
            }
            #expect(try await client.pull(limit: 1000, as: alice).status == .ok)
            #expect(try await serverState(store) == before)
        }
    }

    @Test func aPushThatBreaksTheSchemaIs422AndAppliesNothing() async throws {
        try await withSyncServer { client, store in
            let alice = try await client.signUp("alice")
            let (replica, list, reminder) = try await Self.alicesList(client, alice)
            defer { replica.remove() }
            let node = try await replica.node()
            let before = try await serverState(store)
            let newList = UUID(), newReminder = UUID()
            let goodList = handWritten(RemindersList.tableName, key: newList.uuidString.lowercased(), [
                "id": .uuid(newList), "title": .text("Work"), "color": .integer(0), "position": .integer(1),
                "sort": .text("dueDate"), "sortAscending": .bool(true), "showCompleted": .bool(false)], by: node)
            func reminderRow(_ values: [String: Value]) -> SyncChange {
                var all: [String: Value] = ["id": .uuid(newReminder), "title": .text("Call"), "notes": .text(""), "isCompleted": .bool(false),
                                            "isFlagged": .bool(false), "priority": .integer(0), "dueDate": .null, "createdAt": .date(Date()),
                                            "position": .integer(0), "remindersListID": .uuid(list.id)]
                for (column, value) in values { all[column] = value }
                return handWritten(Reminder.tableName, key: newReminder.uuidString.lowercased(), all.filter { $0.value != .text("<absent>") }, by: node)
            }
            let absent = Value.text("<absent>")
            let cases: [(String, [SyncChange], String)] = [
                // Values the record type would not write are refused before any engine could coerce them.
                ("isCompleted as text", [goodList, reminderRow(["isCompleted": .text("maybe")])], "a value for isCompleted that Reminder does not take"),
                ("isCompleted as 'yes'", [goodList, reminderRow(["isCompleted": .text("yes")])], "a value for isCompleted that Reminder does not take"),
                ("a title as an integer", [goodList, reminderRow(["title": .integer(5)])], "a value for title that Reminder does not take"),
                ("priority out of range", [goodList, reminderRow(["priority": .integer(7)])], "a value for priority that Reminder does not take"),
                ("title left out", [goodList, reminderRow(["title": absent])], "leaves a required column out"),
                ("a list without its colour", [handWritten(RemindersList.tableName, key: newList.uuidString.lowercased(), [
                    "id": .uuid(newList), "title": .text("Work")], by: node)], "leaves a required column out"),
                ("a title of null", [goodList, reminderRow(["title": .null])], "a value for title that Reminder does not take"),
                ("an unknown table", [goodList, handWritten("syncAccounts", key: "x", ["id": .text("x")], by: node)], "does not sync"),
                ("an unknown column", [goodList, reminderRow(["isAdmin": .bool(true)])], "does not sync"),
                ("a key its values do not have", [handWritten(Reminder.tableName, key: reminder.uuidString.lowercased(), [
                    "id": .uuid(newReminder), "title": .text("Call")], by: node)], "by a key its values do not have"),
            ]
            for (name, changes, message) in cases {
                let answer = try await client.push(SyncPush(client: node, number: 2, changes: changes), as: alice)
                #expect(answer.status == .unprocessableContent, "\(name): \(answer.status) \(answer.text)")
                #expect(answer.error?.hasPrefix("the push does not fit the server's tables: ") == true, "\(name): \(answer.text)")
                #expect(answer.error?.contains(message) == true, "\(name): \(answer.text)")
                #expect(!answer.text.contains("INSERT") && !answer.text.contains("maybe"), "no SQL, no value: \(answer.text)")
            }
            #expect(try await serverState(store) == before, "nothing of a refused push was applied, not even the good list")
            // The same push number goes through once the push is right.
            #expect(try await client.push(SyncPush(client: node, number: 2, changes: [goodList, reminderRow([:])]), as: alice).status == .ok)
        }
    }
}

import Depot
import DepotSQLite
import DepotSync
import Foundation
import Reminders
import Testing
import TestSupport

/// The reminders model with accounts: tags keyed in their account's
/// namespace (two accounts with "#errand" never meet), a sign-in that
/// re-keys the tags a device made before, and a list shared between
/// accounts through a server on PostgreSQL.
@Suite struct RemindersAccountTests {
    struct Device {
        var model: RemindersModel
        var client: SyncClient
        func sync() async throws { try await client.sync() }
    }

    static func device(_ folder: URL, _ name: String, account: UUID, server: SyncServer) async throws -> Device {
        let model = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path))
        try await model.migrate()
        try await model.signIn(server: "in-process", accountName: name, accountID: account, device: UUID(), token: "unused")
        try await model.enableSync()
        let transport = InProcessSyncTransport(server: server, account: account.uuidString.lowercased(), seed: 1)
        return Device(model: model, client: try model.syncClient(transport: transport))
    }

    @Test func aSignInKeysTheTagsInTheAccountsNamespaceAndKeepsTheirLinks() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = RemindersModel(store: try Store.sqlite(at: folder.appendingPathComponent("device.sqlite").path))
        try await model.migrate()
        try await model.createList(title: "Home")
        let milk = try await model.addReminder(ReminderDraft(title: "Milk", tags: ["Errand"]), to: "Home")
        #expect(try await model.tag(named: "errand")?.id == Tag.id(forTitle: "errand"), "before a sign-in, the model's namespace")
        let account = UUID()
        try await model.signIn(server: "http://example", accountName: "alice", accountID: account, device: UUID(), token: "t")
        let tag = try #require(try await model.tag(named: "errand"))
        #expect(tag.id == Tag.id(forTitle: "errand", namespace: account))
        #expect(tag.title == "Errand")
        #expect(try await model.reminder(milk.reminder.number ?? 0).tags == ["Errand"], "the link followed the tag")
        #expect(try await model.search("errand").details.map(\.reminder.title) == ["Milk"], "the index too")
        let error = await #expect(throws: RemindersError.self) {
            try await model.signIn(server: "http://example", accountName: "bob", accountID: UUID(), device: UUID(), token: "t")
        }
        #expect(error?.description == "this database syncs with the account \"alice\"; use another database for another account")
        try await model.signIn(server: "http://example", accountName: "alice", accountID: account, device: UUID(), token: "secret-token-text")
        let signedIn = try await model.syncAccount()
        var dumped = ""
        dump(signedIn, to: &dumped)
        for text in [String(describing: signedIn), String(reflecting: signedIn), dumped] {
            #expect(!text.contains("secret-token-text"), "the token is never printed: \(text)")
        }
    }

    @Test func twoAccountsKeepTheirOwnListsAndTagsAndShareOneList() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let onServer = RemindersModel(store: try await PostgresTestServer.freshStore())
        try await onServer.migrate()
        try await onServer.enableSync()
        let server = try onServer.syncServer()
        let (aliceID, bobID) = (UUID(), UUID())
        let alice = try await Self.device(folder, "alice", account: aliceID, server: server)
        let alicePhone = try await Self.device(folder, "alice-phone", account: aliceID, server: server)
        let bob = try await Self.device(folder, "bob", account: bobID, server: server)

        let groceries = try await alice.model.createList(title: "Groceries")
        try await alice.model.addReminder(ReminderDraft(title: "Milk", tags: ["errand"]), to: "Groceries")
        try await alicePhone.model.createList(title: "Work")
        try await alicePhone.model.addReminder(ReminderDraft(title: "Report", tags: ["errand"]), to: "Work")
        try await bob.model.createList(title: "Garage")
        try await bob.model.addReminder(ReminderDraft(title: "Oil", tags: ["errand"]), to: "Garage")
        for device in [alice, alicePhone, bob, alice] { try await device.sync() }

        #expect(try await alice.model.lists().map(\.list.title) == ["Groceries", "Work"])
        #expect(try await alice.model.tagsInUse().map(\.tag.title) == ["errand"], "one tag for the account's two devices")
        #expect(try await bob.model.lists().map(\.list.title) == ["Garage"], "bob sees none of alice's lists")
        #expect(try await bob.model.tagsInUse().map { "\($0.tag.title) \($0.reminderCount)" } == ["errand 1"], "nor her tag")

        try await server.share(RemindersList.tableName, key: groceries.id.uuidString.lowercased(), owner: aliceID.uuidString.lowercased(),
                               with: bobID.uuidString.lowercased())
        try await bob.sync()
        #expect(try await bob.model.lists().map(\.list.title) == ["Garage", "Groceries"])
        try await bob.model.addReminder(ReminderDraft(title: "Bread"), to: "Groceries")
        try await bob.sync()
        for device in [alice, alicePhone] { try await device.sync() }
        #expect(try await alicePhone.model.reminders(in: "Groceries").reminders.map(\.reminder.title).sorted() == ["Bread", "Milk"])

        try await server.unshare(RemindersList.tableName, key: groceries.id.uuidString.lowercased(), owner: aliceID.uuidString.lowercased(),
                                 with: bobID.uuidString.lowercased())
        try await bob.sync()
        #expect(try await bob.model.lists().map(\.list.title) == ["Garage"], "unshared: gone from bob's device")
        #expect(try await bob.model.search("bread").details.isEmpty, "and from its search index")
        try await alice.sync()
        #expect(try await alice.model.reminders(in: "Groceries").reminders.map(\.reminder.title).sorted() == ["Bread", "Milk"])
    }
}

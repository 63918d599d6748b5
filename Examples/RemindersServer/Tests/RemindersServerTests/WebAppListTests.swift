import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders
import Testing

/// The web app's lists on every engine: tags typed on a reminder, the order
/// changed by buttons and by a drag's move, colours, sharing from the list's
/// page, and a long list a page at a time.
@Suite struct WebAppListTests: ReadsWebPages {
    @Test(arguments: WebEngine.allCases)
    func tagsTypedOnAReminderShowOnItsListTheHomePageAndTheTagsPageAndGoWhenRemoved(engine: WebEngine) async throws {
        try await engine.withServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let list = try #require(try await ana.post("/web/lists", [("title", "Home")]).locationID)
            for title in ["Paint", "Sweep"] { _ = try await ana.post("/web/lists/\(list)/reminders", [("title", title)]) }
            let ids = reminderIDs(try await ana.get("/web/lists/\(list)"))
            try #require(ids.count == 2)
            let (paint, sweep) = (ids[0], ids[1])
            func save(_ id: String, _ title: String, tags: String) async throws -> Answer {
                try await ana.post("/web/reminders/\(id)", [("title", title), ("priority", "0"), ("list", list), ("tags", tags)])
            }

            #expect(try await save(paint, "Paint", tags: "#errand, home #Errand").status == .seeOther)
            #expect(try await ana.get("/web/reminders/\(paint)").text.contains("name=\"tags\" value=\"#errand #home\""), "the tags, once each")
            #expect(try await ana.get("/web/lists/\(list)").text.contains("<span class=\"tag\">#errand</span><span class=\"tag\">#home</span>"))
            let home = try await ana.get("/web")
            #expect(home.text.contains("#errand</a> <span class=\"count\" aria-label=\"1 reminders\">"), "the tags section counts")
            let errand = try #require(matches(home.text, #"href="/web/tags/([0-9a-f-]{36})">#errand<"#).first)
            // The tag's key is the account's, as its devices make it.
            let account = try #require(try await store.read { db in try db.fetchOne(String.self, "SELECT \"id\" FROM \"syncAccounts\" WHERE \"name\" = 'ana'") })
            #expect(errand == Tag.id(forTitle: "errand", namespace: try #require(UUID(uuidString: account))).uuidString.lowercased())

            #expect(try await save(sweep, "Sweep", tags: "ERRAND").status == .seeOther)
            #expect(titles(try await ana.get("/web/tags/\(errand)")) == ["Paint", "Sweep"], "one tag, whatever its case")
            #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: Tag.tableName)") } == 2)
            #expect(titles(try await ana.get("/web/search?q=errand")) .sorted() == ["Paint", "Sweep"], "a tag is searched as the command searches it")

            #expect(try await save(paint, "Paint", tags: "home").status == .seeOther)
            #expect(titles(try await ana.get("/web/tags/\(errand)")) == ["Sweep"])
            #expect(try await ana.get("/web/reminders/\(paint)").text.contains("name=\"tags\" value=\"#home\""))
            #expect(try await save(sweep, "Sweep", tags: String(repeating: "x", count: 101)).status == .unprocessableContent)

            // Another account sees neither the tag nor its page.
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            #expect(try await bob.get("/web/tags/\(errand)").status == .notFound)
            #expect(!(try await bob.get("/web")).text.contains("#errand"))
        }
    }

    @Test(arguments: WebEngine.allCases)
    func remindersMoveByButtonsAndBeforeAnotherAsADragSendsAndAListWithoutRoomIsNumberedAfresh(engine: WebEngine) async throws {
        try await engine.withServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let list = try #require(try await ana.post("/web/lists", [("title", "Chores")]).locationID)
            for title in ["A", "B", "C", "D"] { _ = try await ana.post("/web/lists/\(list)/reminders", [("title", title)]) }
            let ids = Dictionary(uniqueKeysWithValues: zip(["A", "B", "C", "D"], reminderIDs(try await ana.get("/web/lists/\(list)"))))
            func order() async throws -> String { titles(try await ana.get("/web/lists/\(list)")).joined() }
            func move(_ title: String, _ fields: [(String, String)]) async throws -> HTTPResponse.Status {
                try await ana.post("/web/reminders/\(try #require(ids[title]))/move", fields).status
            }

            #expect(try await move("C", [("direction", "up")]) == .seeOther)
            #expect(try await order() == "ACBD")
            #expect(try await move("A", [("direction", "up")]) == .seeOther)
            #expect(try await order() == "ACBD", "the first stays first")
            #expect(try await move("A", [("direction", "down")]) == .seeOther)
            #expect(try await order() == "CABD")
            #expect(try await move("D", [("before", try #require(ids["C"]))]) == .seeOther)
            #expect(try await order() == "DCAB")
            #expect(try await move("C", [("before", "")]) == .seeOther)
            #expect(try await order() == "DABC", "an empty before is last")

            // No room between two neighbours: the list is numbered afresh, in the new order, a gap apart.
            try await store.write { db in
                for (index, title) in ["D", "A", "B", "C"].enumerated() {
                    try db.execute("UPDATE \(ident: Reminder.tableName) SET \(ident: "position") = \(index) WHERE \(ident: "id") = \(UUID(uuidString: ids[title] ?? "") ?? UUID())")
                }
            }
            #expect(try await move("C", [("before", try #require(ids["A"]))]) == .seeOther)
            #expect(try await order() == "DCAB")
            let positions = try await store.read { db in
                try db.fetchAll(Int.self, "SELECT \(ident: "position") FROM \(ident: Reminder.tableName) ORDER BY \(ident: "position")")
            }
            #expect(positions == [0, 1024, 2048, 3072], "\(positions)")

            // Wrong moves are refused; another account's are not found.
            #expect(try await move("A", [("direction", "sideways")]) == .unprocessableContent)
            #expect(try await move("A", [("before", "not-a-uuid")]) == .unprocessableContent)
            #expect(try await move("A", [("before", UUID().uuidString)]) == .notFound)
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            #expect(try await bob.post("/web/reminders/\(try #require(ids["A"]))/move", [("direction", "up")]).status == .notFound)
            #expect(try await order() == "DCAB")
        }
    }

    @Test(arguments: WebEngine.allCases)
    func aListIsColouredRecolouredAndSharedFromItsPageByItsOwnerOnly(engine: WebEngine) async throws {
        try await engine.withServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let list = try #require(try await ana.post("/web/lists", [("title", "Trip"), ("color", "#ff3b30")]).locationID)
            #expect(try await ana.get("/web").text.contains("background:#ff3b30"))
            #expect(try await ana.post("/web/lists/\(list)/edit", [("title", "Road trip"), ("color", "#34C759")]).status == .seeOther)
            let stored = try await store.read { db in try db.fetchOne(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName)") }
            #expect(stored?.title == "Road trip" && stored?.color == 0x34C7_59FF)
            let wrong = try await ana.post("/web/lists/\(list)/edit", [("title", "Road trip"), ("color", "red")])
            #expect(wrong.status == .unprocessableContent && wrong.text.contains("a colour is #rrggbb"))
            #expect(try await ana.post("/web/lists", [("title", "Odd"), ("color", "#12345")]).status == .unprocessableContent)

            var bob = WebVisitor(client), carol = WebVisitor(client)
            try await bob.signUp("bob")
            try await carol.signUp("carol")
            #expect(try await bob.get("/web/lists/\(list)").status == .notFound)
            #expect(try await ana.post("/web/lists/\(list)/share", [("with", "Bob")]).status == .seeOther)
            #expect(try await ana.get("/web/lists/\(list)").text.contains("aria-label=\"Stop sharing with bob\""))
            #expect(try await bob.get("/web").text.contains(">Road trip</span>"), "shared: on bob's home page")
            #expect(try await bob.get("/web/lists/\(list)").status == .ok)

            let notOwner = try await bob.post("/web/lists/\(list)/share", [("with", "carol")])
            #expect(notOwner.status == .forbidden && notOwner.text.contains("only the list&#39;s owner shares it"))
            #expect(try await ana.post("/web/lists/\(list)/share", [("with", "nobody")]).status == .notFound)
            #expect(try await ana.post("/web/lists/\(list)/share", [("with", "ana")]).status == .unprocessableContent)
            #expect(try await carol.get("/web/lists/\(list)").status == .notFound)

            #expect(try await ana.post("/web/lists/\(list)/unshare", [("with", "bob")]).status == .seeOther)
            #expect(try await bob.get("/web/lists/\(list)").status == .notFound)
            #expect(try await ana.post("/web/lists/\(list)/unshare", [("with", "bob")]).status == .notFound, "no such share")
        }
    }

    @Test(arguments: WebEngine.allCases)
    func aLongListIsShownAPageAtATimeASmartListSaysHowManyItHoldsAndASearchOfManyAsksForMore(engine: WebEngine) async throws {
        try await engine.withServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let list = try #require(try await ana.post("/web/lists", [("title", "Long")]).locationID)
            let account = try #require(try await store.read { db in try db.fetchOne(String.self, "SELECT \"id\" FROM \"syncAccounts\" WHERE \"name\" = 'ana'") })
            let listID = try #require(UUID(uuidString: list))
            let name = { (index: Int) in String(format: "R%04d", index) }
            let reminders = (0..<2_100).map { Reminder(title: name($0), position: $0 * 1024, remindersListID: listID) }
            try await RemindersModel(store: store).syncServer().edit(reminders.map { .save($0) }, account: account)

            let first = try await ana.get("/web/lists/\(list)")
            #expect(titles(first) == (0..<300).map(name))
            #expect(first.text.contains("<span>1–300 of 2100</span>") && first.text.contains("href=\"/web/lists/\(list)?from=300\" rel=\"next\""))
            #expect(first.text.contains("Delete the list and its 2100 reminders"))
            #expect(titles(try await ana.get("/web/lists/\(list)?from=300")) == (300..<600).map(name))
            let last = try await ana.get("/web/lists/\(list)?from=2000")
            #expect(titles(last) == (2_000..<2_100).map(name) && !last.text.contains("rel=\"next\"") && last.text.contains("rel=\"prev\""))
            #expect(titles(try await ana.get("/web/lists/\(list)?from=5000")).isEmpty)
            for wrong in ["-1", "abc", "99999999999999999999"] {
                #expect(try await ana.get("/web/lists/\(list)?from=\(wrong)").status == .notFound, "from=\(wrong)")
            }
            let all = try await ana.get("/web/smart/all")
            #expect(titles(all).count == 300 && all.text.contains("The first 300 of 2100."))
            #expect(try await ana.get("/web").text.contains("All</span></a> <span class=\"count\" aria-label=\"2100 reminders\">"))

            // A search that matches more than the page ranks says so; one more letter and it ranks.
            let many = try await ana.get("/web/search?q=r")
            #expect(titles(many).count == 200 && many.text.contains("More than 2000 reminders match"))
            let one = try await ana.get("/web/search?q=r1234")
            #expect(titles(one) == ["R1234"] && !one.text.contains("More than"))
        }
    }

    @Test(arguments: WebEngine.allCases)
    func aReminderAnotherWriterStoredInAListIsOpenedEditedMovedAndDeletedAndItsDevicesPullItOnceEdited(engine: WebEngine) async throws {
        try await engine.withServer { client, store in
            let device = try await client.signUp("ana")
            var ana = WebVisitor(client)
            try await ana.signUp("ana", signIn: true)
            let list = try #require(try await ana.post("/web/lists", [("title", "Inbox")]).locationID)
            // As `reminders add` on the server's database: the model writes the table, not the sync server's log.
            let model = RemindersModel(store: store)
            for title in ["Stored directly", "Also stored directly", "Stored third"] { _ = try await model.addReminder(ReminderDraft(title: title), to: list) }
            #expect(titles(try await ana.get("/web/lists/\(list)")) == ["Stored directly", "Also stored directly", "Stored third"])
            let ids = reminderIDs(try await ana.get("/web/lists/\(list)"))
            try #require(ids.count == 3)
            #expect(try await ana.get("/web/reminders/\(ids[0])").status == .ok, "its page")

            #expect(try await ana.post("/web/reminders/\(ids[0])/complete", [("done", "1")]).status == .seeOther)
            #expect(try await ana.post("/web/reminders/\(ids[2])/move", [("direction", "up")]).status == .seeOther)
            #expect(titles(try await ana.get("/web/lists/\(list)")) == ["Stored third", "Also stored directly", "Stored directly"])
            let pulled = try wire(SyncPage.self, try await client.pull(as: device))
            let pulledTitles = pulled.changes.compactMap { $0.row.registers["title"]?.value }
            #expect(pulledTitles.contains(.text("Stored directly")) && pulledTitles.contains(.text("Stored third")), "edited: logged, and pulled: \(pulledTitles)")
            // Deleted before any edit logged it.
            #expect(try await ana.post("/web/reminders/\(ids[1])/delete").status == .seeOther)
            #expect(titles(try await ana.get("/web/lists/\(list)")) == ["Stored third", "Stored directly"])
            #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: Reminder.tableName)") } == 2, "deleted from the table")

            // Another account's requests for it are still not found.
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            #expect(try await bob.get("/web/reminders/\(ids[0])").status == .notFound)
        }
    }
}

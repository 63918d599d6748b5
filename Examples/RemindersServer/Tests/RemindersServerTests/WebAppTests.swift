import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders
import Testing

/// The web app (`/web` on a sync server), through the router: what a person
/// does, and what an attacker tries.
@Suite struct WebAppTests: ReadsWebPages {
    @Test func aPersonSignsUpAddsAListAndRemindersCompletesAndDeletesOne() async throws {
        try await withSyncServer { client, _ in
            var ana = WebVisitor(client)
            let signUp = try await ana.post("/web/sign-up", [("name", "ana"), ("password", "correct horse battery")], csrf: false)
            #expect(signUp.status == .seeOther)
            let cookie = try #require(signUp.headers[.setCookie])
            #expect(cookie.contains("; Path=/web") && cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Lax") && !cookie.contains("Secure"),
                    "the session cookie: \(cookie.replacingOccurrences(of: ana.cookie ?? "-", with: "<token>"))")
            let home = try await ana.get("/web")
            #expect(home.status == .ok && home.text.contains("<h1>My Lists</h1>") && home.text.contains("No lists yet."))
            #expect(home.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)

            let created = try await ana.post("/web/lists", [("title", "  Groceries ")])
            #expect(created.status == .seeOther)
            let list = try #require(created.locationID)
            for title in ["Milk", "Bread", "Eggs"] {
                #expect(try await ana.post("/web/lists/\(list)/reminders", [("title", title)]).status == .seeOther)
            }
            var page = try await ana.get("/web/lists/\(list)")
            #expect(page.status == .ok && page.text.contains("Groceries</h1>"))
            #expect(titles(page) == ["Milk", "Bread", "Eggs"], "in the order added")
            #expect(try await ana.get("/web").text.contains("aria-label=\"3 open\""))

            let ids = reminderIDs(page)
            try #require(ids.count == 3)
            let bread = ids[1]
            #expect(try await ana.post("/web/reminders/\(bread)/complete", [("done", "1")]).status == .seeOther)
            page = try await ana.get("/web/lists/\(list)")
            #expect(titles(page) == ["Milk", "Eggs", "Bread"], "done ones last")
            #expect(page.text.contains("aria-label=\"Mark not done: Bread\" aria-pressed=\"true\""))
            #expect(try await ana.get("/web").text.contains("aria-label=\"2 open\""))

            let milk = try #require(reminderIDs(page).first)
            #expect(try await ana.post("/web/reminders/\(milk)/delete").status == .seeOther)
            #expect(titles(try await ana.get("/web/lists/\(list)")) == ["Eggs", "Bread"])

            // A title of spaces is refused on the page, with the one line why.
            let empty = try await ana.post("/web/lists/\(list)/reminders", [("title", "   ")])
            #expect(empty.status == .unprocessableContent && empty.text.contains("role=\"alert\">a reminder needs a title<"))
        }
    }

    @Test func aTitleIsShownAsTextEverywhereAndNoScriptOfItRuns() async throws {
        try await withSyncServer { client, _ in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let attacks = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "javascript:alert(1)", "\"><svg onload=alert(1)>", "' onmouseover='alert(1)"]
            let list = try #require(try await ana.post("/web/lists", [("title", attacks[0])]).locationID)
            for attack in attacks { _ = try await ana.post("/web/lists/\(list)/reminders", [("title", attack)]) }
            for page in [try await ana.get("/web"), try await ana.get("/web/lists/\(list)")] {
                #expect(!page.text.contains("<script>alert") && !page.text.contains("<img src=x") && !page.text.contains("<svg")
                        && !page.text.contains("' onmouseover='"), "markup of a title came through as markup")
                #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            }
            let listPage = try await ana.get("/web/lists/\(list)")
            #expect(titles(listPage).count == attacks.count)
            #expect(listPage.text.contains("&lt;img src=x onerror=alert(1)&gt;") && listPage.text.contains("&quot;&gt;&lt;svg onload=alert(1)&gt;")
                    && listPage.text.contains("&#39; onmouseover=&#39;alert(1)"))
            // The sign-in form shows the name typed back, as text too.
            var eve = WebVisitor(client)
            let wrong = try await eve.post("/web/sign-in", [("name", "\"><script>x</script>"), ("password", "nope")], csrf: false)
            #expect(wrong.status == .unauthorized && !wrong.text.contains("<script>x") && wrong.text.contains("wrong name or password"))
        }
    }

    @Test func aFormWithoutThisSessionsTokenIsRefusedAndChangesNothing() async throws {
        try await withSyncServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            let before = try await serverState(store)
            let missing = try await ana.post("/web/lists", [("title", "Forged")], csrf: false)
            #expect(missing.status == .forbidden && missing.text.contains("out of date or came from another site"))
            var forged = ana
            forged.csrf = bob.csrf
            #expect(try await forged.post("/web/lists", [("title", "Forged")]).status == .forbidden, "another session's token")
            forged.csrf = String(repeating: "0", count: 64)
            #expect(try await forged.post("/web/lists", [("title", "Forged")]).status == .forbidden, "a made-up token")
            #expect(try await serverState(store) == before, "a refused form changed what the server keeps")
            #expect(try await ana.get("/web").text.contains("No lists yet."))
        }
    }

    @Test func anotherAccountsIdsAreNotFoundAndUntouched() async throws {
        try await withSyncServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let list = try #require(try await ana.post("/web/lists", [("title", "Private")]).locationID)
            _ = try await ana.post("/web/lists/\(list)/reminders", [("title", "Secret")])
            let reminder = try #require(reminderIDs(try await ana.get("/web/lists/\(list)")).first)
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            #expect(!(try await bob.get("/web")).text.contains("Private"))
            let before = try await serverState(store)
            let looked = try await bob.get("/web/lists/\(list)")
            #expect(looked.status == .notFound && !looked.text.contains("Secret") && !looked.text.contains("Private"))
            #expect(try await bob.post("/web/lists/\(list)/reminders", [("title", "Mine now")]).status == .notFound)
            #expect(try await bob.post("/web/reminders/\(reminder)/complete", [("done", "1")]).status == .notFound)
            #expect(try await bob.post("/web/reminders/\(reminder)/delete").status == .notFound)
            #expect(try await bob.get("/web/lists/not-a-uuid").status == .notFound)
            #expect(try await serverState(store) == before, "another account's request changed what the server keeps")

            // Shared through the sync API, the list shows on bob's page; his edit reaches ana's.
            let owner = try await client.signIn("ana")
            #expect(try await client.send(.post, "/sync/shares", #"{"list": "\#(list)", "with": "bob"}"#, token: owner.token).status == .noContent)
            #expect(try await bob.get("/web").text.contains("Private"))
            #expect(try await bob.post("/web/reminders/\(reminder)/complete", [("done", "1")]).status == .seeOther)
            #expect(try await ana.get("/web/lists/\(list)").text.contains("aria-label=\"Mark not done: Secret\""))
        }
    }

    @Test func aSignedOutSessionsCookieStopsWorking() async throws {
        try await withSyncServer { client, _ in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let stolen = ana
            let out = try await ana.post("/web/sign-out")
            #expect(out.status == .seeOther && out.headers[.location] == "/web/sign-in")
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            var thief = stolen
            let replay = try await thief.get("/web")
            #expect(replay.status == .seeOther && replay.headers[.location] == "/web/sign-in", "a signed-out cookie still opened the home page")
            #expect(try await thief.post("/web/lists", [("title", "After")]).status == .seeOther, "sent to sign in")
            // Signed in again: a new session, the account's data still there.
            try await ana.signUp("ana", signIn: true)
            #expect(try await ana.get("/web").status == .ok)
        }
    }

    @Test func theCookieIsSecureBehindATLSProxy() async throws {
        try await withSyncServer { client, _ in
            var ana = WebVisitor(client)
            ana.headers[try #require(HTTPFields.Element.Name("X-Forwarded-Proto"))] = "https"
            let answer = try await ana.post("/web/sign-up", [("name", "ana"), ("password", "correct horse battery")], csrf: false)
            #expect(answer.headers[.setCookie]?.hasSuffix("; Secure") == true)
        }
    }

    @Test func aWebEditIsPulledByTheAccountsDevices() async throws {
        try await withSyncServer { client, _ in
            let device = try await client.signUp("ana")
            var ana = WebVisitor(client)
            try await ana.signUp("ana", signIn: true)
            let list = try #require(try await ana.post("/web/lists", [("title", "From the web")]).locationID)
            _ = try await ana.post("/web/lists/\(list)/reminders", [("title", "Typed in a browser")])
            let page = try await client.pull(as: device)
            #expect(page.status == .ok)
            let pulled = try wire(SyncPage.self, page)
            let titles = pulled.changes.compactMap { $0.row.registers["title"]?.value }
            #expect(titles.contains(.text("From the web")) && titles.contains(.text("Typed in a browser")), "\(titles)")
        }
    }

    @Test func aReminderIsEditedFieldByFieldMovedRenamedWithItsListAndDeletedWithIt() async throws {
        try await withSyncServer { client, store in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let home = try #require(try await ana.post("/web/lists", [("title", "Home")]).locationID)
            let work = try #require(try await ana.post("/web/lists", [("title", "Work")]).locationID)
            _ = try await ana.post("/web/lists/\(home)/reminders", [("title", "Paint")])
            let paint = try #require(reminderIDs(try await ana.get("/web/lists/\(home)")).first)
            let page = try await ana.get("/web/reminders/\(paint)")
            #expect(page.status == .ok && page.text.contains("<h1>Paint</h1>") && page.text.contains("value=\"\(home)\" selected"))

            let fields = [("title", "Paint the fence"), ("notes", "White, two coats </textarea><script>x</script>"), ("due", "2026-12-24T18:00"),
                          ("priority", "3"), ("flagged", "on"), ("list", work)]
            let saved = try await ana.post("/web/reminders/\(paint)", fields)
            #expect(saved.status == .seeOther && saved.headers[.location] == "/web/lists/\(work)", "saved and shown in the list it moved to")
            let edited = try await ana.get("/web/reminders/\(paint)")
            #expect(edited.text.contains("value=\"Paint the fence\"") && edited.text.contains("value=\"2026-12-24T18:00\""))
            #expect(edited.text.contains("<option value=\"3\" selected>High</option>") && edited.text.contains("name=\"flagged\" checked"))
            #expect(edited.text.contains("value=\"\(work)\" selected") && !edited.text.contains("name=\"completed\" checked"))
            #expect(edited.text.contains("White, two coats &lt;/textarea&gt;&lt;script&gt;x&lt;/script&gt;</textarea>"), "the notes, as text")
            let (inWork, inHome) = try await (titles(ana.get("/web/lists/\(work)")), titles(ana.get("/web/lists/\(home)")))
            #expect(inWork == ["Paint the fence"] && inHome.isEmpty, "moved: \(inWork), \(inHome)")
            let stored = try await store.read { db in try db.fetchOne(Reminder.self, "SELECT * FROM \(ident: Reminder.tableName)") }
            #expect(stored?.dueDate == Date(timeIntervalSince1970: 1_798_135_200) && stored?.priority == .high && stored?.isFlagged == true)

            // Wrong fields are refused with the field named, and nothing changes.
            for (field, value, says) in [("due", "tomorrow", "the due date"), ("priority", "9", "the priority"), ("title", " ", "needs a title"), ("list", "x", "choose a list")] {
                let wrong = try await ana.post("/web/reminders/\(paint)", fields.filter { $0.0 != field } + [(field, value)])
                #expect(wrong.status == .unprocessableContent && wrong.text.contains(says), "\(field)=\(value): \(wrong.status)")
            }
            // A list of another account is no list to move to.
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            let bobs = try #require(try await bob.post("/web/lists", [("title", "Bob's")]).locationID)
            #expect(try await ana.post("/web/reminders/\(paint)", fields.filter { $0.0 != "list" } + [("list", bobs)]).status == .notFound)
            #expect(titles(try await bob.get("/web/lists/\(bobs)")).isEmpty)

            // Renamed, then deleted with what it holds.
            #expect(try await ana.post("/web/lists/\(work)/edit", [("title", "Office")]).status == .seeOther)
            #expect(try await ana.get("/web").text.contains(">Office</span>"))
            #expect(try await ana.post("/web/lists/\(work)/delete").status == .seeOther)
            #expect(!(try await ana.get("/web")).text.contains("Office"))
            #expect(try await ana.get("/web/reminders/\(paint)").status == .notFound)
            #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: Reminder.tableName)") } == 0)
        }
    }

    @Test func smartListsAndSearchGatherTheAccountsListsAndNoOtherAccounts() async throws {
        try await withSyncServer { client, _ in
            var ana = WebVisitor(client)
            try await ana.signUp("ana")
            let list = try #require(try await ana.post("/web/lists", [("title", "Shop")]).locationID)
            for title in ["Oat milk", "Bread", "Tea"] { _ = try await ana.post("/web/lists/\(list)/reminders", [("title", title)]) }
            let ids = reminderIDs(try await ana.get("/web/lists/\(list)"))
            try #require(ids.count == 3)
            let formatter = DateFormatter()
            (formatter.locale, formatter.timeZone, formatter.dateFormat) = (Locale(identifier: "en_US_POSIX"), TimeZone(identifier: "UTC"), "yyyy-MM-dd'T'HH:mm")
            let yesterday = formatter.string(from: Date().addingTimeInterval(-86_400))
            _ = try await ana.post("/web/reminders/\(ids[0])", [("title", "Oat milk"), ("due", yesterday), ("priority", "0"), ("list", list)])
            _ = try await ana.post("/web/reminders/\(ids[1])", [("title", "Bread"), ("flagged", "on"), ("priority", "0"), ("list", list)])
            _ = try await ana.post("/web/reminders/\(ids[2])/complete", [("done", "1")])
            var bob = WebVisitor(client)
            try await bob.signUp("bob")
            let bobs = try #require(try await bob.post("/web/lists", [("title", "Bob's")]).locationID)
            _ = try await bob.post("/web/lists/\(bobs)/reminders", [("title", "Oat bars")])

            let home = try await ana.get("/web")
            for (smart, count) in [("Today", 1), ("Scheduled", 1), ("All", 2), ("Flagged", 1), ("Completed", 1)] {
                #expect(home.text.contains("\(smart)</span></a> <span class=\"count\" aria-label=\"\(count) reminders\">"), "\(smart) counts \(count)")
            }
            for (smart, expected) in [("today", ["Oat milk"]), ("scheduled", ["Oat milk"]), ("all", ["Oat milk", "Bread"]), ("flagged", ["Bread"]), ("completed", ["Tea"])] {
                #expect(titles(try await ana.get("/web/smart/\(smart)")) == expected, "the smart list \(smart)")
            }
            #expect(try await ana.get("/web/smart/someday").status == .notFound)
            #expect(titles(try await bob.get("/web/smart/all")) == ["Oat bars"])

            #expect(titles(try await ana.get("/web/search?q=oa")) == ["Oat milk"], "a prefix, in ana's lists only")
            #expect(titles(try await bob.get("/web/search?q=oat")) == ["Oat bars"])
            #expect(titles(try await ana.get("/web/search?q=te")) == ["Tea"], "a done one found too")
            let attack = try await ana.get("/web/search?q=%22%3E%3Cscript%3Ex%3C%2Fscript%3E")
            #expect(attack.status == .ok && !attack.text.contains("<script>x") && attack.text.contains("value=\"&quot;&gt;&lt;script&gt;x&lt;/script&gt;\""))
        }
    }
}

import Depot
import DepotPostgres
import Foundation
import Reminders
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The web app in a real browser (Debian's chromium, headless, through
/// WebDriver) against the sync server on a real port and a throwaway
/// PostgreSQL schema. In CI both must be there: a missing one fails.
@Suite(.serialized) struct BrowserTests {
    /// The browser, or nil with the skip recorded as a failure in CI.
    func browser() async throws -> WebDriver? {
        do {
            return try await WebDriver.start()
        } catch {
            #expect(ProcessInfo.processInfo.environment["CI"] != "true", "CI must run the browser tests: \(error)")
            return nil
        }
    }

    @Test func twoBrowsersOfOneAccountSeeEachOthersChangesWithoutAReloadAndAnotherAccountSeesNoneUntilShared() async throws {
        guard let driver = try await browser() else { return }
        defer { driver.stop() }
        try await withSyncServerOnPostgres { server, store in
            let (ana, phone, bob) = try await (driver.session(), driver.session(width: 390, height: 844), driver.session())
            do {
                try await walkThrough(server, store, ana, phone, bob)
            } catch {
                for session in [ana, phone, bob] { await session.close() }
                throw error
            }
            for session in [ana, phone, bob] { await session.close() }
        }
    }

    func walkThrough(_ server: URL, _ store: Store, _ ana: BrowserSession, _ phone: BrowserSession, _ bob: BrowserSession) async throws {
        do {
            let web = server.appendingPathComponent("web")

            // Sign up, add a list and reminders, as a person types them.
            try await ana.go(web.appendingPathComponent("sign-up"))
            try await ana.type("ana", into: "#name")
            try await ana.type("correct horse battery", into: "#password")
            try await ana.click("form button[type=submit]")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent === 'My Lists'", "the home page after sign-up")
            try await ana.type("Groceries", into: "#new-list")
            try await ana.click("form[action='/web/lists'] button")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent.endsWith('Groceries') === true", "the new list's page")
            let here = try await ana.run("return location.href") as? String
            let listURL = try #require(here.flatMap(URL.init(string:)), "the list page's address")
            for title in ["Milk", "<img src=x onerror=\"window.pwned=1\">"] {
                try await ana.type(title, into: "#new-reminder")
                try await ana.click("form[action$='/reminders'] button")
                try await ana.wait(until: "return [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === \(json(title)))", "\(title) in the list")
            }

            // The same account on a phone-sized browser, on the list's page.
            try await phone.go(web.appendingPathComponent("sign-in"))
            try await phone.type("ana", into: "#name")
            try await phone.type("correct horse battery", into: "#password")
            try await phone.click("form button[type=submit]")
            try await phone.wait(until: "return document.querySelector('h1')?.textContent === 'My Lists'", "the phone's home page")
            try await phone.go(listURL)
            try await phone.wait(until: "return document.documentElement.dataset.live === 'open'", "the phone's page to listen")
            _ = try await phone.run("window.stayed = true")

            // A change in one browser shows in the other without a reload.
            try await ana.type("Bread", into: "#new-reminder")
            try await ana.click("form[action$='/reminders'] button")
            let added = try await phone.wait(until: "return window.stayed === true && [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'Bread')",
                                             "the phone to show Bread without a reload")
            _ = try await ana.run("[...document.querySelectorAll('.reminders li')].find(li => li.querySelector('.title').textContent === 'Milk').querySelector('.check').click()")
            let completed = try await phone.wait(until: "return window.stayed === true && [...document.querySelectorAll('.reminders li.done .title')].some(e => e.textContent === 'Milk')",
                                                 "the phone to show Milk done without a reload")
            // Every field of a reminder on its own page; the other browser shows the new title.
            _ = try await ana.run("[...document.querySelectorAll('.reminders a.title')].find(a => a.textContent === 'Bread').click()")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent === 'Bread'", "Bread's page")
            _ = try await ana.run("document.getElementById('title').value = ''")
            try await ana.type("Sourdough bread", into: "#title")
            try await ana.type("From the bakery on the corner", into: "#notes")
            _ = try await ana.run("document.getElementById('due').value = '2026-12-24T08:30'; document.getElementById('priority').value = '2'")
            try await ana.click("input[name=flagged]")
            try await ana.type("#bakery", into: "#tags")
            try await ana.click("main form button[type=submit]")
            try await ana.wait(until: "return [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'Sourdough bread')", "the list after saving")
            let renamed = try await phone.wait(until: "return window.stayed === true && [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'Sourdough bread')",
                                               "the phone to show the new title without a reload")
            _ = try await ana.run("[...document.querySelectorAll('.reminders a.title')].find(a => a.textContent === 'Sourdough bread').click()")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent === 'Sourdough bread'", "the edited reminder's page")
            let kept = try await ana.run("""
                return [document.getElementById('notes').value, document.getElementById('due').value, document.getElementById('priority').value,
                        document.querySelector('input[name=flagged]').checked].join('|')
                """) as? String
            #expect(kept == "From the bakery on the corner|2026-12-24T08:30|2|true", "the fields as saved: \(kept ?? "-")")
            #expect(try await ana.run("return document.getElementById('tags').value") as? String == "#bakery")
            let reminderURL = try #require((try await ana.run("return location.href") as? String).flatMap(URL.init(string:)), "the reminder's address")
            try await ana.go(listURL)
            try await phone.wait(until: "return window.stayed === true && [...document.querySelectorAll('.reminders li')].some(li => li.querySelector('.title').textContent === 'Sourdough bread' && li.querySelector('.tag')?.textContent === '#bakery')",
                                 "the phone to show the new tag without a reload")
            print("BrowserTests: another browser showed an added reminder \(added), a completed one \(completed) and a renamed one \(renamed) after the form was sent")

            // Search as you type, from the home page: no button pressed.
            try await ana.go(web)
            try await ana.type("sourd", into: "#q")
            try await ana.wait(until: "return location.pathname === '/web/search' && [...document.querySelectorAll('.reminders .title')].map(e => e.textContent).join() === 'Sourdough bread'",
                               "the search page to show what the typed text finds")
            // (The page may have moved on after fewer letters than were typed: the field is typed into afresh.)
            _ = try await ana.run("document.getElementById('q').value = ''")
            try await ana.type("bread zzz", into: "#q")
            try await ana.wait(until: "return document.getElementById('q').value === 'bread zzz' && document.body.textContent.includes('No reminder matches.')",
                               "the results to follow the text as it is typed")
            _ = try await ana.run("document.getElementById('q').value = ''")
            try await ana.type("bread", into: "#q")
            try await ana.wait(until: "return document.getElementById('q').value === 'bread' && [...document.querySelectorAll('.reminders .title')].map(e => e.textContent).join() === 'Sourdough bread'",
                               "the results to follow the text again")
            try await ana.go(listURL)

            // A writer that is not the web app: `reminders add` in a process of its own, on the server's
            // database. The open page shows its reminder too, through PostgreSQL's notifications.
            let schema = try #require(try await store.read { db in try db.fetchOne(String.self, "SELECT current_schema()") })
            let base = try #require(ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"])
            let command = SyncEndToEndTests.Device(database: base + (base.contains("?") ? "&" : "?") + "search_path=" + schema)
            let typed = ContinuousClock.now
            try await command.run(["add", "Added elsewhere", "--list", "Groceries"])
            let byCommand = try await phone.wait(until: "return window.stayed === true && [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'Added elsewhere')",
                                                 "the phone to show a reminder the command added, without a reload")
            print("BrowserTests: the phone showed the command's reminder \(byCommand) after the command exited (\(ContinuousClock.now - typed) after it started)")

            // A device of the account (the command on an SQLite file of its own) syncs a reminder in: the page shows it.
            let devices = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: devices, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: devices) }
            var laptop = SyncEndToEndTests.Device(database: devices.appendingPathComponent("laptop.sqlite").path)
            laptop.password = "correct horse battery"
            try await laptop.run(["sync", "sign-in", "ana", "--server", server.absoluteString])
            try await laptop.run(["sync"])
            try await laptop.run(["add", "From the laptop", "--list", "Groceries"])
            try await laptop.run(["sync"])
            let synced = try await phone.wait(until: "return window.stayed === true && [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'From the laptop')",
                                              "the phone to show a device's synced reminder, without a reload")
            print("BrowserTests: the phone showed a device's reminder \(synced) after its sync")

            // Reorder by dragging a reminder's handle with the mouse, then by the keyboard; the phone follows.
            try await ana.wait(until: "return [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'From the laptop')", "ana's page to show the laptop's reminder")
            let openTitles = "return [...document.querySelectorAll('.reminders li.open .title')].map(e => e.textContent).join('|')"
            let laptopID = try #require(try await ana.run("return [...document.querySelectorAll('.reminders li')].find(li => li.querySelector('.title').textContent === 'From the laptop').dataset.id") as? String)
            try await ana.drag("li[data-id='\(laptopID)'] .handle", to: ".reminders li.open", dy: -8)
            let first = "return (\(openTitles.dropFirst(7))).startsWith('From the laptop|')"
            try await ana.wait(until: "return document.documentElement.dataset.moved !== undefined", "the drop's move to be answered")
            print("BrowserTests: the drop's move answered \(try await ana.run("return document.documentElement.dataset.moved") ?? "-"); ana's open reminders: \(try await ana.run(openTitles) ?? "-")")
            try await ana.wait(until: first, "the dragged reminder first on ana's page")
            let dragged = try await phone.wait(until: "return window.stayed === true && " + first.dropFirst(7), "the phone to show the dragged reminder first")
            _ = try await ana.run("document.getElementById('down-\(laptopID)').focus()")
            try await ana.press("\u{E007}")
            let second = "return (\(openTitles.dropFirst(7))).split('|')[1] === 'From the laptop'"
            try await ana.wait(until: second + " && document.activeElement?.id === 'down-\(laptopID)'", "the reminder one down on ana's page, the focus kept on its button")
            try await phone.wait(until: "return window.stayed === true && " + second.dropFirst(7), "the phone to show the reminder one down")
            print("BrowserTests: the phone showed a drag's new order \(dragged) after the drop")

            // A title's markup never ran, in either browser.
            for session in [ana, phone] { #expect(try await session.run("return window.pwned === undefined") as? Bool == true, "a title's onerror ran") }

            // Another account sees none of it, until the list is shared with it (live, too).
            try await bob.go(web.appendingPathComponent("sign-up"))
            try await bob.type("bob", into: "#name")
            try await bob.type("another good password", into: "#password")
            try await bob.click("form button[type=submit]")
            try await bob.wait(until: "return document.querySelector('h1')?.textContent === 'My Lists'", "bob's home page")
            try await bob.wait(until: "return document.documentElement.dataset.live === 'open'", "bob's page to listen")
            #expect(try await bob.run("return document.body.textContent.includes('Groceries')") as? Bool == false, "bob sees ana's list")
            _ = try await bob.run("window.stayed = true")
            // Shared from the list's page.
            _ = try await ana.run("document.querySelector('main details').open = true")
            try await ana.type("bob", into: "#share-with")
            try await ana.click("form[action$='/share'] button")
            try await ana.wait(until: "return document.querySelector('[aria-label=\"Stop sharing with bob\"]') !== null", "ana's page to say the list is shared with bob")
            try await bob.wait(until: "return window.stayed === true && document.body.textContent.includes('Groceries')", "bob to see the shared list without a reload")

            // A reminder moved to another list, on its page: it leaves the list in the other browser.
            try await ana.go(web)
            try await ana.type("Errands", into: "#new-list")
            try await ana.click("form[action='/web/lists'] button")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent.endsWith('Errands') === true", "the Errands list's page")
            try await ana.go(listURL)
            _ = try await ana.run("[...document.querySelectorAll('.reminders a.title')].find(a => a.textContent === 'Added elsewhere').click()")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent === 'Added elsewhere'", "the page of the reminder to move")
            _ = try await ana.run("const list = document.getElementById('list'); list.value = [...list.options].find(o => o.textContent === 'Errands').value")
            try await ana.click("main form button[type=submit]")
            try await ana.wait(until: "return document.querySelector('h1')?.textContent.endsWith('Errands') === true && [...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'Added elsewhere')",
                               "the reminder in the Errands list")
            try await phone.wait(until: "return window.stayed === true && ![...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'Added elsewhere')",
                                 "the phone's Groceries page to lose the moved reminder without a reload")
            try await ana.go(listURL)

            // A reminder deleted in one browser is gone from the other.
            _ = try await ana.run("[...document.querySelectorAll('.reminders li')].find(li => li.querySelector('.title').textContent === 'From the laptop').querySelector('.delete').click()")
            try await phone.wait(until: "return window.stayed === true && ![...document.querySelectorAll('.reminders .title')].some(e => e.textContent === 'From the laptop')",
                                 "the phone to drop the deleted reminder without a reload")

            // Layout at a desktop's and a phone's width: no sideways scrolling, nothing cut or on top of another.
            let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/web-screenshots")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, width, height) in [("desktop", 1280, 800), ("phone", 390, 844)] {
                try await ana.resize(width: width, height: height)
                for (page, url) in [("home", web), ("list", listURL), ("reminder", reminderURL)] {
                    try await ana.go(url)
                    try await ana.wait(until: "return document.readyState === 'complete'", "the \(page) page to load")
                    let fits = try await ana.run("return document.documentElement.scrollWidth <= window.innerWidth") as? Bool
                    #expect(fits == true, "the \(page) page scrolls sideways at \(width) px")
                    let unlabelled = try await ana.run(Self.accessibilityCheck) as? [String] ?? ["(the check did not run)"]
                    #expect(unlabelled.isEmpty, "on the \(page) page: \(unlabelled)")
                    let overlaps = try await ana.run(Self.overlapCheck) as? [String] ?? ["(the check did not run)"]
                    #expect(overlaps.isEmpty, "on the \(page) page at \(width) px, these overlap or are cut: \(overlaps)")
                    let path = folder.appendingPathComponent("\(page)-\(name).png")
                    try await ana.screenshot().write(to: path)
                    print("BrowserTests: screenshot \(path.path)")
                }
            }
        }
    }

    /// What a screen reader needs and the page lacks: the page's language and
    /// title, a banner and a main landmark, a name for every control (a label
    /// for it, or `aria-label`), for every link and button, one `h1`, headings
    /// that skip no level, ids that are unique and that the ARIA references
    /// find, a name for each of several navigation landmarks, `alt` on images.
    /// (The rules of axe-core's "serious" and "critical" kinds that apply to
    /// these pages; axe-core itself is not vendored: no npm registry here.)
    static let accessibilityCheck = """
        const problems = [];
        if (!document.documentElement.lang) problems.push('no lang on <html>');
        if (!document.title.trim()) problems.push('no <title>');
        if (!document.querySelector('header')) problems.push('no banner (<header>)');
        if (document.querySelectorAll('main').length !== 1) problems.push('not one <main>');
        if (document.querySelectorAll('h1').length !== 1) problems.push('not one <h1>');
        const named = e => (e.getAttribute('aria-label') || '').trim() || (e.labels && [...e.labels].some(l => l.textContent.trim()));
        for (const e of document.querySelectorAll('input:not([type=hidden]), select, textarea')) if (!named(e)) problems.push('unlabelled ' + e.tagName.toLowerCase() + ' ' + (e.name || e.id));
        for (const e of document.querySelectorAll('a, button')) if (!((e.getAttribute('aria-label') || '').trim() || e.textContent.trim())) problems.push('nameless ' + e.tagName.toLowerCase());
        const ids = [...document.querySelectorAll('[id]')].map(e => e.id);
        for (const id of new Set(ids)) if (ids.filter(x => x === id).length > 1) problems.push('duplicate id ' + id);
        for (const e of document.querySelectorAll('[aria-labelledby], [aria-describedby]'))
          for (const id of ((e.getAttribute('aria-labelledby') || '') + ' ' + (e.getAttribute('aria-describedby') || '')).split(' ').filter(Boolean))
            if (!document.getElementById(id)) problems.push('names a missing element: ' + id);
        let level = 0;
        for (const h of document.querySelectorAll('h1, h2, h3, h4')) { const next = Number(h.tagName[1]); if (next > level + 1) problems.push('heading skips to ' + h.tagName); level = next; }
        for (const e of document.querySelectorAll('nav')) if (document.querySelectorAll('nav').length > 1 && !e.getAttribute('aria-label')) problems.push('an unnamed nav among several');
        for (const e of document.querySelectorAll('img')) if (!e.hasAttribute('alt')) problems.push('an img without alt');
        return problems;
        """

    /// The texts and controls of `<main>` that overlap one another or
    /// overflow their box: each as its tag and text.
    static let overlapCheck = """
        const items = [...document.querySelectorAll('main h1, main a, main button, main input, main label, main .title, main .count')]
          .filter(e => e.getClientRects().length > 0);
        const name = e => e.tagName.toLowerCase() + ' ' + (e.textContent || e.getAttribute('aria-label') || e.id).trim().slice(0, 30);
        const problems = [];
        for (const e of items) { if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow === 'hidden') problems.push('cut: ' + name(e)); }
        for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
          const [a, b] = [items[i], items[j]];
          if (a.contains(b) || b.contains(a)) continue;
          const [r, s] = [a.getBoundingClientRect(), b.getBoundingClientRect()];
          if (r.left < s.right - 1 && s.left < r.right - 1 && r.top < s.bottom - 1 && s.top < r.bottom - 1) problems.push(name(a) + ' / ' + name(b));
        }
        return problems;
        """

    func json(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}

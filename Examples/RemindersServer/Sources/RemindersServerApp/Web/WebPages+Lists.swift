import Foundation
import Reminders

extension WebPages {
    /// The home page's content: the lists with their open counts and
    /// colours, the tags, and a form for a new list.
    static func homeMain(_ lists: [WebData.ListSummary], tags: [WebData.TagSummary], session: WebSession, problem message: String? = nil) -> HTML {
        let items: [HTML] = lists.map { summary in
            """
            <li><a href="/web/lists/\(WebData.key(summary.list.id))"><span class="dot" style="background:\(color(summary.list.color))" aria-hidden="true"></span>\
            <span class="title">\(summary.list.title)</span></a> <span class="count" aria-label="\(summary.open) open">\(summary.open)</span></li>
            """
        }
        let empty: HTML? = lists.isEmpty ? "<p>No lists yet.</p>" : nil
        let tagItems: [HTML] = tags.map { summary in
            """
            <li><a class="tag" href="/web/tags/\(WebData.key(summary.tag.id))">#\(summary.tag.title)</a> \
            <span class="count" aria-label="\(summary.count) reminders">\(summary.count)</span></li>
            """
        }
        let tagSection: HTML? = tags.isEmpty ? nil : """
            <h2 id="tags-heading">Tags</h2><ul class="tags" aria-labelledby="tags-heading">\(tagItems)</ul>
            """
        return """
            <h1>My Lists</h1>\(problem(message))\(empty)<ul class="lists" aria-label="Lists">\(items)</ul>
            <form method="post" action="/web/lists" class="inline">\(csrfField(session))
            <label for="new-list">New list</label><input id="new-list" name="title" required maxlength="500">
            <label for="new-list-color">Colour</label><input id="new-list-color" name="color" type="color" value="\(color(WebData.defaultColor))">
            <button type="submit">Add list</button></form>\(tagSection)
            """
    }

    /// A list's page content: a page of its reminders, each with its tags
    /// and actions (done, move up and down, delete; dragged by its handle
    /// with a pointer), a form for a new one, and the list's own settings.
    static func listMain(_ page: WebData.ListPage, sharedWith: [String], session: WebSession, problem message: String? = nil) -> HTML {
        let id = WebData.key(page.list.id)
        let items: [HTML] = page.reminders.map { reminder in reminderItem(reminder, tags: page.tags[reminder.id] ?? []) }
        let empty: HTML? = page.reminders.isEmpty ? "<p>No reminders.</p>" : nil
        return """
            <p><a href="/web">← Lists</a></p>
            <h1><span class="dot" style="background:\(color(page.list.color))" aria-hidden="true"></span>\(page.list.title)</h1>\(problem(message))
            <form method="post" action="/web/lists/\(id)/reminders" class="inline">\(csrfField(session))
            <label for="new-reminder">New reminder</label><input id="new-reminder" name="title" required maxlength="500">
            <button type="submit">Add</button></form>
            \(empty)<form method="post" action="/web/lists/\(id)/reminders" class="items">\(csrfField(session))\
            <ul class="reminders" aria-label="Reminders" data-list="\(id)" data-csrf="\(session.csrf)">\(items)</ul></form>
            \(pages(total: page.total, offset: page.offset, base: "/web/lists/\(id)"))
            <details><summary>Rename, recolour, share or delete this list</summary>
            <form method="post" action="/web/lists/\(id)/edit" class="inline">\(csrfField(session))
            <label for="list-title">Title</label><input id="list-title" name="title" required maxlength="500" value="\(page.list.title)">
            <label for="list-color">Colour</label><input id="list-color" name="color" type="color" value="\(color(page.list.color))">
            <button type="submit">Save</button></form>
            \(shares(id, sharedWith, session: session))
            <form method="post" action="/web/lists/\(id)/delete">\(csrfField(session))
            <button type="submit" class="delete">Delete the list and its \(page.total) reminders</button></form></details>
            """
    }

    /// One reminder of a list's page: its buttons post the list's one form
    /// (one CSRF token for the page) to their own actions.
    static func reminderItem(_ reminder: Reminder, tags: [String]) -> HTML {
        let rid = WebData.key(reminder.id)
        let (done, label) = reminder.isCompleted ? ("0", "Mark not done: ") : ("1", "Mark done: ")
        let chips: [HTML] = tags.map { "<span class=\"tag\">#\($0)</span>" }
        let tagLine: HTML? = tags.isEmpty ? nil : "<span class=\"tags\" aria-label=\"Tags\">\(chips)</span>"
        let base = "/web/reminders/" + rid
        return """
            <li class="\(reminder.isCompleted ? "done" : "open")" data-id="\(rid)"><span class="handle" aria-hidden="true" title="Drag to move">⠿</span>\
            <button type="submit" formaction="\(base)/complete" name="done" value="\(done)" class="check" aria-label="\(label)\(reminder.title)" \
            aria-pressed="\(reminder.isCompleted ? "true" : "false")"></button>\
            <span class="body"><a class="title" href="\(base)">\(reminder.title)</a>\(tagLine)</span><span class="moves">\
            <button type="submit" formaction="\(base)/move" name="direction" value="up" class="move" id="up-\(rid)" aria-label="Move up: \(reminder.title)">↑</button>\
            <button type="submit" formaction="\(base)/move" name="direction" value="down" class="move" id="down-\(rid)" aria-label="Move down: \(reminder.title)">↓</button>\
            </span><button type="submit" formaction="\(base)/delete" class="delete" aria-label="Delete: \(reminder.title)">Delete</button></li>
            """
    }

    /// The list's sharing: with whom it is shared, each with a button to stop, and a form to share it.
    static func shares(_ list: String, _ names: [String], session: WebSession) -> HTML {
        let items: [HTML] = names.map { name in
            """
            <li><span class="title">\(name)</span><form method="post" action="/web/lists/\(list)/unshare">\(csrfField(session))\
            <input type="hidden" name="with" value="\(name)"><button type="submit" class="delete" aria-label="Stop sharing with \(name)">Stop sharing</button></form></li>
            """
        }
        let current: HTML? = names.isEmpty ? nil : "<ul class=\"shares\" aria-label=\"Shared with\">\(items)</ul>"
        return """
            \(current)<form method="post" action="/web/lists/\(list)/share" class="inline">\(csrfField(session))
            <label for="share-with">Share with</label><input id="share-with" name="with" required maxlength="100" autocomplete="off">
            <button type="submit">Share</button></form>
            """
    }

    /// Links to the previous and next pages of a long list (nothing for a list on one page).
    static func pages(total: Int, offset: Int, base: String) -> HTML? {
        guard total > WebData.pageSize || offset > 0 else { return nil }
        let size = WebData.pageSize
        let last = min(total, offset + size)
        let previous: HTML? = offset > 0 ? "<a href=\"\(base)?from=\(max(0, offset - size))\" rel=\"prev\">Previous</a>" : nil
        let next: HTML? = last < total ? "<a href=\"\(base)?from=\(last)\" rel=\"next\">Next</a>" : nil
        return """
            <nav class="pages" aria-label="Pages">\(previous) <span>\(offset + 1)–\(last) of \(total)</span> \(next)</nav>
            """
    }
}

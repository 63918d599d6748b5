import Foundation
import Reminders

extension WebPages {
    /// The smart lists with their counts, and the search field, above the lists.
    static func smartMain(_ counts: [WebData.SmartList: Int]) -> HTML {
        let items: [HTML] = WebData.SmartList.allCases.map { smart in
            let count = counts[smart] ?? 0
            return """
                <li><a href="/web/smart/\(smart.rawValue)"><span class="title">\(smart.title)</span></a> \
                <span class="count" aria-label="\(count) reminders">\(count)</span></li>
                """
        }
        return """
            <form method="get" action="/web/search" role="search" class="inline">
            <label for="q">Search</label><input id="q" name="q" type="search" maxlength="500" data-as-you-type>
            <button type="submit">Search</button></form>
            <ul class="smart" aria-label="Smart lists">\(items)</ul>
            """
    }

    /// Reminders gathered from several lists: each with its list and due date, linked to its page.
    static func foundList(_ found: [WebData.Found], label: String, empty: String) -> HTML {
        guard !found.isEmpty else { return "<p>\(empty)</p>" }
        let items: [HTML] = found.map { item in
            let due: HTML? = item.reminder.dueDate.map { "<span class=\"due\">\(dueText($0).replacingOccurrences(of: "T", with: " "))</span>" }
            return """
                <li class="\(item.reminder.isCompleted ? "done" : "open")"><span class="dot" style="background:\(color(item.list.color))" aria-hidden="true"></span>\
                <a class="title" href="/web/reminders/\(WebData.key(item.reminder.id))">\(item.reminder.title)</a>\
                <span class="count">\(item.list.title)</span>\(due)</li>
                """
        }
        return "<ul class=\"reminders\" aria-label=\"\(label)\">\(items)</ul>"
    }

    /// A smart list's page content: its first reminders, and how many more there are.
    static func smartListMain(_ smart: WebData.SmartList, _ found: [WebData.Found], total: Int) -> HTML {
        let more: HTML? = total > found.count ? "<p class=\"count\">The first \(found.count) of \(total).</p>" : nil
        return """
            <p><a href="/web">← Lists</a></p><h1>\(smart.title)</h1>
            \(foundList(found, label: smart.title, empty: "Nothing here."))\(more)
            """
    }

    /// A tag's page content: the reminders that carry it.
    static func tagMain(_ tag: Tag, _ found: [WebData.Found]) -> HTML {
        """
        <p><a href="/web">← Lists</a></p><h1>#\(tag.title)</h1>
        \(foundList(found, label: "Tagged #" + tag.title, empty: "No reminder carries this tag."))
        """
    }

    /// The search page's content: the field, kept as typed, and what matches.
    static func searchMain(_ text: String, _ found: [WebData.Found], unranked: Bool = false) -> HTML {
        let many: HTML? = unranked ? "<p class=\"count\" role=\"status\">More than \(WebData.rankedMatches) reminders match: the first \(found.count) found are shown. Type more to narrow it.</p>" : nil
        return """
        <p><a href="/web">← Lists</a></p><h1>Search</h1>
        <form method="get" action="/web/search" role="search" class="inline">
        <label for="q">Search</label><input id="q" name="q" type="search" maxlength="500" value="\(text)" data-as-you-type autofocus>
        <button type="submit">Search</button></form>
        \(many)\(text.isEmpty ? nil : foundList(found, label: "Results", empty: "No reminder matches."))
        """
    }
}

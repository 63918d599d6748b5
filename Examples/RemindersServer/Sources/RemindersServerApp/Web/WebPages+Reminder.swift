import Foundation
import Reminders

extension WebPages {
    /// A reminder's page: every field in one form, and the way back to its list.
    static func reminderMain(_ reminder: Reminder, tags: [Tag], lists: [WebData.ListSummary], session: WebSession, problem message: String? = nil) -> HTML {
        let id = WebData.key(reminder.id), list = WebData.key(reminder.remindersListID)
        let priorities: [HTML] = [(Priority.none, "None"), (.low, "Low"), (.medium, "Medium"), (.high, "High")].map { priority, name in
            "<option value=\"\(priority.rawValue)\"\(selected(reminder.priority == priority))>\(name)</option>"
        }
        let choices: [HTML] = lists.map { summary in
            "<option value=\"\(WebData.key(summary.list.id))\"\(selected(summary.list.id == reminder.remindersListID))>\(summary.list.title)</option>"
        }
        return """
            <p><a href="/web/lists/\(list)">← Back to the list</a></p>
            <h1>\(reminder.title)</h1>\(problem(message))
            <form method="post" action="/web/reminders/\(id)" class="stack">\(csrfField(session))
            <label for="title">Title</label><input id="title" name="title" required maxlength="500" value="\(reminder.title)">
            <label for="notes">Notes</label><textarea id="notes" name="notes" rows="4">\(reminder.notes)</textarea>
            <label for="due">Due (UTC)</label><input id="due" name="due" type="datetime-local" value="\(reminder.dueDate.map(dueText) ?? "")">
            <label for="priority">Priority</label><select id="priority" name="priority">\(priorities)</select>
            <label for="list">List</label><select id="list" name="list">\(choices)</select>
            <label for="tags">Tags</label><input id="tags" name="tags" value="\(tags.map { "#" + $0.title }.joined(separator: " "))" aria-describedby="tags-hint">
            <small id="tags-hint">Separated by spaces or commas, as #errand #home</small>
            <label class="check-label"><input type="checkbox" name="flagged"\(checked(reminder.isFlagged))> Flagged</label>
            <label class="check-label"><input type="checkbox" name="completed"\(checked(reminder.isCompleted))> Done</label>
            <button type="submit">Save</button></form>
            """
    }

    /// A due date as `<input type="datetime-local">` shows it, in UTC.
    static func dueText(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        return formatter.string(from: date)
    }

    static func selected(_ yes: Bool) -> HTML { yes ? " selected" : "" }
    static func checked(_ yes: Bool) -> HTML { yes ? " checked" : "" }
}

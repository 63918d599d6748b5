import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders

extension RemindersRoutes {
    /// The forms a signed-in person posts, each with the session's CSRF
    /// token, each answered by a redirect to the page that shows the change
    /// (or by the same page with the one-line problem, and a 4xx).
    static func formRoutes(_ sync: SyncEndpoints) -> [Route] {
        // Sharing a list, and stopping: one form each, the same answers.
        let sharing = [("share", true), ("unshare", false)].map { action, shared in
            Route(.post, "/web/lists/:list/\(action)") { request, context in
                try await form(request, context, sync) { session, data, form in
                    let id = try uuid("list", context)
                    do {
                        try await share(id, with: form["with"] ?? "", data, sync, context, shared: shared)
                        return redirect("/web/lists/\(WebData.key(id))")
                    } catch let error as ServerError where error.status != .internalServerError {
                        return try await listPage(id, session, data, sync, context, problem: error)
                    }
                }
            }
        }
        return sharing + [
            Route(.post, "/web/lists") { request, context in
                try await form(request, context, sync) { session, data, form in
                    do {
                        let list = try await data.createList(title: form["title"] ?? "", color: form["color"])
                        return redirect("/web/lists/\(WebData.key(list.id))")
                    } catch let error as ServerError where error.status == .unprocessableContent {
                        let (lists, tags) = try await data.server.store.read { db in (try WebData.home(db, data.account), try WebData.tags(db, data.account)) }
                        return html(WebPages.page(title: "Lists", session: session, WebPages.homeMain(lists, tags: tags, session: session, problem: error.message)),
                                    status: error.status)
                    }
                }
            },
            Route(.post, "/web/lists/:list/reminders") { request, context in
                try await form(request, context, sync) { session, data, form in
                    let id = try uuid("list", context)
                    do {
                        try await data.addReminder(title: form["title"] ?? "", to: id)
                        return redirect("/web/lists/\(WebData.key(id))")
                    } catch let error as ServerError where error.status == .unprocessableContent {
                        return try await listPage(id, session, data, sync, context, problem: error)
                    }
                }
            },
            Route(.post, "/web/lists/:list/edit") { request, context in
                try await form(request, context, sync) { session, data, form in
                    let id = try uuid("list", context)
                    do {
                        try await data.editList(id, title: form["title"] ?? "", color: form["color"])
                        return redirect("/web/lists/\(WebData.key(id))")
                    } catch let error as ServerError where error.status == .unprocessableContent {
                        return try await listPage(id, session, data, sync, context, problem: error)
                    }
                }
            },
            Route(.post, "/web/lists/:list/delete") { request, context in
                try await form(request, context, sync) { _, data, _ in
                    try await data.deleteList(try uuid("list", context))
                    return redirect("/web")
                }
            },
            Route(.post, "/web/reminders/:id/complete") { request, context in
                try await form(request, context, sync) { _, data, form in
                    let id = try uuid("id", context)
                    guard let done = form["done"], done == "1" || done == "0" else {
                        throw ServerError(status: .unprocessableContent, message: "done is 1 or 0", cause: "invalid field")
                    }
                    try await data.setCompleted(id, done == "1")
                    return redirect("/web/lists/\(WebData.key(try await data.reminder(id).remindersListID))")
                }
            },
            Route(.post, "/web/reminders/:id/move") { request, context in
                try await form(request, context, sync) { _, data, form in
                    let id = try uuid("id", context)
                    try await data.move(id, try WebData.Move(form))
                    return redirect("/web/lists/\(WebData.key(try await data.reminder(id).remindersListID))")
                }
            },
            Route(.post, "/web/reminders/:id/delete") { request, context in
                try await form(request, context, sync) { _, data, _ in
                    let id = try uuid("id", context)
                    let list = try await data.reminder(id).remindersListID
                    try await data.deleteReminder(id)
                    return redirect("/web/lists/\(WebData.key(list))")
                }
            },
            Route(.post, "/web/reminders/:id") { request, context in
                try await form(request, context, sync) { session, data, form in
                    let id = try uuid("id", context)
                    do {
                        let fields = try WebData.ReminderForm(form)
                        try await data.editReminder(id, fields)
                        return redirect("/web/lists/\(WebData.key(fields.list))")
                    } catch let error as ServerError where error.status == .unprocessableContent {
                        let reminder = try await data.reminder(id)
                        let (tags, lists) = try await data.server.store.read { db in
                            (try WebData.tags(db, data.account, of: reminder.id), try WebData.home(db, data.account))
                        }
                        return html(WebPages.page(title: reminder.title, session: session,
                                                  WebPages.reminderMain(reminder, tags: tags, lists: lists, session: session, problem: error.message)),
                                    status: error.status)
                    }
                }
            },
        ]
    }

    /// Shares a list the account owns with another account by name, or stops
    /// sharing it: 404 for no such account (or, to stop, no such share), 403
    /// for a list the account does not own, 422 for the account itself.
    static func share(_ list: UUID, with name: String, _ data: WebData, _ sync: SyncEndpoints, _ context: BasicRequestContext, shared: Bool) async throws {
        let name = name.trimmingCharacters(in: .whitespaces).lowercased()
        guard !name.isEmpty else { throw WebData.ReminderForm.invalid("name the account to share with") }
        try await data.server.store.read { db in try WebData.mustSee(db, RemindersList.tableName, list, data.account) }
        let other = try await sync.account(named: name, context)
        guard other != data.account else { throw WebData.ReminderForm.invalid("a list is shared with another account, not with its owner") }
        do {
            if shared {
                try await data.server.share(RemindersList.tableName, key: WebData.key(list), owner: data.account, with: other)
            } else {
                guard try await data.sharedWith(list, accounts: sync.accounts, logger: context.logger).contains(name) else {
                    throw ServerError(status: .notFound, message: "the list is not shared with \"\(name)\"", cause: "share not found")
                }
                try await data.server.unshare(RemindersList.tableName, key: WebData.key(list), owner: data.account, with: other)
            }
        } catch is SyncAccessDenied {
            throw ServerError(status: .forbidden, message: "only the list's owner shares it", cause: "not the owner")
        }
    }
}

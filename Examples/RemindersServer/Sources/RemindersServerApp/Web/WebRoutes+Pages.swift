import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders

extension RemindersRoutes {
    /// The pages a signed-in person reads: each read in one access, so it
    /// shows one moment of the data.
    static func pageRoutes(_ sync: SyncEndpoints) -> [Route] {
        [
            Route(.get, "/web") { request, context in
                try await page(request, context, sync) { session, data in
                    guard case .home(let lists, let counts, let tags) = try await data.server.store.read({ db in try WebData.shown(db, data.account, .home) })
                    else { throw WebData.notFound }
                    return html(WebPages.page(title: "Lists", session: session, live: WebPage.home.events,
                                              WebPages.smartMain(counts) + WebPages.homeMain(lists, tags: tags, session: session)))
                }
            },
            Route(.get, "/web/smart/:name") { request, context in
                try await page(request, context, sync) { session, data in
                    guard let smart = context.parameters.get("name").flatMap(WebData.SmartList.init(rawValue:)) else { throw WebData.notFound }
                    let (found, total) = try await data.server.store.read { db in try WebData.smart(db, data.account, smart) }
                    return html(WebPages.page(title: smart.title, session: session, live: WebPage.smart(smart).events,
                                              WebPages.smartListMain(smart, found, total: total)))
                }
            },
            Route(.get, "/web/tags/:id") { request, context in
                try await page(request, context, sync) { session, data in
                    let id = try uuid("id", context)
                    let (tag, found) = try await data.server.store.read { db in try WebData.tagged(db, data.account, id) }
                    return html(WebPages.page(title: "#" + tag.title, session: session, live: WebPage.tag(id).events, WebPages.tagMain(tag, found)))
                }
            },
            Route(.get, "/web/search") { request, context in
                try await page(request, context, sync) { session, data in
                    let text = String((request.uri.queryParameters.get("q") ?? "").prefix(500))
                    let (found, unranked) = try await data.server.store.read { db in try WebData.search(db, data.account, text) }
                    return html(WebPages.page(title: "Search", session: session, WebPages.searchMain(text, found, unranked: unranked)))
                }
            },
            Route(.get, "/web/lists/:list") { request, context in
                try await page(request, context, sync) { session, data in
                    let id = try uuid("list", context)
                    return try await listPage(id, offset: try WebPage.offset(request.uri.queryParameters), session, data, sync, context)
                }
            },
            Route(.get, "/web/reminders/:id") { request, context in
                try await page(request, context, sync) { session, data in
                    let reminder = try await data.reminder(try uuid("id", context))
                    let (tags, lists) = try await data.server.store.read { db in
                        (try WebData.tags(db, data.account, of: reminder.id), try WebData.home(db, data.account))
                    }
                    return html(WebPages.page(title: reminder.title, session: session,
                                              WebPages.reminderMain(reminder, tags: tags, lists: lists, session: session)))
                }
            },
        ]
    }

    /// A list's page (with a problem to show, from a form that failed, and its status).
    static func listPage(_ id: UUID, offset: Int = 0, _ session: WebSession, _ data: WebData, _ sync: SyncEndpoints, _ context: BasicRequestContext,
                         problem: ServerError? = nil) async throws -> Response {
        let list = try await data.list(id, offset: offset)
        let shared = try await data.sharedWith(id, accounts: sync.accounts, logger: context.logger)
        return html(WebPages.page(title: list.list.title, session: session, live: WebPage.list(id, offset: offset).events,
                                  WebPages.listMain(list, sharedWith: shared, session: session, problem: problem?.message)),
                    status: problem?.status ?? .ok)
    }
}

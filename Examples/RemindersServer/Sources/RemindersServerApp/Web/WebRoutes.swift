import Depot
import DepotSync
import Foundation
import Hummingbird
import Logging
import NIOCore
import Reminders
import ServiceLifecycle

extension RemindersRoutes {
    /// The web app's routes, on a sync server: pages under `/web` for the
    /// accounts' people, signed in with a session cookie, every change a form
    /// posted with its CSRF token and applied through the sync server, so the
    /// account's devices pull it; `/web/events` tells an open page when what it
    /// shows changed.
    static func webRoutes(_ sync: SyncEndpoints) -> [Route] {
        [
            Route(.get, "/web") { request, context in
                try await page(request, context, sync) { session, data in
                    let (lists, counts) = try await data.server.store.read { db in
                        (try WebData.home(db, data.account), try WebData.smartCounts(db, data.account))
                    }
                    return html(WebPages.page(title: "Lists", session: session, live: "/web/events",
                                              WebPages.smartMain(counts) + WebPages.homeMain(lists, session: session)))
                }
            },
            Route(.get, "/web/smart/:name") { request, context in
                try await page(request, context, sync) { session, data in
                    guard let smart = context.parameters.get("name").flatMap(WebData.SmartList.init(rawValue:)) else { throw WebData.notFound }
                    let found = try await data.server.store.read { db in try WebData.smart(db, data.account, smart) }
                    return html(WebPages.page(title: smart.title, session: session, live: "/web/events?smart=\(smart.rawValue)",
                                              WebPages.smartListMain(smart, found)))
                }
            },
            Route(.get, "/web/search") { request, context in
                try await page(request, context, sync) { session, data in
                    let text = String((request.uri.queryParameters.get("q") ?? "").prefix(500))
                    let found = try await data.server.store.read { db in try WebData.search(db, data.account, text) }
                    return html(WebPages.page(title: "Search", session: session, WebPages.searchMain(text, found)))
                }
            },
            Route(.get, "/web/lists/:list") { request, context in
                try await page(request, context, sync) { session, data in
                    let id = try uuid("list", context)
                    let list = try await data.list(id)
                    return html(WebPages.page(title: list.list.title, session: session, live: "/web/events?list=\(WebData.key(id))",
                                              WebPages.listMain(list, session: session)))
                }
            },
            Route(.post, "/web/lists") { request, context in
                try await form(request, context, sync) { session, data, form in
                    do {
                        let list = try await data.createList(title: form["title"] ?? "")
                        return redirect("/web/lists/\(WebData.key(list.id))")
                    } catch let error as ServerError where error.status == .unprocessableContent {
                        return html(WebPages.page(title: "Lists", session: session, WebPages.homeMain(try await data.home(), session: session, problem: error.message)),
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
                        let list = try await data.list(id)
                        return html(WebPages.page(title: list.list.title, session: session, WebPages.listMain(list, session: session, problem: error.message)),
                                    status: error.status)
                    }
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
            Route(.post, "/web/reminders/:id/delete") { request, context in
                try await form(request, context, sync) { _, data, _ in
                    let id = try uuid("id", context)
                    let list = try await data.reminder(id).remindersListID
                    try await data.deleteReminder(id)
                    return redirect("/web/lists/\(WebData.key(list))")
                }
            },
            Route(.get, "/web/reminders/:id") { request, context in
                try await page(request, context, sync) { session, data in
                    let reminder = try await data.reminder(try uuid("id", context))
                    return html(WebPages.page(title: reminder.title, session: session,
                                              WebPages.reminderMain(reminder, lists: try await data.home(), session: session)))
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
                        return html(WebPages.page(title: reminder.title, session: session,
                                                  WebPages.reminderMain(reminder, lists: try await data.home(), session: session, problem: error.message)),
                                    status: error.status)
                    }
                }
            },
            Route(.post, "/web/lists/:list/rename") { request, context in
                try await form(request, context, sync) { session, data, form in
                    let id = try uuid("list", context)
                    do {
                        try await data.renameList(id, to: form["title"] ?? "")
                        return redirect("/web/lists/\(WebData.key(id))")
                    } catch let error as ServerError where error.status == .unprocessableContent {
                        let list = try await data.list(id)
                        return html(WebPages.page(title: list.list.title, session: session, WebPages.listMain(list, session: session, problem: error.message)),
                                    status: error.status)
                    }
                }
            },
            Route(.post, "/web/lists/:list/delete") { request, context in
                try await form(request, context, sync) { _, data, _ in
                    try await data.deleteList(try uuid("list", context))
                    return redirect("/web")
                }
            },
            Route(.get, "/web/sign-in") { request, context in
                if try await WebSession.current(request, sync, logger: context.logger) != nil { return redirect("/web") }
                return html(WebPages.signIn(signUp: false))
            },
            Route(.get, "/web/sign-up") { _, _ in html(WebPages.signIn(signUp: true)) },
            Route(.post, "/web/sign-in") { request, context in
                try await signIn(request, context, sync, signUp: false)
            },
            Route(.post, "/web/sign-up") { request, context in
                try await signIn(request, context, sync, signUp: true)
            },
            Route(.post, "/web/sign-out") { request, context in
                let secure = WebSession.isSecure(request)
                if let session = try await WebSession.current(request, sync, logger: context.logger) {
                    try session.check(try await WebForm.read(request))
                    _ = try await sync.accounts.deleteDevice(session.device, of: session.account, logger: context.logger)
                }
                var response = redirect("/web/sign-in")
                response.headers[.setCookie] = WebSession.clearCookie(secure: secure)
                return response
            },
            Route(.get, "/web/events") { request, context in
                guard let session = try await WebSession.current(request, sync, logger: context.logger) else {
                    return Response(status: .unauthorized)
                }
                let list = request.uri.queryParameters.get("list").flatMap(UUID.init(uuidString:))
                let smart = request.uri.queryParameters.get("smart").flatMap(WebData.SmartList.init(rawValue:))
                return events(session, list: list, smart: smart, sync)
            },
            Route(.get, "/web/app.js") { _, _ in asset(WebAssets.script, type: "text/javascript; charset=utf-8") },
            Route(.get, "/web/app.css") { _, _ in asset(WebAssets.style, type: "text/css; charset=utf-8") },
        ]
    }

    /// A page for a signed-in person; the sign-in page for anyone else. A
    /// failure is a page too, with its status.
    static func page(_ request: Request, _ context: BasicRequestContext, _ sync: SyncEndpoints,
                     _ body: (WebSession, WebData) async throws -> Response) async throws -> Response {
        guard let session = try await WebSession.current(request, sync, logger: context.logger) else { return redirect("/web/sign-in") }
        do {
            return try await body(session, WebData(server: sync.server, account: session.account))
        } catch {
            let failure = ServerError.from(error)
            return html(WebPages.failure(failure, session: session), status: failure.status)
        }
    }

    /// A form posted by a signed-in person, with this session's CSRF token
    /// (403 without it, before anything is read or changed).
    static func form(_ request: Request, _ context: BasicRequestContext, _ sync: SyncEndpoints,
                     _ body: (WebSession, WebData, WebForm) async throws -> Response) async throws -> Response {
        guard let session = try await WebSession.current(request, sync, logger: context.logger) else { return redirect("/web/sign-in") }
        do {
            let form = try await WebForm.read(request)
            try session.check(form)
            return try await body(session, WebData(server: sync.server, account: session.account), form)
        } catch {
            let failure = ServerError.from(error)
            return html(WebPages.failure(failure, session: session), status: failure.status)
        }
    }

    /// Signs in (or up): a new device of the account, its token in the session cookie.
    static func signIn(_ request: Request, _ context: BasicRequestContext, _ sync: SyncEndpoints, signUp: Bool) async throws -> Response {
        let form = try await WebForm.read(request)
        let name = (form["name"] ?? "").lowercased()
        do {
            let credentials = Credentials(name: name, password: form["password"] ?? "")
            let session: SessionJSON
            if signUp {
                try credentials.validate()
                session = try await sync.accounts.create(credentials, logger: context.logger)
            } else {
                session = try await sync.accounts.signIn(credentials, logger: context.logger)
            }
            guard let token = BearerToken(cookieValue: Substring(session.token)) else {
                throw ServerError(status: .internalServerError, message: "internal error", cause: "token form")
            }
            var response = redirect("/web")
            response.headers[.setCookie] = WebSession.setCookie(token, secure: WebSession.isSecure(request))
            return response
        } catch {
            let failure = ServerError.from(error)
            var response = html(WebPages.signIn(signUp: signUp, name: name, problem: failure.message), status: failure.status)
            if let retry = failure.headers[.retryAfter] { response.headers[.retryAfter] = retry }
            return response
        }
    }

    /// Server-sent events for an open page: `change` whenever what the page
    /// shows changed (from this page, another browser, a device's sync, or any
    /// other writer on the database: Depot's observation hears each commit), and
    /// a comment every 15 seconds, so that a page gone is noticed and its
    /// stream ends.
    static func events(_ session: WebSession, list: UUID?, smart: WebData.SmartList?, _ sync: SyncEndpoints) -> Response {
        let (store, account) = (sync.server.store, session.account)
        let observed: Observation<WebData.Shown> = store.observe { db in
            // What the page shows: equal data, nothing to tell.
            if let list { return .list(try? WebData.list(db, account, list)) }
            if let smart { return .smart(try WebData.smart(db, account, smart)) }
            return .home(try WebData.home(db, account), try WebData.smartCounts(db, account))
        }.removeDuplicates()
        let body = ResponseBody { writer in
            let (signals, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(8))
            let watching = Task {
                var first = true
                do {
                    for try await _ in observed {
                        if first { first = false; continue }
                        continuation.yield("event: change\ndata: \n\n")
                    }
                } catch {}
                continuation.finish()
            }
            let beating = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(15))
                    continuation.yield(": still here\n\n")
                }
            }
            defer { watching.cancel(); beating.cancel() }
            try await writer.write(ByteBuffer(string: "retry: 1000\n: listening\n\n"))
            // A server shutting down ends the stream (the page connects again, to another instance or later):
            // it would otherwise wait for every open page to go away.
            try await withGracefulShutdownHandler {
                for await signal in signals {
                    try await writer.write(ByteBuffer(string: signal))
                }
            } onGracefulShutdown: {
                continuation.finish()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    /// A page's markup, with the headers every page has: no script but the
    /// app's own runs (a stored script tag would be text anyway), no framing,
    /// no caching of a person's data.
    static func html(_ markup: HTML, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'",
            .xContentTypeOptions: "nosniff",
        ]
        if let referrer = HTTPFields.Element.Name("Referrer-Policy") { headers[referrer] = "same-origin" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: markup.text)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-cache", .xContentTypeOptions: "nosniff"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A UUID from the path: anything else is no such row (404).
    static func uuid(_ name: String, _ context: BasicRequestContext) throws -> UUID {
        guard let text = context.parameters.get(name), let id = UUID(uuidString: text) else { throw WebData.notFound }
        return id
    }
}

extension Credentials {
    init(name: String, password: String) {
        self.name = name
        self.password = password
    }
}

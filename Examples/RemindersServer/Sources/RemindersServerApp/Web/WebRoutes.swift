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
        pageRoutes(sync) + formRoutes(sync) + [
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
                return events(session, WebPage(request.uri.queryParameters), sync)
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

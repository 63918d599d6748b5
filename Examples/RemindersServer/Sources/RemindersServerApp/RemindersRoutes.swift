import Depot
import Foundation
import Hummingbird
import Logging
import Reminders

/// The server's routes over a reminders model: JSON in and out, in the
/// `reminders` command's --json forms.
///
/// Every failure answers one line of JSON, `{"error": "…"}`: 400 for a body
/// that is not a JSON object, 422 for a field that is wrong or unknown, 404
/// for a list or reminder that does not exist, 409 for a title in use or a
/// name two lists share, 405 for a method a route does not take, 503 while the
/// database is unreachable.
///
/// A sync server (`application(store:…sync: true)`) serves `/`, `/health` and
/// the sync routes (``syncIndex``) instead: accounts and devices with bearer
/// tokens (401 without a valid one), DepotSync's push and pull (403 for
/// another account's rows, 413 past a body's limit), and list shares. The
/// model's routes answer 404 there: they would show every account's rows.
public enum RemindersRoutes {
    typealias Handler = @Sendable (Request, BasicRequestContext, RemindersModel) async throws -> Response

    /// Each route: its method, its path, what it does.
    public static let index: [(method: String, path: String, summary: String)] = routes.map { ($0.method.rawValue, $0.path, $0.summary) }

    static let routes: [(method: HTTPRequest.Method, path: String, summary: String, handler: Handler)] = [
        (.get, "/", "this list of routes", { _, _, _ in
            try json(index.map { ["method": $0.method, "path": $0.path, "summary": $0.summary] })
        }),
        (.get, "/health", "200 when the database answers, 503 when it does not", { _, _, model in
            _ = try await model.store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
            return try json(["database": "reachable"])
        }),
        (.get, "/home", "the smart lists' counts, the lists and the tags", { _, _, model in
            try json(HomeJSON(try await model.homeScreen()))
        }),
        (.get, "/lists", "every list with its counts", { _, _, model in
            try json(try await model.lists().map(ListSummaryJSON.init))
        }),
        (.post, "/lists", "a new list: {title, color?}", { request, context, model in
            let new = try await body(NewList.self, request, context)
            return try json(ListJSON(try await model.createList(title: new.title, color: new.color ?? 0x4A99_EFFF)), .created)
        }),
        (.get, "/lists/:list", "a list (by id or title) and its reminders", { _, context, model in
            let found = try await model.reminders(in: try parameter("list", context))
            return try json(ListScreenJSON(list: found.list, reminders: found.reminders))
        }),
        (.patch, "/lists/:list", "changes a list: {title?, color?, position?, sort?, sortAscending?, showCompleted?}", { request, context, model in
            let edit = try await body(ListEdit.self, request, context)
            return try json(ListJSON(try await model.editList(try parameter("list", context), edit.changes)))
        }),
        (.delete, "/lists/:list", "deletes a list and its reminders", { _, context, model in
            try await model.deleteList(try parameter("list", context))
            return Response(status: .noContent)
        }),
        (.get, "/lists/:list/reminders", "a list's reminders, in its order; ?limit=N pages them, the Link header's rel=next gives ?after= for the next page", { request, context, model in
            let list = try parameter("list", context)
            guard request.uri.queryParameters.get("limit") != nil || request.uri.queryParameters.get("after") != nil else {
                return try json(try await model.reminders(in: list).reminders.map(ReminderDetailJSON.init))
            }
            return try await reminderPage(request, list, model)
        }),
        (.post, "/lists/:list/reminders", "a new reminder: {title, notes?, dueDate?, priority?, isFlagged?, tags?}", { request, context, model in
            let new = try await body(NewReminder.self, request, context)
            return try json(ReminderDetailJSON(try await model.addReminder(new.draft, to: try parameter("list", context))), .created)
        }),
        (.get, "/reminders/:id", "a reminder", { _, context, model in
            try json(ReminderDetailJSON(try await model.reminder(try reminderID(context))))
        }),
        (.patch, "/reminders/:id", "changes a reminder: {title?, notes?, dueDate? (null clears), priority?, isFlagged?, isCompleted?, list?, tags?}", { request, context, model in
            let id = try reminderID(context)
            let edit = try await body(ReminderEdit.self, request, context)
            return try json(ReminderDetailJSON(try await model.editReminder(id, edit.draft)))
        }),
        (.delete, "/reminders/:id", "deletes a reminder", { _, context, model in
            try await model.deleteReminder(try reminderID(context))
            return Response(status: .noContent)
        }),
        (.post, "/reminders/:id/complete", "marks a reminder done", { _, context, model in
            try json(ReminderDetailJSON(try await model.complete(try reminderID(context))))
        }),
        (.delete, "/reminders/:id/complete", "marks a reminder not done (undo)", { _, context, model in
            try json(ReminderDetailJSON(try await model.complete(try reminderID(context), false)))
        }),
        (.get, "/search", "reminders whose title, notes or tags hold every word of ?q= (full-text search)", { request, _, model in
            guard let text = request.uri.queryParameters.get("q") else {
                throw ServerError(status: .badRequest, message: "search needs ?q=", cause: "missing query")
            }
            return try json(try await model.search(text).details.map(ReminderDetailJSON.init))
        }),
    ]

    /// The router. Each request's statements are logged through the request's
    /// logger (with its id); each request ends in one log line.
    public static func router(_ base: RemindersModel) -> Router<BasicRequestContext> {
        router(routes.map { route in
            let handler = route.handler
            return Route(route.method, route.path) { request, context in
                var model = base
                model.logger = context.logger
                return try await handler(request, context, model)
            }
        })
    }

    /// One route as the router serves it.
    struct Route {
        var method: HTTPRequest.Method
        var path: String
        /// Whether another method on its path is a 405 (rather than a 404).
        var listed = true
        var handler: @Sendable (Request, BasicRequestContext) async throws -> Response

        init(_ method: HTTPRequest.Method, _ path: String, listed: Bool = true,
             _ handler: @escaping @Sendable (Request, BasicRequestContext) async throws -> Response) {
            (self.method, self.path, self.listed, self.handler) = (method, path, listed, handler)
        }
    }

    /// A router serving these routes, behind the middleware that answers
    /// every error in JSON and logs one line per request.
    ///
    /// Every GET route answers HEAD too: the same status and headers, no body.
    static func router(_ served: [Route]) -> Router<BasicRequestContext> {
        let router = Router()
        let heads = served.filter { $0.method == .get }.map { get in
            let handler = get.handler
            return Route(.head, get.path, listed: get.listed) { request, context in
                var response = try await handler(request, context)
                let length = response.body.contentLength
                response.body = ResponseBody()
                // What GET would send, as HTTP asks of HEAD.
                if let length { response.headers[.contentLength] = String(length) }
                return response
            }
        }
        var table = RouteTable()
        for route in served + heads where route.listed { table.add(route.path, route.method) }
        router.add(middleware: RequestLogMiddleware(routes: table))
        for route in served + heads {
            router.on(RouterPath(route.path), method: route.method, use: route.handler)
        }
        return router
    }

    /// JSON with sorted keys and ISO 8601 dates.
    static func json<T: Encodable>(_ value: T, _ status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try RemindersJSON.encoder().encode(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A request's body, read whole (up to the context's limit, else 413) and decoded strictly.
    static func body<T: Decodable>(_ type: T.Type, _ request: Request, _ context: BasicRequestContext) async throws -> T {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return try Body.decode(type, from: Data(buffer.readableBytesView))
    }

    /// A page of a list's reminders by keyset, in the list's stored order:
    /// `?limit=` (1 to 1000, default 100) and `?after=` a cursor from the
    /// previous page's `Link: <…>; rel="next"` header (none on the last page).
    static func reminderPage(_ request: Request, _ list: String, _ model: RemindersModel) async throws -> Response {
        let parameters = request.uri.queryParameters
        var limit = 100
        if let text = parameters.get("limit") {
            guard let number = Int(text), (1...1000).contains(number) else {
                throw ServerError(status: .badRequest, message: "?limit= takes a count from 1 to 1000, not \"\(text)\"", cause: "bad limit")
            }
            limit = number
        }
        var cursor: PageCursor?
        if let text = parameters.get("after") {
            do {
                cursor = try PageCursor(token: text)
            } catch {
                throw ServerError(status: .badRequest, message: "?after= takes the cursor of a previous page's Link header", cause: "bad cursor")
            }
        }
        let stored = try await model.list(named: list)
        let order = ReminderOrder(sort: stored.sort, ascending: stored.sortAscending, showCompleted: stored.showCompleted)
        let page = try await model.reminderPage(on: .list(stored.id.uuidString), order: order, after: cursor, limit: limit)
        var response = try json(page.reminders.map(ReminderDetailJSON.init))
        if let next = page.next {
            // The token is base64url: nothing in it needs escaping in a query.
            let path = request.uri.path
            if let link = HTTPFields.Element.Name("Link") { response.headers[link] = "<\(path)?limit=\(limit)&after=\(next.token)>; rel=\"next\"" }
        }
        if let total = page.total, let name = HTTPFields.Element.Name("X-Total-Count") { response.headers[name] = String(total) }
        return response
    }

    /// A path parameter, percent-decoded.
    static func parameter(_ name: String, _ context: BasicRequestContext) throws -> String {
        guard let raw = context.parameters.get(name), let decoded = raw.removingPercentEncoding else {
            throw ServerError(status: .badRequest, message: "the path's \(name) is not valid percent-encoded text", cause: "bad path")
        }
        return decoded
    }

    /// A reminder's id from the path: not a number means no such reminder.
    static func reminderID(_ context: BasicRequestContext) throws -> Int64 {
        let text = try parameter("id", context)
        guard let id = Int64(text) else {
            throw ServerError(status: .notFound, message: "no reminder with id \"\(text)\"; ids are whole numbers", cause: "reminder not found")
        }
        return id
    }
}

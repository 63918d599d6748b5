import Foundation
import Hummingbird
import Logging

/// The routes' paths and methods, to answer a known path asked with another
/// method with 405 and an `Allow` header rather than 404.
struct RouteTable: Sendable {
    private var routes: [(segments: [Substring], methods: Set<String>)] = []

    mutating func add(_ path: String, _ method: HTTPRequest.Method) {
        let segments = path.split(separator: "/")
        if let index = routes.firstIndex(where: { $0.segments == segments }) {
            routes[index].methods.insert(method.rawValue)
        } else {
            routes.append((segments, [method.rawValue]))
        }
    }

    /// The methods a path takes, or nil when no route has its shape.
    func methods(for path: String) -> [String]? {
        let asked = path.split(separator: "/")
        let matching = routes.filter { route in
            route.segments.count == asked.count && zip(route.segments, asked).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
        }
        guard !matching.isEmpty else { return nil }
        return matching.reduce(into: Set<String>()) { $0.formUnion($1.methods) }.sorted()
    }
}

/// Turns every error into its JSON answer and logs one line per request: the
/// method, the route (its pattern, never the path: a path holds list titles),
/// the status, the duration, and for a failure its cause.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        var cause: String?
        var matched = true
        do {
            response = try await next(request, context)
        } catch {
            // The router's own 404 (an HTTPError) means no route matched; the
            // routes' 404s are ServerErrors.
            var failure = ServerError.from(error)
            if let error = error as? HTTPError, error.status == .notFound {
                failure = unmatched(request)
                matched = false
            }
            response = failure.response
            cause = failure.cause
        }
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var metadata: Logger.Metadata = [
            "http.method": .string(request.method.rawValue),
            "http.route": .string(matched ? context.endpointPath ?? "unmatched" : "unmatched"),
            "http.status": .stringConvertible(response.status.code),
            "duration_ms": .string(String(format: "%.1f", milliseconds)),
        ]
        if let cause { metadata["error"] = .string(cause) }
        let level: Logger.Level = response.status.code >= 500 ? .error : .info
        context.logger.log(level: level, "request", metadata: metadata)
        return response
    }

    /// 405 for a known path asked with a method it does not take; 404 in JSON otherwise.
    private func unmatched(_ request: Request) -> ServerError {
        guard let allowed = routes.methods(for: request.uri.path) else {
            return ServerError(status: .notFound, message: "no such route; see GET / for the routes", cause: "no route")
        }
        return ServerError(status: .methodNotAllowed, message: "\(request.method.rawValue) is not allowed here; use \(allowed.joined(separator: " or "))",
                           cause: "method not allowed", headers: [.allow: allowed.joined(separator: ", ")])
    }
}

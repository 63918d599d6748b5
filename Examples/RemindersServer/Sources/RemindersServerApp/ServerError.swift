import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders

/// What a failed request answers: a status, one line of JSON (`{"error": "…"}`),
/// and a cause for the request's log line that holds no user text.
struct ServerError: Error {
    var status: HTTPResponse.Status
    /// For the client: may quote what it sent.
    var message: String
    /// For the log: a category and the library's error, never a title or a query.
    var cause: String
    var headers: HTTPFields = [:]
    /// More fields of the JSON body, beside `error`, for a client that acts on them (a sync refusal's reason).
    var fields: [String: String] = [:]

    /// The answer for any error a route throws.
    static func from(_ error: any Error) -> ServerError {
        switch error {
        case let error as ServerError:
            return error
        case let error as BodyError:
            return ServerError(status: error.isMalformed ? .badRequest : .unprocessableContent, message: error.message,
                               cause: error.isMalformed ? "malformed body" : "invalid field")
        case let error as RemindersError:
            return from(error)
        case let error as DatabaseError:
            return from(error)
        case let error as SyncAccessDenied:
            // The description names a table of the server's, never a value.
            return ServerError(status: .forbidden, message: error.description, cause: "access denied")
        case let error as HTTPError:
            return ServerError(status: error.status, message: error.body ?? error.status.reasonPhrase.lowercased(),
                               cause: "http \(error.status.code)", headers: error.headers)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return ServerError(status: .contentTooLarge, message: "the body is larger than the server takes (2 MiB)", cause: "body too large")
        case let error as any HTTPResponseError:
            return ServerError(status: error.status, message: error.status.reasonPhrase.lowercased(), cause: "http \(error.status.code)")
        case is CancellationError:
            return ServerError(status: .serviceUnavailable, message: "the request was cancelled; try again", cause: "cancelled")
        default:
            return ServerError(status: .internalServerError, message: "internal error", cause: "\(type(of: error))")
        }
    }

    static func from(_ error: RemindersError) -> ServerError {
        switch error {
        case .listNotFound: ServerError(status: .notFound, message: error.description, cause: "list not found")
        case .reminderNotFound: ServerError(status: .notFound, message: error.description, cause: "reminder not found")
        case .tagNotFound: ServerError(status: .notFound, message: error.description, cause: "tag not found")
        case .ambiguousList: ServerError(status: .conflict, message: error.description, cause: "ambiguous list")
        case .conflict: ServerError(status: .conflict, message: error.description, cause: "title in use")
        case .invalidInput: ServerError(status: .unprocessableContent, message: error.description, cause: "invalid input")
        }
    }

    /// The library's errors carry no bound value (unless a store opts in), so
    /// the whole error goes to the log; the client gets its category.
    static func from(_ error: DatabaseError) -> ServerError {
        let cause = "database: \(error)"
        switch error.kind {
        case .unique:
            return ServerError(status: .conflict, message: "this conflicts with what is stored", cause: cause)
        case .check, .notNull, .foreignKey, .encoding:
            // The field it names (a column, or the coding path of a value that could not be stored), and why.
            let field = error.codingPath ?? error.column
            let message = "the database refused " + (field.map { "the value of \($0)" } ?? "a value") + ": \(error.kind.rawValue)"
                + (error.kind == .encoding ? " (\(error.message))" : error.constraint.map { " (constraint \($0))" } ?? "")
            return ServerError(status: .unprocessableContent, message: message, cause: cause, fields: field.map { ["field": $0] } ?? [:])
        case .connection, .authentication, .timeout, .busy, .serialization, .interrupted:
            return ServerError(status: .serviceUnavailable, message: "the database is unavailable; try again", cause: cause,
                               headers: [.retryAfter: "1"])
        default:
            return ServerError(status: .internalServerError, message: "internal error", cause: cause)
        }
    }

    /// The response: the status, the headers, `{"error": message}`.
    var response: Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = (try? encoder.encode(fields.merging(["error": message]) { _, error in error })) ?? Data(#"{"error":"internal error"}"#.utf8)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}

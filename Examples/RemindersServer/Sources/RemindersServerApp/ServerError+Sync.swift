import Depot
import DepotSync
import Foundation

extension ServerError {
    /// The answer for a push the sync server refused. Nothing of it was
    /// applied (a push is one transaction): 403 for a row or a device of
    /// another account, 422 for a push that does not fit the server's tables
    /// (an unknown table or column, a skipped push number, a value of the
    /// wrong type, a required column left out, a value out of range, a stamp
    /// too far ahead of the server's clock, a key not of its table's type),
    /// 409 for a push from a copy of a device (restored from a backup) or
    /// from a device that syncs more than the server (a pull too), 503
    /// while the database is unreachable.
    ///
    /// The message names what was wrong, never a value or SQL; the log's
    /// cause holds only the error's kind and the engine's code.
    static func refusedPush(_ error: any Error) -> ServerError {
        if let refused = error as? SyncPushRefused {
            // 409 for a copied device (the client goes on under a new identity) and for a device newer than the server or
            // too old to start over (it waits for an update), 422 for what no replica sends
            // or a clock too far ahead; `reason` and `latestAccepted` let the client act (HTTPSyncTransport reads them).
            let fits = refused.reason == .malformedKey || refused.reason == .malformedStamp
            return ServerError(status: [.deviceCopied, .deviceNewer, .deviceOlder].contains(refused.reason) ? .conflict : .unprocessableContent,
                               message: fits ? "the push does not fit the server's tables: \(refused.message)" : refused.message,
                               cause: "push refused: \(refused.reason.rawValue)",
                               fields: ["reason": refused.reason.rawValue, "latestAccepted": String(refused.latestAccepted.rawValue)])
        }
        guard let error = error as? DatabaseError else { return from(error) }
        let cause = "push refused: \(error.kind.rawValue)\(error.engineCode.map { " \($0)" } ?? "")"
        let message: String
        switch error.kind {
        case .connection, .authentication, .timeout, .busy, .serialization, .interrupted, .io:
            return from(error)
        case .misuse:
            // DepotSync's own words: the table, column or push number the client sent, no SQL.
            message = error.message.split(whereSeparator: \.isNewline).first.map(String.init) ?? "the push is not valid"
        case .notNull: message = "a row of the push leaves a required column out"
        case .check: message = "a row of the push holds a value out of its column's range"
        case .unique: message = "a row of the push holds a value another row has in a column that takes each value once"
        case .foreignKey: message = "a row of the push names a row that does not exist"
        default: message = "a row of the push holds a value of the wrong type for its column"
        }
        return ServerError(status: .unprocessableContent, message: "the push does not fit the server's tables: \(message)", cause: cause)
    }
}

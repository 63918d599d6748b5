import CLibPQ
import Depot
import Foundation

/// Builds ``DatabaseError``s from libpq results and connection failures.
enum PostgresError {
    /// The error a failed result reports, with the server's SQLSTATE, detail, constraint, table and column.
    ///
    /// The server quotes values in some messages and details (`Key (email)=(alice@example.com)
    /// already exists.`, `invalid input syntax for type uuid: "abc"`): unless `showsValues`,
    /// those values are replaced with `…`, and the constraint, table and column stay.
    static func make(_ result: OpaquePointer?, _ connection: OpaquePointer, sql: String? = nil, showsValues: Bool) -> DatabaseError {
        func field(_ code: UInt8) -> String? {
            guard let result, let pointer = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: pointer)
        }
        let sqlState = field(UInt8(ascii: "C"))
        let message = field(UInt8(ascii: "M"))
            ?? (result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) }).flatMap { $0.isEmpty ? nil : $0 }
            ?? String(cString: PQerrorMessage(connection))
        var kind = sqlState.map(Self.kind) ?? .other
        // The server's own statement_timeout cancels with the code a cancel request
        // uses; its message tells them apart.
        if sqlState == "57014", message.contains("statement timeout") { kind = .timeout }
        if PQstatus(connection) != CONNECTION_OK { kind = .connection }
        var text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        // A write refused by a server that stopped taking writes under a
        // connection that looked for the primary: the primary moved (a
        // failover), which a new connection finds. Not the caller's misuse.
        if sqlState == "25006", refusesWrites(connection), looksForPrimary(connection) {
            kind = .connection
            text += " (the server no longer takes writes: it is a standby, or a failover made it read-only; the connection is replaced)"
        }
        var detail = field(UInt8(ascii: "D"))
        if !showsValues {
            text = redactingValues(message: text, sqlState: sqlState)
            detail = detail.flatMap(redactingValues(detail:))
        }
        var error = DatabaseError(kind, text,
                                  engineCode: sqlState ?? (kind == .connection ? "connection lost" : nil),
                                  detail: detail, constraint: field(UInt8(ascii: "n")),
                                  table: field(UInt8(ascii: "t")), column: field(UInt8(ascii: "c")), sql: sql)
        if kind == .notNull, error.column == nil { error.column = field(UInt8(ascii: "c")) }
        return error
    }

    /// A DETAIL without the row values it quotes: `Key (email)=(…) already exists.`,
    /// `Failing row contains (…).`; nil for a detail that may quote values in a form not known here.
    static func redactingValues(detail: String) -> String? {
        if detail.hasPrefix("Failing row contains (") { return "Failing row contains (…)." }
        if detail.hasPrefix("Key ("), let equals = detail.range(of: ")=(") {
            let columns = detail[..<equals.lowerBound] + ")=(…)"
            let endings = [") already exists.", ") is not present in table ", ") is still referenced from table ", ") conflicts with existing key "]
            for ending in endings {
                if let range = detail.range(of: ending, options: .backwards, range: equals.upperBound..<detail.endIndex) {
                    var rest = detail[range.lowerBound...].dropFirst() // the text after the values' closing parenthesis
                    if ending == ") conflicts with existing key " { rest = " conflicts with an existing key (…)." }
                    return String(columns + rest)
                }
            }
            return String(columns)
        }
        let valueFree = ["There is a unique constraint", "Reason code:", "Process ", "The transaction might succeed if retried."]
        return valueFree.contains(where: detail.hasPrefix) ? detail : nil
    }

    /// A message without the values the server quotes in data errors (class 22, such as
    /// `invalid input syntax for type uuid: "abc"` or `value "2147483648" is out of
    /// range for type integer`): the quoted part becomes `"…"`.
    static func redactingValues(message: String, sqlState: String?) -> String {
        // A quoted value may itself hold quotes: redact from the first quote to the last.
        guard sqlState?.hasPrefix("22") == true, let open = message.firstIndex(of: "\""),
              let close = message.lastIndex(of: "\""), open < close else { return message }
        return message[...open] + "…" + message[close...]
    }

    /// A failure of the connection itself (libpq's message; it never holds the password).
    /// A connection failure. `neverConnected` says the connection was never
    /// made (its code is "cannot connect"), as opposed to one that was lost.
    static func connection(_ connection: OpaquePointer?, _ context: String, neverConnected: Bool = false) -> DatabaseError {
        let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
        // libpq's messages span lines ("...failed: Connection refused\n\tIs the server running..."): keep one.
        let oneLine = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        if neverConnected, let connection, refusedCredentials(connection, oneLine) {
            return DatabaseError(.authentication, "\(context): \(oneLine)", engineCode: "authentication failed")
        }
        return DatabaseError(.connection, "\(context): \(oneLine)", engineCode: neverConnected ? "cannot connect" : "connection lost")
    }

    /// Whether a connection was refused for its credentials rather than for
    /// something that passes (a server starting up, too many clients). libpq
    /// gives no SQLSTATE for a failed connection: this reads the server's
    /// English message, so a server whose `lc_messages` is another language
    /// reports these as ``DatabaseError/Kind/connection``.
    static func refusedCredentials(_ connection: OpaquePointer, _ message: String) -> Bool {
        if PQconnectionNeedsPassword(connection) == 1 { return true }
        let markers = ["authentication failed", "no password supplied", "pg_hba.conf rejects", "no pg_hba.conf entry", "does not exist"]
        return message.contains("FATAL") && markers.contains { message.contains($0) }
    }

    /// Whether the server said it takes no writes: its sessions' transactions
    /// are read-only by default, or it is a hot standby (the parameters
    /// PostgreSQL 14 and later report, and update as they change).
    static func refusesWrites(_ connection: OpaquePointer) -> Bool {
        func isOn(_ name: String) -> Bool {
            PQparameterStatus(connection, name).map { strcmp($0, "on") == 0 } ?? false
        }
        return isOn("default_transaction_read_only") || isOn("in_hot_standby")
    }

    /// Whether libpq opened the connection looking for the primary
    /// (`target_session_attrs=read-write`).
    static func looksForPrimary(_ connection: OpaquePointer) -> Bool {
        guard let options = PQconninfo(connection) else { return false }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if strcmp(keyword, "target_session_attrs") == 0 {
                return option.pointee.val.map { strcmp($0, "read-write") == 0 } ?? false
            }
            option += 1
        }
        return false
    }

    /// The portable category of an SQLSTATE.
    static func kind(_ sqlState: String) -> DatabaseError.Kind {
        switch sqlState {
        case "23505": return .unique
        case "23503": return .foreignKey
        case "23502": return .notNull
        case "23514": return .check
        case "40001", "40P01": return .serialization
        case "57014": return .interrupted
        case "55P03": return .busy
        case "25006", "25P02", "0A000": return .misuse
        case "57P01", "57P02", "57P03": return .connection
        default: break
        }
        switch sqlState.prefix(2) {
        case "08": return .connection
        case "42": return .syntax
        case "22": return .encoding
        case "53", "58", "XX": return .io
        default: return .other
        }
    }
}

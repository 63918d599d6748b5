import CLibPQ
import Depot

/// Builds ``DatabaseError``s from libpq results and connection failures.
enum PostgresError {
    /// The error a failed result reports, with the server's SQLSTATE, detail, constraint, table and column.
    static func make(_ result: OpaquePointer?, _ connection: OpaquePointer, sql: String? = nil) -> DatabaseError {
        func field(_ code: UInt8) -> String? {
            guard let result, let pointer = PQresultErrorField(result, Int32(code)) else { return nil }
            return String(cString: pointer)
        }
        let sqlState = field(UInt8(ascii: "C"))
        let message = field(UInt8(ascii: "M"))
            ?? (result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) }).flatMap { $0.isEmpty ? nil : $0 }
            ?? String(cString: PQerrorMessage(connection))
        var kind = sqlState.map(Self.kind) ?? .other
        if PQstatus(connection) != CONNECTION_OK { kind = .connection }
        var error = DatabaseError(kind, message.trimmingCharacters(in: .whitespacesAndNewlines),
                                  engineCode: sqlState ?? (kind == .connection ? "connection lost" : nil),
                                  detail: field(UInt8(ascii: "D")), constraint: field(UInt8(ascii: "n")),
                                  table: field(UInt8(ascii: "t")), column: field(UInt8(ascii: "c")), sql: sql)
        if kind == .notNull, error.column == nil { error.column = field(UInt8(ascii: "c")) }
        return error
    }

    /// A failure of the connection itself (libpq's message; it never holds the password).
    static func connection(_ connection: OpaquePointer?, _ context: String) -> DatabaseError {
        let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
        // libpq's messages span lines ("...failed: Connection refused\n\tIs the server running..."): keep one.
        let oneLine = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        return DatabaseError(.connection, "\(context): \(oneLine)", engineCode: "connection lost")
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

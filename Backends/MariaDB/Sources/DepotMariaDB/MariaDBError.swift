import CMariaDB
import Depot

/// Builds ``DatabaseError``s from MariaDB's error numbers.
///
/// MariaDB sends a number, an SQLSTATE and a message, with no constraint,
/// table or column fields, and SQLSTATE 23000 covers unique, foreign-key and
/// not-null failures alike: the kind comes from the number. The engine code
/// is `number (SQLSTATE)`, such as `1062 (23000)`.
enum MariaDBError {
    /// The error a connection reports now.
    static func make(_ mysql: UnsafeMutablePointer<MYSQL>, sql: String? = nil, showsValues: Bool) -> DatabaseError {
        make(code: mysql_errno(mysql), sqlState: String(cString: mysql_sqlstate(mysql)),
             message: String(cString: mysql_error(mysql)), sql: sql, showsValues: showsValues)
    }

    /// The error a prepared statement reports now.
    static func make(statement: UnsafeMutablePointer<MYSQL_STMT>, sql: String? = nil, showsValues: Bool) -> DatabaseError {
        make(code: mysql_stmt_errno(statement), sqlState: String(cString: mysql_stmt_sqlstate(statement)),
             message: String(cString: mysql_stmt_error(statement)), sql: sql, showsValues: showsValues)
    }

    static func make(code: UInt32, sqlState: String, message: String, sql: String?, showsValues: Bool) -> DatabaseError {
        let kind = kind(code, sqlState: sqlState)
        let text = showsValues ? message : redactingValues(message)
        var error = DatabaseError(kind, text, engineCode: "\(code) (\(sqlState))", sql: sql)
        switch kind {
        case .unique:
            // Duplicate entry '…' for key 'email'
            error.constraint = quoted(in: message, after: " for key ")
        case .notNull:
            // Column 'title' cannot be null / Field 'title' doesn't have a default value
            error.column = quoted(in: message, after: "Column ") ?? quoted(in: message, after: "Field ")
        case .foreignKey:
            error.constraint = backquoted(in: message, after: "CONSTRAINT ")
            if let table = backquoted(in: message, after: "fails (") {
                error.table = table
            }
        case .check:
            // CONSTRAINT `positive` failed for `db`.`t`
            error.constraint = backquoted(in: message, after: "CONSTRAINT ")
            error.table = backquoted(in: message, after: "failed for ")
        case .encoding:
            error.column = quoted(in: message, after: "column ")
        default:
            break
        }
        return error
    }

    /// The portable kind of an error number (client errors are 2000–2999).
    static func kind(_ code: UInt32, sqlState: String) -> DatabaseError.Kind {
        switch code {
        case 1062, 1586, 1859: return .unique
        case 1451, 1452, 1216, 1217: return .foreignKey
        case 1048, 1364: return .notNull
        case 4025: return .check
        case 1406, 1264, 1690, 1916, 1366, 1292, 1367, 1365, 3140, 4038, 4042, 1411: return .encoding
        case 1213, 1020: return .serialization
        case 1205: return .busy
        case 1317: return .interrupted
        case 1969, 3024: return .timeout
        case 1792, 1568, 1305, 1180, 1181: return .misuse
        case 2014: return .misuse
        case 1045, 1044, 1698: return .authentication
        case 1927, 1053, 1152, 1153, 1154, 1155, 1156, 1157, 1158, 1159, 1160, 1161, 1040: return .connection
        case 1064, 1146, 1054, 1149, 1050, 1051, 1060, 1061, 1091, 1109, 1170, 1235, 1221, 1247, 1248, 1052, 1111, 1055: return .syntax
        case 2000...2999, 5000...5999: return .connection
        case 1021, 1030, 1114, 1037, 1041: return .io
        default: break
        }
        switch sqlState.prefix(2) {
        case "08": return .connection
        case "42": return .syntax
        case "22": return .encoding
        case "23": return .check
        case "40": return .serialization
        default: return .other
        }
    }

    /// A message without the values MariaDB quotes (`Duplicate entry 'alice@x' for
    /// key 'email'`, `Incorrect integer value: 'abc' for column`): the first
    /// quoted part becomes `'…'` where the message quotes a value.
    static func redactingValues(_ message: String) -> String {
        let valuePrefixes = ["Duplicate entry '", "value: '", "Truncated incorrect ", "Incorrect string value: '"]
        var text = message
        for prefix in valuePrefixes {
            guard let start = text.range(of: prefix) else { continue }
            // The value runs to the last `' for ` (a value may hold quotes), or to the end.
            let searchEnd = text.range(of: "' for ", options: .backwards, range: start.upperBound..<text.endIndex)
            let valueStart = prefix.hasSuffix("'") ? start.upperBound : (text[start.upperBound...].firstIndex(of: "'").map { text.index(after: $0) } ?? start.upperBound)
            guard let end = searchEnd?.lowerBound ?? text[valueStart...].lastIndex(of: "'"), valueStart <= end else { continue }
            text.replaceSubrange(valueStart..<end, with: "…")
        }
        return text
    }

    /// The text in `'…'` right after `marker`.
    static func quoted(in message: String, after marker: String) -> String? {
        delimited(in: message, after: marker, by: "'")
    }

    /// The identifier right after `marker`, quoted with `` ` `` or, under
    /// ANSI_QUOTES, `"`; of `` `db`.`table` `` the last part.
    static func backquoted(in message: String, after marker: String) -> String? {
        guard let range = message.range(of: marker), let quote = message[range.upperBound...].first,
              quote == "`" || quote == "\"" else { return nil }
        return delimited(in: message, after: marker, by: quote)
    }

    private static func delimited(in message: String, after marker: String, by quote: Character) -> String? {
        guard let range = message.range(of: marker), message[range.upperBound...].first == quote else { return nil }
        let rest = message[message.index(after: range.upperBound)...]
        guard let close = rest.firstIndex(of: quote) else { return nil }
        let after = rest[rest.index(after: close)...]
        if quote != "'", after.hasPrefix("." + String(quote)) {
            let name = after.dropFirst(2)
            if let end = name.firstIndex(of: quote) { return String(name[..<end]) }
        }
        return String(rest[..<close])
    }

    /// A `connection` error for a failed connect, naming the server (never the password).
    static func cannotConnect(_ mysql: UnsafeMutablePointer<MYSQL>?, _ configuration: MariaDBConfiguration, node: MariaDBConfiguration.Node) -> DatabaseError {
        let code = mysql.map { mysql_errno($0) } ?? 2008
        let message = mysql.map { String(cString: mysql_error($0)) } ?? "out of memory"
        let kind: DatabaseError.Kind = [1045, 1044, 1698].contains(code) ? .authentication : .connection
        return DatabaseError(kind, "cannot connect to MariaDB at \(node)/\(configuration.database) as \(configuration.user): \(message)",
                             engineCode: "\(code)")
    }
}

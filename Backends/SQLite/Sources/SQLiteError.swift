import CSQLite
import Depot

/// Builds ``DatabaseError``s from SQLite result codes.
enum SQLiteError {
    /// The error SQLite reports for `code` on this connection.
    static func make(_ code: Int32, _ db: OpaquePointer?, sql: String? = nil) -> DatabaseError {
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        return make(code, message: message, sql: sql)
    }

    static func make(_ code: Int32, message: String, sql: String? = nil) -> DatabaseError {
        var kind = kind(code)
        // A run-time arithmetic failure (sum() past 64 bits), not a syntax error:
        // the data error PostgreSQL reports as "out of range".
        // Checked arithmetic fails the same way (the builder's depot_divide...).
        if code == SQLITE_ERROR, message == "integer overflow" || message == "division by zero"
            || message == "integer arithmetic on a value that is not an integer" || message == "malformed JSON" { kind = .encoding }
        var error = DatabaseError(kind, message, engineCode: "\(name(code)) (\(code))", sql: sql)
        // "UNIQUE constraint failed: lists.title" names the table and column;
        // "CHECK constraint failed: positive_priority" names the constraint.
        if code & 0xff == SQLITE_CONSTRAINT, let range = message.range(of: "constraint failed: ") {
            let subject = String(message[range.upperBound...])
            if error.kind == .check {
                error.constraint = subject
            } else if let first = subject.split(separator: ",").first {
                let parts = first.trimmingCharacters(in: .whitespaces).split(separator: ".", maxSplits: 1)
                if parts.count == 2 {
                    error.table = String(parts[0])
                    error.column = String(parts[1])
                }
            }
        }
        return error
    }

    static func kind(_ code: Int32) -> DatabaseError.Kind {
        switch code {
        case 2067, 1555: .unique // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
        case 787: .foreignKey // SQLITE_CONSTRAINT_FOREIGNKEY
        case 1299: .notNull // SQLITE_CONSTRAINT_NOTNULL
        case 275: .check // SQLITE_CONSTRAINT_CHECK
        default:
            switch code & 0xff {
            case SQLITE_BUSY, SQLITE_LOCKED: .busy
            case SQLITE_INTERRUPT: .interrupted
            case SQLITE_ERROR: .syntax
            case SQLITE_READONLY, SQLITE_MISUSE, SQLITE_RANGE: .misuse
            case SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOMEM, SQLITE_CORRUPT, SQLITE_NOTADB,
                 SQLITE_PERM, SQLITE_AUTH, SQLITE_PROTOCOL, SQLITE_NOLFS:
                .io
            case SQLITE_TOOBIG: .encoding
            default: .other
            }
        }
    }

    static func name(_ code: Int32) -> String {
        switch code {
        case 2067: return "SQLITE_CONSTRAINT_UNIQUE"
        case 1555: return "SQLITE_CONSTRAINT_PRIMARYKEY"
        case 787: return "SQLITE_CONSTRAINT_FOREIGNKEY"
        case 1299: return "SQLITE_CONSTRAINT_NOTNULL"
        case 275: return "SQLITE_CONSTRAINT_CHECK"
        case 3091: return "SQLITE_CONSTRAINT_DATATYPE"
        case 8: return "SQLITE_READONLY"
        case 1032: return "SQLITE_READONLY_DBMOVED"
        case 517: return "SQLITE_BUSY_SNAPSHOT"
        case 261: return "SQLITE_BUSY_RECOVERY"
        default: break
        }
        let primary: [Int32: String] = [
            1: "SQLITE_ERROR", 2: "SQLITE_INTERNAL", 3: "SQLITE_PERM", 4: "SQLITE_ABORT", 5: "SQLITE_BUSY",
            6: "SQLITE_LOCKED", 7: "SQLITE_NOMEM", 9: "SQLITE_INTERRUPT", 10: "SQLITE_IOERR",
            11: "SQLITE_CORRUPT", 12: "SQLITE_NOTFOUND", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN",
            15: "SQLITE_PROTOCOL", 17: "SQLITE_SCHEMA", 18: "SQLITE_TOOBIG", 19: "SQLITE_CONSTRAINT",
            20: "SQLITE_MISMATCH", 21: "SQLITE_MISUSE", 22: "SQLITE_NOLFS", 23: "SQLITE_AUTH",
            25: "SQLITE_RANGE", 26: "SQLITE_NOTADB",
        ]
        return primary[code & 0xff] ?? "SQLITE_\(code)"
    }
}

import CSQLite
import Depot
import Foundation

/// One SQLite connection, configured the way every Depot connection is:
/// extended result codes, foreign keys on, a busy timeout; the writer of a file
/// database in WAL mode, readers refusing writes.
final class SQLiteConnection: DriverConnection {
    let handle: OpaquePointer

    init(path: String, role: ConnectionRole, configuration: SQLiteConfiguration, isMemory: Bool) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError.make(code, handle)
            sqlite3_close_v2(handle)
            throw DatabaseError(.connection, "cannot open SQLite database at \(path): \(error.message)", engineCode: error.engineCode)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        do {
            // "name" is an identifier on every engine: SQLite would otherwise read a quoted
            // name that matches no column as the text 'name', and answer silently.
            let dqs = depot_sqlite_disable_double_quoted_strings(handle)
            guard dqs == SQLITE_OK else { throw SQLiteError.make(dqs, handle, sql: nil) }
            // Foreign keys are off by default in SQLite, per connection: turn them on for every one.
            try execute(script: "PRAGMA foreign_keys = ON")
            if role == .writer, !isMemory {
                try execute(script: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            }
            if role == .reader {
                try execute(script: "PRAGMA query_only = ON")
            }
        } catch let error as DatabaseError {
            sqlite3_close_v2(handle)
            throw DatabaseError(.connection, "cannot open SQLite database at \(path): \(error.message)", engineCode: error.engineCode)
        }
    }

    func prepare(_ sql: String) throws -> any DriverStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    func execute(script: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, script, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            throw SQLiteError.make(sqlite3_extended_errcode(handle), message: text)
        }
    }

    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    var isUsable: Bool { true }

    func interrupt() { sqlite3_interrupt(handle) }

    func close() {
        // close_v2 defers the close until cached statements are finalized.
        sqlite3_close_v2(handle)
    }
}

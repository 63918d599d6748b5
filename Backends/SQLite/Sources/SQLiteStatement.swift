import CSQLite
@_spi(Driver) import Depot
import Foundation

/// A compiled SQLite statement, read in place: values come straight from
/// `sqlite3_column_*`, with no intermediate row.
final class SQLiteStatement: DriverStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    private let sql: String
    private(set) var columns: ColumnSet
    private let parameterCount: Int32
    private var checkedColumns = false
    private var repreparedCount: Int32 = 0
    private(set) var changes = 0
    /// Whether the SQL names `query_only`: running it may change the connection's flag.
    private let mentionsQueryOnly: Bool

    init(connection: SQLiteConnection, sql: String) throws {
        var handle: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        connection.tables.beginStatement()
        let code = sql.withCString { sqlite3_prepare_v3(connection.handle, $0, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, &tail) }
        self.writes = connection.tables.endStatement(sql: sql)
        guard code == SQLITE_OK else { throw SQLiteError.make(code, connection.handle, sql: sql) }
        guard let handle else {
            throw DatabaseError(.misuse, "the SQL holds no statement", sql: sql)
        }
        if let tail, tail.pointee != 0, !String(cString: tail).allSatisfy({ $0.isWhitespace || $0 == ";" }) {
            sqlite3_finalize(handle)
            throw DatabaseError(.misuse, "a statement can hold one SQL command only; run several with execute(script:)", sql: sql)
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
        self.mentionsQueryOnly = SQLiteConnection.mentionsQueryOnly(sql)
        if mentionsQueryOnly { connection.queryOnly = nil }
        self.parameterCount = sqlite3_bind_parameter_count(handle)
        let count = sqlite3_column_count(handle)
        columns = ColumnSet((0..<count).map { String(cString: sqlite3_column_name(handle, $0)) })
    }

    deinit { sqlite3_finalize(handle) }

    /// The tables the statement writes, triggers and foreign-key actions included.
    private let writes: Set<String>
    /// The table log's epoch when this statement last added its writes.
    private var writesAddedInEpoch = -1

    func bind(_ values: [Value]) throws {
        sqlite3_reset(handle)
        if !writes.isEmpty, writesAddedInEpoch != connection.tables.epoch {
            connection.tables.willRun(writing: writes)
            writesAddedInEpoch = connection.tables.epoch
        }
        guard values.count == Int(parameterCount) else {
            throw DatabaseError(.misuse, "the statement has \(parameterCount) placeholders but \(values.count) values were bound", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .bool(let b): code = sqlite3_bind_int64(handle, index, b ? 1 : 0)
            case .integer(let i): code = sqlite3_bind_int64(handle, index, i)
            case .double(let d): code = sqlite3_bind_double(handle, index, d)
            case .text(let s), .json(let s): code = bindText(s, index)
            case .blob(let data):
                if data.isEmpty {
                    // A nil pointer would bind NULL: an empty blob is a zero-length blob.
                    code = sqlite3_bind_zeroblob(handle, index, 0)
                } else {
                    guard data.count <= Int32.max else { throw tooBig(offset) }
                    code = data.withUnsafeBytes {
                        sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), depot_sqlite_transient())
                    }
                }
            case .date(let date):
                guard let micros = ISO8601.microseconds(date) else {
                    throw DatabaseError(.encoding, "value \(offset + 1): the date \(date.timeIntervalSince1970) seconds from 1970 is outside the years 0001...9999", sql: sql)
                }
                code = ISO8601.withFormatted(microseconds: micros) { bytes in
                    sqlite3_bind_text(handle, index, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), depot_sqlite_transient())
                }
            case .uuid(let uuid): code = bindText(uuid.uuidString.lowercased(), index)
            case .decimal(let decimal): code = bindText(decimal.description, index)
            }
            guard code == SQLITE_OK else { throw SQLiteError.make(code, connection.handle, sql: sql) }
        }
    }

    private func bindText(_ text: String, _ index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            guard bytes.count <= Int32.max else { return SQLITE_TOOBIG }
            // A nil pointer would bind NULL: "" must stay an empty string.
            let pointer = bytes.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(("" as StaticString).utf8Start)
            return sqlite3_bind_text(handle, index, pointer.assumingMemoryBound(to: CChar.self), Int32(bytes.count), depot_sqlite_transient())
        }
    }

    private func tooBig(_ offset: Int) -> DatabaseError {
        DatabaseError(.encoding, "value \(offset + 1) is larger than SQLite can bind (2 GiB)", sql: sql)
    }

    func step() throws -> Bool {
        if mentionsQueryOnly { connection.queryOnly = nil }
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW:
            if !checkedColumns { refreshColumns() }
            return true
        case SQLITE_DONE:
            // sqlite3_changes64 keeps the last INSERT, UPDATE or DELETE's count: a query changed nothing.
            changes = sqlite3_stmt_readonly(handle) != 0 ? 0 : Int(sqlite3_changes64(connection.handle))
            return false
        default:
            let error = SQLiteError.make(code, connection.handle, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    func reset() {
        sqlite3_reset(handle)
        checkedColumns = false
    }

    /// SQLite re-prepares a statement after a schema change, and `SELECT *` may then
    /// return other columns: its re-prepare counter says when to read them again.
    private func refreshColumns() {
        checkedColumns = true
        let reprepared = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        guard reprepared != repreparedCount else { return }
        repreparedCount = reprepared
        let count = sqlite3_column_count(handle)
        columns = ColumnSet((0..<count).map { String(cString: sqlite3_column_name(handle, $0)) })
    }

    func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    func integer(at index: Int) -> Int64? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_INTEGER else { return nil }
        return sqlite3_column_int64(handle, column)
    }

    func double(at index: Int) -> Double? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_FLOAT else { return nil }
        return sqlite3_column_double(handle, column)
    }

    /// SQLite has no Boolean cells: a Bool is the INTEGER 0 or 1.
    func bool(at index: Int) -> Bool? { nil }

    /// SQLite has no date cells: a date is text or a number.
    func date(at index: Int) -> Date? { nil }

    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT else { return nil }
        // Text first, then its length: the order SQLite documents as safe.
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(handle, column)))
    }

    func value(at index: Int) throws -> Value {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL:
            return .null
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT:
            return .double(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let pointer = sqlite3_column_text(handle, column) else { return .text("") }
            let bytes = UnsafeBufferPointer(start: pointer, count: count)
            // ASCII needs no validation; the generic validating initializer is slow.
            if isASCII(bytes) { return .text(String(decoding: bytes, as: UTF8.self)) }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw DatabaseError(.decoding, "the column holds text that is not valid UTF-8 (\(count) bytes)",
                                    column: columns.names[index], columnIndex: index, sql: sql)
            }
            return .text(text)
        default: // SQLITE_BLOB
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return .blob(Data(bytes: pointer, count: count))
        }
    }
}

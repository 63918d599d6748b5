import CSQLite
import Depot
import Foundation

/// A compiled SQLite statement, read in place: values come straight from
/// `sqlite3_column_*`, with no intermediate row.
final class SQLiteStatement: DriverStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    private let sql: String
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    // The mutable state below is touched by one thread at a time (the driver contract).
    @exclusivity(unchecked) private(set) var columns: ColumnSet
    private let parameterCount: Int32
    @exclusivity(unchecked) private var checkedColumns = false
    @exclusivity(unchecked) private var repreparedCount: Int32 = 0
    @exclusivity(unchecked) private(set) var changes = 0
    /// Whether the statement is ready to bind and run: prepared or reset,
    /// not stepped since. A bind resets only a statement that is not (a run
    /// that finished reset it already).
    @exclusivity(unchecked) private var isReset = true
    /// ``returnsOneRowAtMost``, as found for the program compiled at a
    /// re-prepare count: SQLite compiles again after a schema change.
    @exclusivity(unchecked) private var oneRowAtMost: (reprepared: Int32, value: Bool)?
    /// Whether ``returnsOneRowAtMost`` was asked once already.
    @exclusivity(unchecked) private var askedOneRowAtMost = false
    /// Whether the SQL names `query_only`: running it may change the connection's flag.
    private let mentionsQueryOnly: Bool

    init(connection: SQLiteConnection, sql: String) throws {
        var handle: OpaquePointer?
        connection.tables.beginStatement()
        // The text after the first command is read inside the closure: the C string (and `tail`,
        // which points into it) lives only there; a short string's is a copy on the stack.
        let (code, rest) = sql.withCString { text -> (Int32, String?) in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection.handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, &tail)
            guard let tail, tail.pointee != 0 else { return (code, nil) }
            return (code, String(cString: tail))
        }
        (self.writes, self.changedSchema) = connection.tables.endStatement(sql: sql)
        guard code == SQLITE_OK else { throw SQLiteError.make(code, connection.handle, sql: sql) }
        guard let handle else {
            throw DatabaseError(.misuse, "the SQL holds no statement", sql: sql)
        }
        if let rest, !rest.allSatisfy({ $0.isWhitespace || $0 == ";" }) {
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

    deinit {
        sqlite3_finalize(handle)
        arena?.deallocate()
        for retired in retiredArenas { retired.deallocate() }
    }

    /// The tables the statement writes, triggers and foreign-key actions included.
    private let writes: Set<String>
    /// Whether the statement makes, alters or drops a schema object, as the
    /// authorizer reported its actions when SQLite compiled it.
    let changedSchema: Bool
    /// The table log's epoch when this statement last added its writes.
    @exclusivity(unchecked) private var writesAddedInEpoch = -1

    /// The bytes of the texts, blobs and dates bound last, which SQLite reads
    /// in place (`SQLITE_STATIC`) until the next bind: copied here rather than
    /// by SQLite, whose own copy (`SQLITE_TRANSIENT`) allocates for every value.
    /// Owned by the statement, so a caller's value may change or go away as
    /// soon as `bind` returns.
    @exclusivity(unchecked) private var arena: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var arenaCapacity = 0
    /// Arenas outgrown during the last bind, which values bound before the
    /// growth still point into: freed at the next bind, which rebinds every
    /// value before the statement runs again.
    @exclusivity(unchecked) private var retiredArenas: [UnsafeMutableRawPointer] = []
    /// The largest text or blob copied into the arena; a larger one is copied
    /// by SQLite, so a statement kept in the cache never keeps a large arena.
    private static let arenaValueLimit = 4096

    func bind(_ values: [Value]) throws {
        forgetCell()
        if !isReset {
            sqlite3_reset(handle)
            isReset = true
        }
        if !writes.isEmpty, writesAddedInEpoch != connection.tables.epoch {
            connection.tables.willRun(writing: writes)
            writesAddedInEpoch = connection.tables.epoch
        }
        guard values.count == Int(parameterCount) else {
            throw DatabaseError(.misuse, "the statement has \(parameterCount) placeholders but \(values.count) values were bound", sql: sql)
        }
        if !retiredArenas.isEmpty { freeRetiredArenas() }
        var used = 0
        try values.withUnsafeBufferPointer { values in
            for offset in 0..<values.count {
                let index = Int32(offset + 1)
                let code: Int32
                switch values[offset] {
                case .null: code = sqlite3_bind_null(handle, index)
                case .bool(let b): code = sqlite3_bind_int64(handle, index, b ? 1 : 0)
                case .integer(let i): code = sqlite3_bind_int64(handle, index, i)
                case .double(let d): code = sqlite3_bind_double(handle, index, d)
                case .text(let s), .json(let s):
                    let count = s.utf8.count
                    guard count <= Self.arenaValueLimit else {
                        code = bindText(s, index)
                        break
                    }
                    let bytes = room(count, after: used)
                    TextBytes.copyUTF8(s, to: bytes)
                    code = sqlite3_bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self), Int32(count), nil)
                    used &+= count
                case .blob(let data):
                    if data.isEmpty {
                        // A nil pointer would bind NULL: an empty blob is a zero-length blob.
                        code = sqlite3_bind_zeroblob(handle, index, 0)
                    } else if data.count > Self.arenaValueLimit {
                        guard data.count <= Int32.max else { throw tooBig(offset) }
                        code = data.withUnsafeBytes {
                            sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), depot_sqlite_transient())
                        }
                    } else {
                        let bytes = room(data.count, after: used)
                        data.copyBytes(to: bytes.assumingMemoryBound(to: UInt8.self), count: data.count)
                        code = sqlite3_bind_blob(handle, index, bytes, Int32(data.count), nil)
                        used &+= data.count
                    }
                case .date(let date):
                    guard let micros = ISO8601.microseconds(date) else {
                        throw DatabaseError(.encoding, "value \(offset + 1): the date \(date.timeIntervalSince1970) seconds from 1970 is outside the years 0001...9999", sql: sql)
                    }
                    let bytes = room(ISO8601.maxFormattedCount, after: used)
                    let count = ISO8601.write(microseconds: micros, into: bytes.assumingMemoryBound(to: UInt8.self))
                    code = sqlite3_bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self), Int32(count), nil)
                    used &+= count
                case .uuid(let uuid): code = bindText(UUIDText.lowercased(uuid), index)
                case .decimal(let decimal, let scale): code = bindText(Value.decimalText(decimal, scale: scale), index)
                }
                guard code == SQLITE_OK else { throw SQLiteError.make(code, connection.handle, sql: sql) }
            }
        }
    }

    /// Where the next `count` bytes go: in the arena after the `used` bytes
    /// bound already, or at the start of a larger arena (the outgrown one is
    /// retired, not freed, since values bound before point into it). Never a
    /// nil pointer, so an empty text binds as empty, not NULL.
    @inline(__always)
    private func room(_ count: Int, after used: Int) -> UnsafeMutableRawPointer {
        if let arena, arenaCapacity - used >= count { return arena + used }
        return growArena(count)
    }

    /// A new arena with room for `count` bytes; what was bound stays in the retired one.
    private func growArena(_ count: Int) -> UnsafeMutableRawPointer {
        if let arena { retiredArenas.append(arena) }
        let capacity = max(256, 2 * (arenaCapacity + count))
        let made = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        arena = made
        arenaCapacity = capacity
        return made
    }

    private func freeRetiredArenas() {
        for retired in retiredArenas { retired.deallocate() }
        retiredArenas.removeAll()
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
        forgetCell()
        if mentionsQueryOnly { connection.queryOnly = nil }
        isReset = false
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
            isReset = true
            throw error
        }
    }

    func reset() {
        forgetCell()
        sqlite3_reset(handle)
        isReset = true
        checkedColumns = false
    }

    /// Whether SQLite compiled the statement into a program that returns one
    /// row at most (``SQLiteConnection/compilesToOneRowAtMost(_:)``), found
    /// once per compiled program.
    ///
    /// Found on the second question, not the first: the analysis compiles
    /// the statement once more, which a statement run once (SQL made for one
    /// call) would pay for nothing; a statement run again (the connection
    /// caches it) pays once.
    var returnsOneRowAtMost: Bool {
        let reprepared = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let known = oneRowAtMost, known.reprepared == reprepared { return known.value }
        guard askedOneRowAtMost else {
            askedOneRowAtMost = true
            return false
        }
        let value = connection.compilesToOneRowAtMost(sql)
        oneRowAtMost = (reprepared, value)
        return value
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

    // Typed reads. Each cell is asked for once: `sqlite3_column_value` (one
    // call through the connection's API guard) gives the cell, whose storage
    // class and contents are then plain reads, where `sqlite3_column_type`
    // followed by `sqlite3_column_int64` went through the guard twice. The
    // last cell is kept, so a NULL check and the read that follows ask once.

    /// The column of `cell`, or -1 when no cell of the current row is kept.
    @exclusivity(unchecked) private var cellColumn: Int32 = -1
    @exclusivity(unchecked) private var cell: OpaquePointer?

    /// The cell at `column` of the current row. SQLite keeps it valid until
    /// the next step or reset; only conversions could change it, and the
    /// reads below convert nothing (each reads the storage class it found).
    @inline(__always)
    private func cell(_ column: Int32) -> OpaquePointer? {
        if column == cellColumn { return cell }
        let value = sqlite3_column_value(handle, column)
        cell = value
        cellColumn = column
        return value
    }

    /// Forgets the kept cell: the statement moved.
    @inline(__always)
    private func forgetCell() {
        cellColumn = -1
        cell = nil
    }

    /// The row's cells in one call: each asked for once, its storage class
    /// read, and its contents in that class, so nothing is converted. A blob
    /// is left to the reader (``RowCell/other``), which asks for it alone.
    func readCells(at columns: UnsafeBufferPointer<Int>, into cells: UnsafeMutablePointer<RowCell>) -> Bool {
        for offset in 0..<columns.count {
            let column = columns[offset]
            guard column >= 0 else {
                cells[offset] = .other
                continue
            }
            let value = sqlite3_column_value(handle, Int32(truncatingIfNeeded: column))
            switch sqlite3_value_type(value) {
            case SQLITE_INTEGER:
                cells[offset] = .integer(sqlite3_value_int64(value))
            case SQLITE_FLOAT:
                cells[offset] = .double(sqlite3_value_double(value))
            case SQLITE_TEXT:
                // Text first, then its length: the order SQLite documents as safe.
                if let text = sqlite3_value_text(value) {
                    cells[offset] = .text(text, count: Int(sqlite3_value_bytes(value)))
                } else {
                    cells[offset] = .other
                }
            case SQLITE_NULL:
                cells[offset] = .null
            default:
                cells[offset] = .other
            }
        }
        return true
    }

    func isNull(at index: Int) -> Bool {
        sqlite3_value_type(cell(Int32(index))) == SQLITE_NULL
    }

    func integer(at index: Int) -> Int64? {
        let value = cell(Int32(index))
        guard sqlite3_value_type(value) == SQLITE_INTEGER else { return nil }
        return sqlite3_value_int64(value)
    }

    func double(at index: Int) -> Double? {
        let value = cell(Int32(index))
        guard sqlite3_value_type(value) == SQLITE_FLOAT else { return nil }
        return sqlite3_value_double(value)
    }

    /// SQLite has no Boolean cells: a Bool is the INTEGER 0 or 1.
    func bool(at index: Int) -> Bool? { nil }

    /// True: a Bool is the INTEGER 0 or 1, so it is read as an integer first.
    var storesBooleansAsIntegers: Bool { true }

    /// SQLite has no date cells: a date is text or a number.
    func date(at index: Int) -> Date? { nil }

    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? {
        let value = cell(Int32(index))
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        // Text first, then its length: the order SQLite documents as safe.
        guard let pointer = sqlite3_value_text(value) else { return nil }
        return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value)))
    }

    func value(at index: Int) throws -> Value {
        let value = cell(Int32(index))
        switch sqlite3_value_type(value) {
        case SQLITE_NULL:
            return .null
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            return .double(sqlite3_value_double(value))
        case SQLITE_TEXT:
            guard let pointer = sqlite3_value_text(value) else { return .text("") }
            let count = Int(sqlite3_value_bytes(value))
            let bytes = UnsafeBufferPointer(start: pointer, count: count)
            // ASCII needs no validation; the generic validating initializer is slow.
            if TextBytes.isASCII(bytes) { return .text(String(decoding: bytes, as: UTF8.self)) }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw DatabaseError(.decoding, "the column holds text that is not valid UTF-8 (\(count) bytes)",
                                    column: columns.names[index], columnIndex: index, sql: sql)
            }
            return .text(text)
        default: // SQLITE_BLOB
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let pointer = sqlite3_value_blob(value) else { return .blob(Data()) }
            return .blob(Data(bytes: pointer, count: count))
        }
    }
}

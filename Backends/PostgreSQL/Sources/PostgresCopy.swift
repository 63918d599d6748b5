import CLibPQ
import Depot
import Foundation

extension PostgresConnection: BulkInsertingConnection {
    /// `COPY ... FROM STDIN`, binary where every value has the binary form of
    /// its column's type, text otherwise. Nothing is sent until the first row.
    func beginBulkInsert(table: String, columns: [String]) throws -> any BulkInsertWriter {
        settle()
        try finishStreaming()
        return PostgresCopyWriter(connection: self, table: table, columns: columns)
    }

    /// Starts a COPY and waits for the server to accept rows, running `prefix`
    /// (statements that end with a semicolon) before it in the same message.
    /// Returns the result sets `prefix` produced.
    func startCopy(_ copy: String, after prefix: String) throws -> [OpaquePointer] {
        var script = prefix + copy
        if let begin = pendingBegin {
            script = beginScript(begin) + "; " + script
            return try sendingBegin { try sendCopy(script, copy) }
        }
        return try sending { try sendCopy(script, copy) }
    }

    /// Sends the script that ends with a COPY, and reads results until the server asks for rows.
    private func sendCopy(_ script: String, _ copy: String) throws -> [OpaquePointer] {
        guard PQsendQuery(handle, script) == 1 else { throw PostgresError.connection(handle, "cannot send COPY") }
        var rows: [OpaquePointer] = []
        var failure: DatabaseError?
        while let result = PQgetResult(handle) {
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK: PQclear(result)
            case PGRES_TUPLES_OK: rows.append(result)
            case PGRES_COPY_IN where failure == nil:
                // Rows are expected now: stop reading results.
                PQclear(result)
                return rows
            default:
                if failure == nil { failure = PostgresError.make(result, handle, sql: copy, showsValues: showsValues) }
                PQclear(result)
            }
        }
        rows.forEach { PQclear($0) }
        throw failure ?? PostgresError.connection(handle, "COPY did not start")
    }
}

/// Streams the rows of one bulk insert, a megabyte at a time.
///
/// Binary COPY needs each value in its column's exact binary form (an `int4`
/// column takes 4 bytes, not 8), so the first message also locks the table
/// (COPY's own lock, taken a moment earlier) and reads its column types. A row
/// with a value whose binary form Depot does not write for that column (a
/// `Decimal`, text for a `uuid` column, an integer for a `numeric` one...)
/// ends the binary COPY, and the rest go in text COPY, where the server reads
/// each field as its column's type exactly as an INSERT's parameter.
final class PostgresCopyWriter: BulkInsertWriter {
    private let connection: PostgresConnection
    private let table: String
    private let columns: [String]
    private var buffer = PostgresCopyBuffer(capacity: 1 << 20 + 4096)
    private var rows = 0

    private enum State {
        case notStarted
        /// In binary COPY, with each column's type.
        case binary([Oid])
        case text
        case finished
    }
    private var state = State.notStarted

    init(connection: PostgresConnection, table: String, columns: [String]) {
        self.connection = connection
        self.table = table
        self.columns = columns
    }

    deinit {
        cancel()
        buffer.deallocate()
    }

    private var quotedTable: String { quote(table) }

    /// The COPY it runs: binary until a value needs text.
    var sql: String {
        if case .text = state { return copySQL(binary: false) }
        return copySQL(binary: true)
    }

    private func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    private func copySQL(binary: Bool) -> String {
        "COPY \(quotedTable) (\(columns.map(quote).joined(separator: ", "))) FROM STDIN" + (binary ? " (FORMAT binary)" : "")
    }

    func append(_ values: [Value]) throws {
        rows += 1
        switch state {
        case .notStarted:
            let types = try startBinary()
            if !(try appendBinary(values, types)) { try switchToText(values) }
        case .binary(let types):
            if !(try appendBinary(values, types)) { try switchToText(values) }
        case .text:
            try checkText(values)
            appendText(values)
        case .finished:
            throw DatabaseError(.misuse, "rows added to a finished bulk insert", sql: copySQL(binary: false))
        }
        if buffer.count >= 1 << 20 { try send() }
    }

    // MARK: Starting

    /// Locks the table, reads its column types and starts a binary COPY, in one round trip.
    ///
    /// The types are read under the lock, so no other transaction can change
    /// them before the rows arrive. Only at READ COMMITTED: in an older snapshot
    /// the catalog could show types changed since, so other levels use text.
    private func startBinary() throws -> [Oid] {
        let literal = "'" + quotedTable.replacingOccurrences(of: "'", with: "''") + "'"
        let prefix = """
            LOCK TABLE \(quotedTable) IN ROW EXCLUSIVE MODE; \
            SELECT a.attname, a.atttypid, current_setting('transaction_isolation') FROM pg_attribute a \
            WHERE a.attrelid = \(literal)::regclass AND a.attnum > 0 AND NOT a.attisdropped;
            """
        let results = try connection.startCopy(copySQL(binary: true), after: prefix)
        defer { results.forEach { PQclear($0) } }
        var byName: [String: Oid] = [:]
        var readCommitted = false
        if let result = results.last {
            for row in 0..<PQntuples(result) {
                let name = String(cString: PQgetvalue(result, row, 0))
                byName[name] = Oid(String(cString: PQgetvalue(result, row, 1))) ?? 0
                readCommitted = String(cString: PQgetvalue(result, row, 2)) == "read committed"
            }
        }
        // 0 is no type Depot writes in binary: every non-NULL value of that column goes in text.
        let types = readCommitted ? columns.map { byName[$0] ?? 0 } : columns.map { _ in 0 }
        for byte: UInt8 in [80, 71, 67, 79, 80, 89, 10, 0xFF, 13, 10, 0] { buffer.byte(byte) } // signature: PGCOPY\n\377\r\n\0
        buffer.integer(Int32(0)) // flags
        buffer.integer(Int32(0)) // header extension length
        state = .binary(types)
        return types
    }

    /// Ends the binary COPY before `values`, then goes on in text COPY with them.
    private func switchToText(_ values: [Value]) throws {
        buffer.integer(Int16(-1)) // the binary trailer
        try end()
        let results = try connection.startCopy(copySQL(binary: false), after: "")
        results.forEach { PQclear($0) }
        state = .text
        try checkText(values)
        appendText(values)
    }

    // MARK: Binary

    /// Appends the row in binary, or returns false (appending nothing) when a
    /// value has no binary form Depot writes for its column's type. A row that
    /// throws appends nothing either: it is written into a copy of the buffer,
    /// kept only when the whole row is in.
    private func appendBinary(_ values: [Value], _ types: [Oid]) throws -> Bool {
        guard values.count == types.count else { return false }
        let start = buffer.count
        var row = buffer
        // Back into the property whatever happens: growing may have moved the memory.
        defer { buffer = row }
        do {
            row.integer(Int16(truncatingIfNeeded: values.count)) // at most 1,600 columns
            for index in values.indices {
                // One pass: a value with no binary form takes back what the row wrote.
                guard Self.hasBinaryForm(values[index], types[index]) else {
                    row.truncate(to: start)
                    return false
                }
                try appendBinaryField(values[index], type: types[index], column: index, into: &row)
            }
        } catch {
            row.truncate(to: start)
            throw error
        }
        return true
    }

    /// Whether Depot writes `value` in the binary form of `type`, meaning what
    /// the server's text input would make of it.
    private static func hasBinaryForm(_ value: Value, _ type: Oid) -> Bool {
        switch (value, type) {
        case (.null, _): true
        case (.bool, PostgresType.bool): true
        case (.integer, PostgresType.int8): true
        case (.integer(let i), PostgresType.int4): Int32(exactly: i) != nil
        case (.integer(let i), PostgresType.int2): Int16(exactly: i) != nil
        case (.double, PostgresType.float8): true
        case (.text, PostgresType.text), (.text, PostgresType.varchar), (.text, PostgresType.bpchar): true
        case (.json, PostgresType.json), (.json, PostgresType.jsonb), (.json, PostgresType.text): true
        case (.text, PostgresType.json), (.text, PostgresType.jsonb): true
        case (.blob, PostgresType.bytea): true
        case (.date, PostgresType.timestamptz), (.date, PostgresType.timestamp): true
        case (.uuid, PostgresType.uuid): true
        default: false
        }
    }

    private func appendBinaryField(_ value: Value, type: Oid, column: Int, into row: inout PostgresCopyBuffer) throws {
        switch value {
        case .null: row.integer(Int32(-1))
        case .bool(let b):
            row.integer(Int32(1))
            row.byte(b ? 1 : 0)
        case .integer(let i):
            switch type {
            case PostgresType.int4: row.integer(Int32(4)); row.integer(Int32(truncatingIfNeeded: i))
            case PostgresType.int2: row.integer(Int32(2)); row.integer(Int16(truncatingIfNeeded: i))
            default: row.integer(Int32(8)); row.integer(i)
            }
        case .double(let d):
            row.integer(Int32(8))
            row.integer(d.bitPattern)
        case .text(let s), .json(let s):
            try checkNoNUL(s, column: column)
            let isJSONB = type == PostgresType.jsonb
            let count = s.utf8.count + (isJSONB ? 1 : 0)
            row.integer(try length(count, column: column))
            if isJSONB { row.byte(1) } // jsonb's binary format version
            row.utf8(s)
        case .blob(let data):
            row.integer(try length(data.count, column: column))
            data.withUnsafeBytes { row.bytes($0) }
        case .date(let date):
            let micros = try microseconds(date, column: column)
            row.integer(Int32(8))
            row.integer(micros - PostgresBinary.epochMicros)
        case .uuid(let uuid):
            row.integer(Int32(16))
            withUnsafeBytes(of: uuid.uuid) { row.bytes($0) }
        case .decimal:
            // hasBinaryForm sends every Decimal in text.
            throw DatabaseError(.misuse, "row \(rows), column \(column + 1): no binary form for a Decimal", sql: copySQL(binary: true))
        }
    }

    private func length(_ count: Int, column: Int) throws -> Int32 {
        guard let length = Int32(exactly: count) else {
            throw DatabaseError(.encoding, "row \(rows), column \(column + 1) is larger than PostgreSQL can take (2 GiB)", sql: copySQL(binary: true))
        }
        return length
    }

    // MARK: Text

    /// Appends the row in text, into a local copy of the buffer as the binary rows are.
    private func appendText(_ values: [Value]) {
        var row = buffer
        defer { buffer = row } // growing may have moved the memory
        for (index, value) in values.enumerated() {
            if index > 0 { row.byte(9) } // tab
            Self.appendTextField(value, into: &row)
        }
        row.byte(10) // newline
    }

    /// What text COPY cannot send, refused before the row is appended.
    private func checkText(_ values: [Value]) throws {
        for (index, value) in values.enumerated() {
            switch value {
            case .text(let s), .json(let s): try checkNoNUL(s, column: index)
            case .date(let date): _ = try microseconds(date, column: index)
            default: break
            }
        }
    }

    private static func appendTextField(_ value: Value, into buffer: inout PostgresCopyBuffer) {
        switch value {
        case .null: buffer.byte(92); buffer.byte(78) // \N
        case .bool(let b): buffer.byte(b ? 116 : 102) // t f
        case .integer(let i): buffer.utf8(String(i))
        case .double(let d): buffer.utf8(d.isInfinite ? (d < 0 ? "-Infinity" : "Infinity") : d.description)
        case .text(let s), .json(let s): appendEscaped(s, into: &buffer)
        case .blob(let data):
            buffer.byte(92); buffer.byte(92); buffer.byte(120) // \\x: an escaped backslash, then bytea's hex marker
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            for byte in data {
                buffer.byte(hex[Int(byte >> 4)])
                buffer.byte(hex[Int(byte & 0x0F)])
            }
        case .date(let date):
            // checkText refuses a date outside the years 0001...9999.
            guard let micros = ISO8601.microseconds(date) else { return }
            ISO8601.withFormatted(microseconds: micros) { buffer.bytes(UnsafeRawBufferPointer($0)) }
            buffer.byte(43); buffer.byte(48); buffer.byte(48) // +00: UTC, whatever the session's zone
        case .uuid(let uuid): buffer.utf8(UUIDText.lowercased(uuid))
        case .decimal(let decimal, let scale): buffer.utf8(Value.decimalText(decimal, scale: scale))
        }
    }

    /// COPY text escapes: backslash, tab, newline and carriage return.
    private static func appendEscaped(_ text: String, into buffer: inout PostgresCopyBuffer) {
        for byte in text.utf8 {
            switch byte {
            case 92: buffer.byte(92); buffer.byte(92)
            case 9: buffer.byte(92); buffer.byte(116)
            case 10: buffer.byte(92); buffer.byte(110)
            case 13: buffer.byte(92); buffer.byte(114)
            default: buffer.byte(byte)
            }
        }
    }

    // MARK: Checks shared by both formats

    private func checkNoNUL(_ text: String, column: Int) throws {
        var text = text
        let hasNUL = text.withUTF8 { utf8 in utf8.baseAddress.map { memchr($0, 0, utf8.count) != nil } ?? false }
        guard !hasNUL else {
            throw DatabaseError(.encoding, "row \(rows), column \(column + 1): PostgreSQL text cannot hold the NUL character (U+0000)", sql: copySQL(binary: false))
        }
    }

    private func microseconds(_ date: Date, column: Int) throws -> Int64 {
        guard let micros = ISO8601.microseconds(date) else {
            throw DatabaseError(.encoding, "row \(rows), column \(column + 1): the date is outside the years 0001...9999", sql: copySQL(binary: false))
        }
        return micros
    }

    // MARK: Sending

    private func send() throws {
        guard !buffer.isEmpty else { return }
        let status = PQputCopyData(connection.handle, buffer.pointer, Int32(buffer.count))
        buffer.removeAll()
        guard status == 1 else { throw PostgresError.connection(connection.handle, "cannot send COPY data") }
    }

    /// Sends what is left, ends the COPY and waits for the server's verdict.
    private func end() throws {
        let sql = copySQL(binary: { if case .binary = state { true } else { false } }())
        state = .finished
        try send()
        guard PQputCopyEnd(connection.handle, nil) == 1 else { throw PostgresError.connection(connection.handle, "cannot end COPY") }
        var failure: DatabaseError?
        while let result = PQgetResult(connection.handle) {
            if PQresultStatus(result) != PGRES_COMMAND_OK, failure == nil {
                failure = PostgresError.make(result, connection.handle, sql: sql, showsValues: connection.showsValues)
            }
            PQclear(result)
        }
        if let failure { throw failure }
    }

    func finish() throws {
        switch state {
        case .notStarted: state = .finished
        case .binary:
            buffer.integer(Int16(-1)) // the binary trailer
            try end()
        case .text: try end()
        case .finished: break
        }
    }

    func cancel() {
        switch state {
        case .binary, .text:
            state = .finished
            buffer.removeAll()
            guard !connection.isClosed else { return }
            _ = PQputCopyEnd(connection.handle, "cancelled by Depot")
            while let result = PQgetResult(connection.handle) { PQclear(result) }
        case .notStarted, .finished:
            state = .finished
        }
    }
}

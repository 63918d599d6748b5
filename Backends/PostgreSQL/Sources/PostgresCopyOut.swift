import CLibPQ
import Depot
import Foundation

extension PostgresConnection: CopyingOutConnection {
    /// `COPY (select) TO STDOUT (FORMAT binary)`, read as the SELECT's rows.
    func prepareCopyOut(select: String) throws -> any DriverStatement {
        try finishStreaming()
        return PostgresCopyOutStatement(connection: self, sql: "COPY (" + select + ") TO STDOUT (FORMAT binary)", select: select)
    }
}

/// `COPY (SELECT ...) TO STDOUT (FORMAT binary)` read as rows: the SELECT is
/// described first (column names and types), then each COPY row is decoded as
/// a result row would be. Memory holds one row at a time.
///
/// COPY takes no parameters: a statement with bound values is a `misuse` error.
final class PostgresCopyOutStatement: DriverStatement {
    private let connection: PostgresConnection
    private let sql: String
    private let select: String
    private(set) var columns = ColumnSet([])
    private var columnTypes: [Oid] = []
    /// The bytes received and not yet read; `start` is where the current row
    /// begins, `rowEnd` where the next one does.
    private let pending = CopyBuffer()
    private var start = 0
    private var rowEnd = 0
    /// Whether the COPY's last message was received.
    private var ended = false
    /// The current row's fields: offset in `pending` and length (-1 for NULL).
    private var fields: [(offset: Int, length: Int)] = []
    private var headerRead = false
    private enum State { case idle, bound, copying, done }
    private var state = State.idle
    let changes = 0
    /// A copy of a select's rows changes no schema.
    let changedSchema = false

    init(connection: PostgresConnection, sql: String, select: String) {
        self.connection = connection
        self.sql = sql
        self.select = select
    }

    deinit { reset() }

    func bind(_ values: [Value]) throws {
        reset()
        guard values.isEmpty else {
            throw DatabaseError(.misuse, "COPY takes no parameters: stream a query with bound values through store.rows(...) instead", sql: sql)
        }
        state = .bound
    }

    func prepareForStreaming() throws {}

    func step() throws -> Bool {
        switch state {
        case .idle, .done: return false
        case .bound: try begin()
        case .copying: break
        }
        return try nextRow()
    }

    func reset() {
        if state == .copying, !ended {
            // Read the rest away, so the connection is free again.
            var buffer: UnsafeMutablePointer<CChar>?
            while PQgetCopyData(connection.handle, &buffer, 0) > 0 { PQfreemem(buffer) }
            while let result = PQgetResult(connection.handle) { PQclear(result) }
            if connection.copyingOut === self { connection.copyingOut = nil }
        }
        pending.removeAll()
        (start, rowEnd, ended) = (0, 0, false)
        fields.removeAll(keepingCapacity: true)
        headerRead = false
        state = .idle
    }

    /// Describes the SELECT, then starts the COPY.
    private func begin() throws {
        connection.settle()
        try connection.finishStreaming()
        try connection.sendPendingBegin()
        let handle = connection.handle
        try connection.sending {
            let prepared = PQprepare(handle, "", select, 0, nil)
            defer { PQclear(prepared) }
            guard PQresultStatus(prepared) == PGRES_COMMAND_OK else {
                throw PostgresError.make(prepared, handle, sql: select, showsValues: connection.showsValues)
            }
            let described = PQdescribePrepared(handle, "")
            defer { PQclear(described) }
            guard PQresultStatus(described) == PGRES_COMMAND_OK else {
                throw PostgresError.make(described, handle, sql: select, showsValues: connection.showsValues)
            }
            let count = PQnfields(described)
            columns = ColumnSet((0..<count).map { String(cString: PQfname(described, $0)) })
            columnTypes = (0..<count).map { PQftype(described, $0) }
            guard PQsendQuery(handle, sql) == 1 else { throw PostgresError.connection(handle, "cannot send COPY") }
            guard let result = PQgetResult(handle) else { throw PostgresError.connection(handle, "COPY did not start") }
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COPY_OUT else {
                let error = PostgresError.make(result, handle, sql: sql, showsValues: connection.showsValues)
                while let rest = PQgetResult(handle) { PQclear(rest) }
                throw error
            }
        }
        state = .copying
        connection.copyingOut = self
    }

    /// Receives one more message into `pending`; false at the end of the COPY.
    private func receive() throws -> Bool {
        guard !ended else { return false }
        var buffer: UnsafeMutablePointer<CChar>?
        let length = PQgetCopyData(connection.handle, &buffer, 0)
        if length > 0, let buffer {
            buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                pending.append(UnsafeBufferPointer(start: $0, count: Int(length)))
            }
            PQfreemem(buffer)
            return true
        }
        // -1: the COPY ended, its outcome in the next result; -2: an error.
        var failure: DatabaseError?
        while let result = PQgetResult(connection.handle) {
            if PQresultStatus(result) != PGRES_COMMAND_OK, failure == nil {
                failure = PostgresError.make(result, connection.handle, sql: sql, showsValues: connection.showsValues)
            }
            PQclear(result)
        }
        ended = true
        if connection.copyingOut === self { connection.copyingOut = nil }
        if length == -2, failure == nil { failure = PostgresError.connection(connection.handle, "COPY failed") }
        if let failure { throw failure }
        return false
    }

    /// Whether `count` bytes from `start` are received, receiving more as needed.
    private func have(_ count: Int, from offset: Int) throws -> Bool {
        while pending.count - offset < count {
            guard try receive() else { return false }
        }
        return true
    }

    private func int32(at offset: Int) -> Int32 {
        Int32(bitPattern: UInt32(pending[offset]) << 24 | UInt32(pending[offset + 1]) << 16 | UInt32(pending[offset + 2]) << 8 | UInt32(pending[offset + 3]))
    }

    private func malformed(_ what: String) -> DatabaseError {
        DatabaseError(.decoding, "the COPY stream is malformed: \(what)", sql: sql)
    }

    /// Parses the next row: its fields' places in `pending`. False after the trailer.
    private func nextRow() throws -> Bool {
        // The previous row is no longer needed: drop what was read once it is much.
        start = rowEnd
        fields.removeAll(keepingCapacity: true)
        if start > 0, start == pending.count || start >= 1 << 16 {
            pending.removeFirst(start)
            (start, rowEnd) = (0, 0)
        }
        if !headerRead {
            guard try have(19, from: start) else { throw malformed("no header") }
            guard pending.bytes(at: start, count: 11).elementsEqual([0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]) else {
                throw malformed("no PGCOPY signature")
            }
            let extensionLength = Int(int32(at: start + 15))
            guard extensionLength >= 0, try have(19 + extensionLength, from: start) else { throw malformed("a cut header") }
            start += 19 + extensionLength
            rowEnd = start
            headerRead = true
        }
        guard try have(2, from: start) else { throw malformed("no trailer") }
        let count = Int(Int16(bitPattern: UInt16(pending[start]) << 8 | UInt16(pending[start + 1])))
        if count == -1 {
            rowEnd = start + 2
            // The COPY's end: its result says whether it succeeded.
            while try receive() {}
            state = .done
            return false
        }
        guard count == columnTypes.count else { throw malformed("a row of \(count) fields for \(columnTypes.count) columns") }
        var offset = start + 2
        for _ in 0..<count {
            guard try have(4, from: offset) else { throw malformed("a cut row") }
            let length = Int(int32(at: offset))
            offset += 4
            if length >= 0 {
                guard try have(length, from: offset) else { throw malformed("a cut field") }
            }
            fields.append((offset, length))
            offset += max(length, 0)
        }
        rowEnd = offset
        return true
    }

    // MARK: Reading the row

    private func cell(_ index: Int) -> (type: Oid, bytes: UnsafeRawBufferPointer)? {
        guard index < fields.count, fields[index].length >= 0 else { return nil }
        let (offset, length) = fields[index]
        // `pending` does not change while the row is read: its memory stays put.
        return (columnTypes[index], UnsafeRawBufferPointer(pending.bytes(at: offset, count: length)))
    }

    func isNull(at index: Int) -> Bool { index < fields.count && fields[index].length < 0 }

    /// The row's cells from the fields already split, each classified as the fast paths would.
    func readCells(at columns: UnsafeBufferPointer<Int>, into cells: UnsafeMutablePointer<RowCell>) -> Bool {
        for offset in 0..<columns.count {
            let index = columns[offset]
            if index >= 0, index < fields.count, fields[index].length < 0 {
                cells[offset] = .null
            } else if index >= 0, let cell = cell(index), let start = cell.bytes.baseAddress {
                cells[offset] = PostgresCell.readAhead(PostgresCell.ReadAhead(cell.type), start, count: cell.bytes.count)
            } else {
                cells[offset] = .other
            }
        }
        return true
    }
    func integer(at index: Int) -> Int64? { cell(index).flatMap(PostgresCell.integer) }
    func double(at index: Int) -> Double? { cell(index).flatMap(PostgresCell.double) }
    func bool(at index: Int) -> Bool? { cell(index).flatMap(PostgresCell.bool) }
    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? { cell(index).flatMap(PostgresCell.textBytes) }
    func date(at index: Int) -> Date? { cell(index).flatMap(PostgresCell.date) }

    func value(at index: Int) throws -> Value {
        guard index < fields.count else { throw DatabaseError(.misuse, "no current row", sql: sql) }
        guard let cell = cell(index) else { return .null }
        do {
            return try PostgresBinary.value(type: cell.type, bytes: cell.bytes)
        } catch let error as PostgresBinary.Unsupported {
            throw DatabaseError(.decoding, error.message, column: columns.names[index], columnIndex: index, sql: sql)
        }
    }

    /// Reads the rest of the COPY into memory, so another statement can run.
    func bufferRemainingRows() throws {
        guard state == .copying else { return }
        while try receive() {}
    }
}

/// Bytes received from the server, in memory the statement owns: a row's
/// cells point into it, and stay valid until the statement reads the next row.
final class CopyBuffer {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes it holds.
    private(set) var count = 0

    init() {
        capacity = 1 << 16
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    subscript(index: Int) -> UInt8 { base[index] }

    /// The bytes from `offset`, `count` of them (both within what it holds).
    func bytes(at offset: Int, count: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: base + offset, count: count)
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if count + bytes.count > capacity {
            let grown = max(capacity * 2, count + bytes.count)
            let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            moved.update(from: base, count: count)
            base.deallocate()
            (base, capacity) = (moved, grown)
        }
        if let source = bytes.baseAddress { (base + count).update(from: source, count: bytes.count) }
        count += bytes.count
    }

    /// Drops the first `n` bytes (at most `count`).
    func removeFirst(_ n: Int) {
        let kept = count - n
        if kept > 0 { base.update(from: base + n, count: kept) }
        count = max(0, kept)
    }

    func removeAll() { count = 0 }
}

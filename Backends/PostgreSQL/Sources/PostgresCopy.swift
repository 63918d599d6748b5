import CLibPQ
import Depot
import Foundation

extension PostgresConnection: BulkInsertingConnection {
    /// `COPY ... FROM STDIN` in text format: the server reads each field as its
    /// column's type, as it reads untyped parameters, so any column type works.
    func beginBulkInsert(table: String, columns: [String]) throws -> any BulkInsertWriter {
        try sendPendingBegin()
        try finishStreaming()
        let quoted = columns.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: ", ")
        let sql = "COPY \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\" (\(quoted)) FROM STDIN"
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COPY_IN else {
            throw PostgresError.make(result, handle, sql: sql, showsValues: showsValues)
        }
        return PostgresCopyWriter(connection: self, sql: sql)
    }
}

/// Streams rows in COPY's text format, a megabyte at a time.
final class PostgresCopyWriter: BulkInsertWriter {
    private let connection: PostgresConnection
    private let sql: String
    private var buffer: [UInt8] = []
    private var open = true
    private var rows = 0

    init(connection: PostgresConnection, sql: String) {
        self.connection = connection
        self.sql = sql
        buffer.reserveCapacity(1 << 20 + 4096)
    }

    deinit { cancel() }

    func append(_ values: [Value]) throws {
        rows += 1
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.append(9) } // tab
            try appendField(value, column: index)
        }
        buffer.append(10) // newline
        if buffer.count >= 1 << 20 { try send() }
    }

    private func appendField(_ value: Value, column: Int) throws {
        switch value {
        case .null: buffer.append(contentsOf: [92, 78]) // \N
        case .bool(let b): buffer.append(b ? 116 : 102) // t f
        case .integer(let i): buffer.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isInfinite { buffer.append(contentsOf: (d < 0 ? "-Infinity" : "Infinity").utf8) } else { buffer.append(contentsOf: d.description.utf8) }
        case .text(let s), .json(let s): try appendEscaped(s, column: column)
        case .blob(let data):
            buffer.append(contentsOf: [92, 92, 120]) // \\x: an escaped backslash, then bytea's hex marker
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            for byte in data {
                buffer.append(hex[Int(byte >> 4)])
                buffer.append(hex[Int(byte & 0x0F)])
            }
        case .date(let date):
            guard let micros = ISO8601.microseconds(date) else {
                throw DatabaseError(.encoding, "row \(rows), column \(column + 1): the date is outside the years 0001...9999", sql: sql)
            }
            ISO8601.withFormatted(microseconds: micros) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: [43, 48, 48]) // +00: UTC, whatever the session's zone
        case .uuid(let uuid): buffer.append(contentsOf: uuid.uuidString.lowercased().utf8)
        case .decimal(let decimal): buffer.append(contentsOf: decimal.description.utf8)
        }
    }

    /// COPY text escapes: backslash, tab, newline and carriage return; NUL cannot be sent.
    private func appendEscaped(_ text: String, column: Int) throws {
        for byte in text.utf8 {
            switch byte {
            case 92: buffer.append(contentsOf: [92, 92])
            case 9: buffer.append(contentsOf: [92, 116])
            case 10: buffer.append(contentsOf: [92, 110])
            case 13: buffer.append(contentsOf: [92, 114])
            case 0: throw DatabaseError(.encoding, "row \(rows), column \(column + 1): PostgreSQL text cannot hold the NUL character (U+0000)", sql: sql)
            default: buffer.append(byte)
            }
        }
    }

    private func send() throws {
        guard !buffer.isEmpty else { return }
        let status = buffer.withUnsafeBytes {
            PQputCopyData(connection.handle, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count))
        }
        buffer.removeAll(keepingCapacity: true)
        guard status == 1 else { throw PostgresError.connection(connection.handle, "cannot send COPY data") }
    }

    func finish() throws {
        guard open else { return }
        try send()
        open = false
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

    func cancel() {
        guard open else { return }
        open = false
        buffer.removeAll()
        guard !connection.isClosed else { return }
        _ = PQputCopyEnd(connection.handle, "cancelled by Depot")
        while let result = PQgetResult(connection.handle) { PQclear(result) }
    }
}

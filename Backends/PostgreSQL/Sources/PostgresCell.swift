import CLibPQ
import Depot
import Foundation

/// Reads one binary cell (its type and bytes) as the fast paths of a row
/// source do: exactly what `PostgresBinary.value` would give for that kind of
/// cell, and nil for any other kind. Shared by result rows and COPY rows.
enum PostgresCell {
    @inline(__always)
    static func integer(_ cell: (type: Oid, bytes: UnsafeRawBufferPointer)) -> Int64? {
        switch cell.type {
        case PostgresType.int8 where cell.bytes.count == 8: return PostgresBinary.read(Int64.self, cell.bytes)
        case PostgresType.int4 where cell.bytes.count == 4: return Int64(PostgresBinary.read(Int32.self, cell.bytes))
        case PostgresType.int2 where cell.bytes.count == 2: return Int64(PostgresBinary.read(Int16.self, cell.bytes))
        default: return nil
        }
    }

    @inline(__always)
    static func double(_ cell: (type: Oid, bytes: UnsafeRawBufferPointer)) -> Double? {
        switch cell.type {
        case PostgresType.float8 where cell.bytes.count == 8: return Double(bitPattern: PostgresBinary.read(UInt64.self, cell.bytes))
        case PostgresType.float4 where cell.bytes.count == 4: return Double(Float(bitPattern: PostgresBinary.read(UInt32.self, cell.bytes)))
        default: return nil
        }
    }

    @inline(__always)
    static func bool(_ cell: (type: Oid, bytes: UnsafeRawBufferPointer)) -> Bool? {
        guard cell.type == PostgresType.bool, cell.bytes.count == 1 else { return nil }
        return cell.bytes[0] != 0
    }

    @inline(__always)
    static func textBytes(_ cell: (type: Oid, bytes: UnsafeRawBufferPointer)) -> UnsafeBufferPointer<UInt8>? {
        switch cell.type {
        case PostgresType.text, PostgresType.varchar, PostgresType.bpchar, PostgresType.name, PostgresType.char,
             PostgresType.unknown, PostgresType.xml:
            return cell.bytes.bindMemory(to: UInt8.self)
        default:
            return nil
        }
    }

    @inline(__always)
    static func date(_ cell: (type: Oid, bytes: UnsafeRawBufferPointer)) -> Date? {
        guard cell.type == PostgresType.timestamptz || cell.type == PostgresType.timestamp, cell.bytes.count == 8 else { return nil }
        let micros = PostgresBinary.read(Int64.self, cell.bytes)
        guard micros != .max, micros != .min else { return nil }
        return try? PostgresBinary.storableDate(micros.addingReportingOverflow(PostgresBinary.epochMicros))
    }

    /// How a column's cells are read ahead (``readAhead(_:_:count:)``),
    /// worked out once from its type rather than for every cell.
    enum ReadAhead: UInt8 {
        case other, int8, int4, int2, float8, float4, bool, timestamp, text

        init(_ type: Oid) {
            switch type {
            case PostgresType.int8: self = .int8
            case PostgresType.int4: self = .int4
            case PostgresType.int2: self = .int2
            case PostgresType.float8: self = .float8
            case PostgresType.float4: self = .float4
            case PostgresType.bool: self = .bool
            case PostgresType.timestamptz, PostgresType.timestamp: self = .timestamp
            case PostgresType.text, PostgresType.varchar, PostgresType.bpchar, PostgresType.name, PostgresType.char,
                 PostgresType.unknown, PostgresType.xml:
                self = .text
            default: self = .other
            }
        }
    }

    /// A cell that is not NULL, as read ahead with its row: what the fast
    /// reads above say for it (the same lengths checked, the same instants
    /// refused), or ``RowCell/other`` for any cell they do not answer for.
    @inline(__always)
    static func readAhead(_ kind: ReadAhead, _ start: UnsafeRawPointer, count: Int) -> RowCell {
        switch kind {
        case .int8 where count == 8: return .integer(Int64(bigEndian: start.loadUnaligned(as: Int64.self)))
        case .int4 where count == 4: return .integer(Int64(Int32(bigEndian: start.loadUnaligned(as: Int32.self))))
        case .int2 where count == 2: return .integer(Int64(Int16(bigEndian: start.loadUnaligned(as: Int16.self))))
        case .float8 where count == 8: return .double(Double(bitPattern: UInt64(bigEndian: start.loadUnaligned(as: UInt64.self))))
        case .float4 where count == 4: return .double(Double(Float(bitPattern: UInt32(bigEndian: start.loadUnaligned(as: UInt32.self)))))
        case .bool where count == 1: return .bool(start.load(as: UInt8.self) != 0)
        case .timestamp where count == 8:
            let bytes = UnsafeRawBufferPointer(start: start, count: count)
            return date((PostgresType.timestamptz, bytes)).map(RowCell.date) ?? .other
        case .text: return .text(start.assumingMemoryBound(to: UInt8.self), count: count)
        default: return .other
        }
    }
}

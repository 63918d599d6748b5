import CLibPQ
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
}

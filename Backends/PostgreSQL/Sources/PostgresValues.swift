import CLibPQ
import Depot
import Foundation

/// PostgreSQL type OIDs Depot reads and writes.
enum PostgresType {
    static let bool: Oid = 16, bytea: Oid = 17, char: Oid = 18, name: Oid = 19, int8: Oid = 20, int2: Oid = 21
    static let int4: Oid = 23, text: Oid = 25, oid: Oid = 26, json: Oid = 114, xml: Oid = 142
    static let float4: Oid = 700, float8: Oid = 701, unknown: Oid = 705, bpchar: Oid = 1042, varchar: Oid = 1043
    static let date: Oid = 1082, timestamp: Oid = 1114, timestamptz: Oid = 1184, numeric: Oid = 1700
    static let uuid: Oid = 2950, jsonb: Oid = 3802
}

/// Microseconds between 1970-01-01 and PostgreSQL's epoch, 2000-01-01.
private let postgresEpochMicros: Int64 = 946_684_800_000_000

/// A statement's bound parameters as libpq takes them, in buffers kept from one
/// execution to the next: binding allocates nothing once they have grown.
///
/// How a ``Value`` is sent: fixed-width types in binary with their type, so
/// `SELECT $1` keeps it; text, JSON and NULL as untyped text, so the server
/// reads them as the column or function needs (`uuid`, `jsonb`, an enum...).
final class PostgresParameters {
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions,
    // PostgreSQL, one insert per row (pginsert), client side: 461.2M instructions with the checks of
    // PostgresStatement and PostgresValues, 444.6M without.
    /// The types the server is told; 0 lets it infer the type from the statement.
    @exclusivity(unchecked) private(set) var types: [Oid] = []
    @exclusivity(unchecked) private(set) var count = 0
    // One slot per parameter, grown as statements with more parameters come:
    // 0 text or 1 binary, the length, where its bytes start (-1 for NULL), and
    // the pointer libpq gets. Touched by one thread at a time (the statement's).
    @exclusivity(unchecked) private var slots = 0
    @exclusivity(unchecked) private var formats: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var lengths: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var offsets: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var pointers: UnsafeMutablePointer<UnsafePointer<CChar>?>
    /// Every value's bytes, one after another. Text-format values end with a NUL.
    @exclusivity(unchecked) private var bytes: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var byteCapacity = 256
    @exclusivity(unchecked) private var used = 0

    init() {
        formats = .allocate(capacity: 0)
        lengths = .allocate(capacity: 0)
        offsets = .allocate(capacity: 0)
        pointers = .allocate(capacity: 0)
        bytes = .allocate(byteCount: byteCapacity, alignment: 8)
    }

    deinit {
        formats.deallocate()
        lengths.deallocate()
        offsets.deallocate()
        pointers.deallocate()
        bytes.deallocate()
    }

    /// Whether the parameter at `index` is NULL.
    @inline(__always)
    func isNull(at index: Int) -> Bool { offsets[index] < 0 }

    /// Replaces the parameters with `values`.
    func bind(_ values: [Value]) throws {
        types.removeAll(keepingCapacity: true)
        count = 0
        used = 0
        if values.count > slots { growSlots(values.count) }
        try values.withUnsafeBufferPointer { values in
            for offset in 0..<values.count {
                try append(values[offset], position: offset + 1)
            }
        }
    }

    private func growSlots(_ needed: Int) {
        let capacity = max(needed, 2 * slots)
        func grown<T>(_ old: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<T> {
            let made = UnsafeMutablePointer<T>.allocate(capacity: capacity)
            made.moveInitialize(from: old, count: count)
            old.deallocate()
            return made
        }
        formats = grown(formats)
        lengths = grown(lengths)
        offsets = grown(offsets)
        pointers = grown(pointers)
        slots = capacity
    }

    /// Room for `count` more bytes after those written; the buffer may move,
    /// so values are found by offset until ``withArrays(_:)``.
    @inline(__always)
    private func room(_ count: Int) -> UnsafeMutableRawPointer {
        if byteCapacity - used < count { growBytes(count) }
        return bytes + used
    }

    private func growBytes(_ count: Int) {
        let capacity = max(2 * byteCapacity, used + count)
        let made = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        made.copyMemory(from: bytes, byteCount: used)
        bytes.deallocate()
        bytes = made
        byteCapacity = capacity
    }

    /// Records the value whose `length` bytes were just written at `used`.
    @inline(__always)
    private func add(type: Oid, format: Int32, length: Int) {
        types.append(type)
        formats[count] = format
        offsets[count] = used
        // Callers refuse values of 2 GiB or more, so the length fits.
        lengths[count] = Int32(truncatingIfNeeded: length)
        count += 1
        used += length
    }

    @inline(__always)
    private func addBigEndian<T: FixedWidthInteger>(_ x: T, type: Oid) {
        room(MemoryLayout<T>.size).storeBytes(of: x.bigEndian, as: T.self)
        add(type: type, format: 1, length: MemoryLayout<T>.size)
    }

    private func addText(_ text: String, position: Int, type: Oid = 0) throws {
        let length = text.utf8.count
        guard length < Int32.max else {
            throw DatabaseError(.encoding, "value \(position) is larger than PostgreSQL can bind (2 GiB)")
        }
        let destination = room(length + 1)
        TextBytes.copyUTF8(text, to: destination)
        // libpq reads text up to its NUL: one inside would cut the value short.
        guard length == 0 || memchr(destination, 0, length) == nil else {
            throw DatabaseError(.encoding, "value \(position): PostgreSQL text cannot hold the NUL character (U+0000)")
        }
        destination.storeBytes(of: 0, toByteOffset: length, as: UInt8.self)
        add(type: type, format: 0, length: length + 1)
    }

    private func append(_ value: Value, position: Int) throws {
        switch value {
        case .null:
            types.append(0)
            formats[count] = 0
            offsets[count] = -1
            lengths[count] = 0
            count += 1
        case .bool(let b):
            room(1).storeBytes(of: b ? 1 : 0, as: UInt8.self)
            add(type: PostgresType.bool, format: 1, length: 1)
        case .integer(let i): addBigEndian(i, type: PostgresType.int8)
        case .double(let d): addBigEndian(d.bitPattern, type: PostgresType.float8)
        case .text(let s), .json(let s): try addText(s, position: position)
        case .blob(let data):
            guard data.count <= Int32.max else {
                throw DatabaseError(.encoding, "value \(position) is larger than PostgreSQL can bind (2 GiB)")
            }
            let destination = room(data.count)
            data.copyBytes(to: destination.assumingMemoryBound(to: UInt8.self), count: data.count)
            add(type: PostgresType.bytea, format: 1, length: data.count)
        case .date(let date):
            guard let micros = ISO8601.microseconds(date) else {
                throw DatabaseError(.encoding, "value \(position): the date \(date.timeIntervalSince1970) seconds from 1970 is outside the years 0001...9999")
            }
            addBigEndian(micros - postgresEpochMicros, type: PostgresType.timestamptz)
        case .uuid(let uuid):
            room(16).storeBytes(of: uuid.uuid, as: uuid_t.self)
            add(type: PostgresType.uuid, format: 1, length: 16)
        case .decimal(let decimal, let scale):
            guard !decimal.isNaN else { throw DatabaseError(.encoding, "value \(position): Decimal NaN cannot be stored") }
            try addText(Value.decimalText(decimal, scale: scale), position: position, type: PostgresType.numeric)
        }
    }

    /// Runs `body` with libpq's arrays (values, lengths, formats), which point into these buffers.
    func withArrays<T>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T) -> T {
        // An empty non-NULL value (an empty blob) still needs a valid pointer:
        // the buffer always has room past the last value.
        _ = room(1)
        for index in 0..<count {
            let offset = offsets[index]
            pointers[index] = offset < 0 ? nil : UnsafeRawPointer(bytes + offset).assumingMemoryBound(to: CChar.self)
        }
        return body(pointers, lengths, formats)
    }
}

/// Reads binary-format result values.
enum PostgresBinary {
    /// 2000-01-01, PostgreSQL's epoch, in microseconds since 1970.
    static let epochMicros = postgresEpochMicros

    struct Unsupported: Error { let message: String }

    static func read<T: FixedWidthInteger>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> T {
        T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// The value of one binary result cell of the given type.
    static func value(type: Oid, bytes: UnsafeRawBufferPointer) throws -> Value {
        func expect(_ count: Int) throws {
            guard bytes.count == count else { throw Unsupported(message: "expected \(count) bytes for type \(type), got \(bytes.count)") }
        }
        switch type {
        case PostgresType.bool:
            try expect(1)
            return .bool(bytes[0] != 0)
        case PostgresType.int8:
            try expect(8)
            return .integer(read(Int64.self, bytes))
        case PostgresType.int4:
            try expect(4)
            return .integer(Int64(read(Int32.self, bytes)))
        case PostgresType.int2:
            try expect(2)
            return .integer(Int64(read(Int16.self, bytes)))
        case PostgresType.oid:
            try expect(4)
            return .integer(Int64(read(UInt32.self, bytes)))
        case PostgresType.float8:
            try expect(8)
            return .double(Double(bitPattern: read(UInt64.self, bytes)))
        case PostgresType.float4:
            try expect(4)
            return .double(Double(Float(bitPattern: read(UInt32.self, bytes))))
        case PostgresType.text, PostgresType.varchar, PostgresType.bpchar, PostgresType.name, PostgresType.char,
             PostgresType.unknown, PostgresType.xml:
            return .text(try utf8(bytes))
        case PostgresType.json:
            return .json(try utf8(bytes))
        case PostgresType.jsonb:
            guard bytes.count >= 1, bytes[0] == 1 else { throw Unsupported(message: "unknown jsonb format version") }
            return .json(try utf8(UnsafeRawBufferPointer(rebasing: bytes.dropFirst())))
        case PostgresType.bytea:
            return .blob(Data(bytes))
        case PostgresType.uuid:
            try expect(16)
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            return .uuid(UUID(uuid: uuid))
        case PostgresType.timestamptz, PostgresType.timestamp:
            try expect(8)
            let micros = read(Int64.self, bytes)
            guard micros != .max, micros != .min else {
                throw Unsupported(message: "an infinite timestamp has no Date")
            }
            return .date(try storableDate(micros.addingReportingOverflow(postgresEpochMicros)))
        case PostgresType.date:
            try expect(4)
            let days = read(Int32.self, bytes)
            guard days != .max, days != .min else { throw Unsupported(message: "an infinite date has no Date") }
            let (micros, overflow) = Int64(days).multipliedReportingOverflow(by: 86_400_000_000)
            guard !overflow else { throw outsideStorableYears }
            return .date(try storableDate(micros.addingReportingOverflow(postgresEpochMicros)))
        case PostgresType.numeric:
            return try numeric(bytes)
        default:
            throw Unsupported(message: "Depot does not read PostgreSQL type OID \(type); cast the column in SQL (for example ::text)")
        }
    }

    static let outsideStorableYears = Unsupported(
        message: "the date is outside the years 0001...9999 that Depot maps on every engine; cast it to text in SQL to read it")

    static let notExactlyADate = Unsupported(
        message: "a Date cannot hold this timestamp's microsecond exactly (so far from 2001 a Date's Double keeps fewer digits); cast it to text in SQL to read it")

    /// A date within the years every engine stores; a date outside them (PostgreSQL
    /// reaches 4713 BC and 294276 AD) is an error, never a clamped or wrapped one.
    static func storableDate(_ micros: (partialValue: Int64, overflow: Bool)) throws -> Date {
        guard !micros.overflow, micros.partialValue >= ISO8601.minMicros, micros.partialValue <= ISO8601.maxMicros else {
            throw outsideStorableYears
        }
        guard let date = ISO8601.exactDate(microseconds: micros.partialValue) else { throw notExactlyADate }
        return date
    }

    static func utf8(_ bytes: UnsafeRawBufferPointer) throws -> String {
        let bytes = bytes.bindMemory(to: UInt8.self)
        // ASCII needs no validation; the generic validating initializer is slow.
        if TextBytes.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Unsupported(message: "the text is not valid UTF-8")
        }
        return text
    }

    /// A binary `numeric`: base-10000 digits with a weight, a sign and a display scale,
    /// read as a decimal that keeps the scale (`10.50` stays `10.50` as text).
    static func numeric(_ bytes: UnsafeRawBufferPointer) throws -> Value {
        guard bytes.count >= 8 else { throw Unsupported(message: "a numeric needs at least 8 bytes") }
        let count = Int(read(Int16.self, bytes, at: 0))
        let weight = Int(read(Int16.self, bytes, at: 2))
        let sign = read(UInt16.self, bytes, at: 4)
        let scale = Int(read(Int16.self, bytes, at: 6))
        guard bytes.count == 8 + 2 * count else { throw Unsupported(message: "a numeric's length does not match its digits") }
        switch sign {
        case 0x0000, 0x4000: break
        case 0xC000: throw Unsupported(message: "numeric NaN has no Decimal")
        default: throw Unsupported(message: "an infinite numeric has no Decimal")
        }
        func digit(_ position: Int) -> Int { // position 0 is the group of weight `weight`
            position >= 0 && position < count ? Int(read(Int16.self, bytes, at: 8 + 2 * position)) : 0
        }
        var text = sign == 0x4000 ? "-" : ""
        if weight < 0 {
            text += "0"
        } else {
            for group in 0...weight {
                let d = digit(group)
                text += group == 0 ? String(d) : pad4(d)
            }
        }
        if scale > 0 {
            var fraction = ""
            for k in 1...((scale + 3) / 4) { fraction += pad4(digit(weight + k)) }
            text += "." + fraction.prefix(scale)
        }
        guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw Unsupported(message: "cannot read the numeric \(text)")
        }
        // Decimal keeps about 38 digits and rounds the rest away silently: refuse instead.
        guard normalized(decimal.description) == normalized(text) else {
            throw Unsupported(message: "the numeric \(text) has more digits than Decimal holds (it would read \(decimal))")
        }
        return .decimal(decimal, scale: max(0, scale))
    }

    /// `-0012.3400` → `-12.34`: the same number always has the same text.
    static func normalized(_ text: String) -> String {
        var body = Substring(text)
        var negative = false
        if body.first == "-" { negative = true; body = body.dropFirst() }
        var integer = body.prefix { $0 != "." }.drop { $0 == "0" }
        var fraction = body.drop { $0 != "." }.dropFirst()
        while fraction.last == "0" { fraction = fraction.dropLast() }
        if integer.isEmpty { integer = "0" }
        let result = fraction.isEmpty ? String(integer) : "\(integer).\(fraction)"
        return negative && result != "0" ? "-" + result : result
    }

    private static func pad4(_ d: Int) -> String {
        let s = String(d)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}

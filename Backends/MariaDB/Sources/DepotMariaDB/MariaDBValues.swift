import CMariaDB
import Depot
import Foundation

/// The binary binds of one execution: a `MYSQL_BIND` per marker, and the
/// memory each points at, freed after the execution (the server got a copy).
final class MariaDBParameters {
    let count: Int
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    private let lengths: UnsafeMutablePointer<UInt>
    private let nulls: UnsafeMutablePointer<my_bool>
    private var storage: [UnsafeMutableRawPointer] = []

    init(count: Int) {
        self.count = count
        binds = .allocate(capacity: max(count, 1))
        binds.initialize(repeating: MYSQL_BIND(), count: max(count, 1))
        lengths = .allocate(capacity: max(count, 1))
        lengths.initialize(repeating: 0, count: max(count, 1))
        nulls = .allocate(capacity: max(count, 1))
        nulls.initialize(repeating: 0, count: max(count, 1))
    }

    deinit {
        storage.forEach { $0.deallocate() }
        binds.deallocate()
        lengths.deallocate()
        nulls.deallocate()
    }

    private func copy<T>(_ value: T) -> UnsafeMutableRawPointer {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        pointer.storeBytes(of: value, as: T.self)
        storage.append(pointer)
        return pointer
    }

    private func copy(bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        if let base = bytes.baseAddress, bytes.count > 0 { pointer.copyMemory(from: base, byteCount: bytes.count) }
        storage.append(pointer)
        return pointer
    }

    /// Binds `value` to marker `index`; `position` is the value's 1-based place, for messages.
    func set(_ index: Int, _ value: Value, position: Int, sql: String) throws {
        var bind = MYSQL_BIND()
        bind.length = lengths + index
        bind.is_null = nulls + index
        switch value {
        case .null:
            bind.buffer_type = MYSQL_TYPE_NULL
            nulls[index] = 1
        case .bool(let b):
            bind.buffer_type = MYSQL_TYPE_TINY
            bind.buffer = copy(Int8(b ? 1 : 0))
        case .integer(let i):
            bind.buffer_type = MYSQL_TYPE_LONGLONG
            bind.buffer = copy(i)
        case .double(let d):
            guard !d.isNaN else {
                throw DatabaseError(.encoding, "value \(position): NaN cannot be stored: SQLite turns it into NULL, so Depot refuses it on every engine", sql: sql)
            }
            guard d.isFinite else {
                throw DatabaseError(.encoding, "value \(position): MariaDB cannot store infinity (a DOUBLE holds finite numbers only)", sql: sql)
            }
            bind.buffer_type = MYSQL_TYPE_DOUBLE
            bind.buffer = copy(d)
        case .text(let s), .json(let s):
            setBytes(&bind, index, Array(s.utf8), type: MYSQL_TYPE_STRING)
        case .uuid(let u):
            setBytes(&bind, index, Array(u.uuidString.lowercased().utf8), type: MYSQL_TYPE_STRING)
        case .decimal(let d, let scale):
            guard !d.isNaN else { throw DatabaseError(.encoding, "value \(position): Decimal NaN cannot be stored", sql: sql) }
            setBytes(&bind, index, Array(Value.decimalText(d, scale: scale).utf8), type: MYSQL_TYPE_STRING)
        case .blob(let data):
            bind.buffer_type = MYSQL_TYPE_BLOB
            bind.buffer = data.withUnsafeBytes { copy(bytes: $0) }
            lengths[index] = UInt(data.count)
            bind.buffer_length = UInt(data.count)
        case .date(let date):
            guard let micros = ISO8601.microseconds(date) else {
                throw DatabaseError(.encoding, "value \(position): the date \(date.timeIntervalSince1970) seconds from 1970 is outside the years 0001...9999", sql: sql)
            }
            bind.buffer_type = MYSQL_TYPE_DATETIME
            bind.buffer = copy(MariaDBTime.time(microseconds: micros))
        }
        binds[index] = bind
    }

    private func setBytes(_ bind: inout MYSQL_BIND, _ index: Int, _ bytes: [UInt8], type: enum_field_types) {
        bind.buffer_type = type
        bind.buffer = bytes.withUnsafeBytes { copy(bytes: $0) }
        lengths[index] = UInt(bytes.count)
        bind.buffer_length = UInt(bytes.count)
    }
}

/// Dates as `MYSQL_TIME` in UTC, microsecond precision.
enum MariaDBTime {
    static let microsPerDay: Int64 = 86_400_000_000

    static func time(microseconds micros: Int64) -> MYSQL_TIME {
        var days = micros / microsPerDay
        var rest = micros % microsPerDay
        if rest < 0 { rest += microsPerDay; days -= 1 }
        let (year, month, day) = ISO8601.civil(fromDays: days)
        var time = MYSQL_TIME()
        time.year = UInt32(year)
        time.month = UInt32(month)
        time.day = UInt32(day)
        time.hour = UInt32(rest / 3_600_000_000)
        time.minute = UInt32(rest / 60_000_000 % 60)
        time.second = UInt32(rest / 1_000_000 % 60)
        time.second_part = UInt(rest % 1_000_000)
        time.time_type = MYSQL_TIMESTAMP_DATETIME
        return time
    }

    static func microseconds(_ time: MYSQL_TIME) -> Int64 {
        let days = ISO8601.daysFromCivil(year: Int64(time.year), month: Int64(time.month), day: Int64(time.day))
        let seconds = Int64(time.hour) * 3600 + Int64(time.minute) * 60 + Int64(time.second)
        return days * microsPerDay + seconds * 1_000_000 + Int64(time.second_part)
    }
}

/// How one result column is fetched and read.
enum MariaDBColumnKind {
    case integer(unsigned: Bool)
    /// `BOOLEAN` (TINYINT(1)): 0 and 1 read as Booleans.
    case bool
    case double
    /// DECIMAL, sent as text.
    case decimal(scale: UInt32)
    case date
    case text
    case blob
    case null

    init(_ field: MYSQL_FIELD) {
        let unsigned = field.flags & UInt32(UNSIGNED_FLAG) != 0
        switch field.type {
        case MYSQL_TYPE_TINY where field.length == 1 && !unsigned: self = .bool
        case MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_LONG, MYSQL_TYPE_INT24, MYSQL_TYPE_LONGLONG, MYSQL_TYPE_YEAR:
            self = .integer(unsigned: unsigned)
        case MYSQL_TYPE_FLOAT, MYSQL_TYPE_DOUBLE: self = .double
        case MYSQL_TYPE_DECIMAL, MYSQL_TYPE_NEWDECIMAL: self = .decimal(scale: field.decimals)
        case MYSQL_TYPE_DATE, MYSQL_TYPE_DATETIME, MYSQL_TYPE_TIMESTAMP, MYSQL_TYPE_NEWDATE: self = .date
        case MYSQL_TYPE_NULL: self = .null
        case MYSQL_TYPE_GEOMETRY, MYSQL_TYPE_BIT: self = .blob
        default: self = field.charsetnr == 63 ? .blob : .text
        }
    }

    /// The buffer type to fetch it as.
    var bufferType: enum_field_types {
        switch self {
        case .integer, .bool: MYSQL_TYPE_LONGLONG
        case .double: MYSQL_TYPE_DOUBLE
        case .date: MYSQL_TYPE_DATETIME
        case .decimal, .text, .null: MYSQL_TYPE_STRING
        case .blob: MYSQL_TYPE_BLOB
        }
    }

    /// Fixed-size buffers hold 8 bytes (a `MYSQL_TIME` more); text starts at 256 and grows.
    var initialCapacity: Int {
        switch self {
        case .integer, .bool, .double: 8
        case .date: MemoryLayout<MYSQL_TIME>.stride
        case .decimal, .text, .blob, .null: 256
        }
    }

    var isVariable: Bool {
        switch self {
        case .decimal, .text, .blob, .null: true
        default: false
        }
    }
}

/// The result binds of a statement: one buffer per column, grown when a
/// value does not fit (`MYSQL_DATA_TRUNCATED`, then `mysql_stmt_fetch_column`).
final class MariaDBResultBuffers {
    let count: Int
    let kinds: [MariaDBColumnKind]
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    let lengths: UnsafeMutablePointer<UInt>
    let nulls: UnsafeMutablePointer<my_bool>
    let errors: UnsafeMutablePointer<my_bool>
    private var buffers: [UnsafeMutableRawPointer]
    private var capacities: [Int]

    init(kinds: [MariaDBColumnKind]) {
        self.kinds = kinds
        count = kinds.count
        let slots = max(count, 1)
        binds = .allocate(capacity: slots)
        binds.initialize(repeating: MYSQL_BIND(), count: slots)
        lengths = .allocate(capacity: slots)
        lengths.initialize(repeating: 0, count: slots)
        nulls = .allocate(capacity: slots)
        nulls.initialize(repeating: 0, count: slots)
        errors = .allocate(capacity: slots)
        errors.initialize(repeating: 0, count: slots)
        capacities = kinds.map(\.initialCapacity)
        buffers = capacities.map { UnsafeMutableRawPointer.allocate(byteCount: $0, alignment: 16) }
        for (index, kind) in kinds.enumerated() {
            var bind = MYSQL_BIND()
            bind.buffer_type = kind.bufferType
            bind.buffer = buffers[index]
            bind.buffer_length = UInt(capacities[index])
            bind.length = lengths + index
            bind.is_null = nulls + index
            bind.error = errors + index
            if case .integer(let unsigned) = kind { bind.is_unsigned = unsigned ? 1 : 0 }
            binds[index] = bind
        }
    }

    deinit {
        buffers.forEach { $0.deallocate() }
        binds.deallocate()
        lengths.deallocate()
        nulls.deallocate()
        errors.deallocate()
    }

    /// After a fetch that reported truncation: reads each cut value whole.
    /// Returns whether the binds changed (they must be bound again).
    func refetchTruncated(_ statement: UnsafeMutablePointer<MYSQL_STMT>) -> Bool {
        var grew = false
        for index in 0..<count where kinds[index].isVariable && nulls[index] == 0 && Int(lengths[index]) > capacities[index] {
            let needed = Int(lengths[index])
            buffers[index].deallocate()
            let capacity = max(needed, capacities[index] * 2)
            buffers[index] = .allocate(byteCount: capacity, alignment: 16)
            capacities[index] = capacity
            binds[index].buffer = buffers[index]
            binds[index].buffer_length = UInt(capacity)
            mysql_stmt_fetch_column(statement, binds + index, UInt32(index), 0)
            grew = true
        }
        return grew
    }

    /// The value of the current row's column `index`.
    func value(at index: Int) throws -> Value {
        if nulls[index] != 0 { return .null }
        let buffer = buffers[index]
        switch kinds[index] {
        case .null: return .null
        case .bool:
            let number = buffer.load(as: Int64.self)
            return number == 0 || number == 1 ? .bool(number == 1) : .integer(number)
        case .integer(let unsigned):
            if unsigned {
                let number = buffer.load(as: UInt64.self)
                if let exact = Int64(exactly: number) { return .integer(exact) }
                return .decimal(Decimal(number), scale: 0)
            }
            return .integer(buffer.load(as: Int64.self))
        case .double:
            return .double(buffer.load(as: Double.self))
        case .date:
            guard let date = ISO8601.exactDate(microseconds: MariaDBTime.microseconds(buffer.load(as: MYSQL_TIME.self))) else {
                throw DatabaseError(.decoding, "a Date cannot hold this DATETIME's microsecond exactly (so far from 2001 a Date's Double keeps fewer digits); cast it to text in SQL to read it", columnIndex: index)
            }
            return .date(date)
        case .decimal(let scale):
            let text = String(decoding: UnsafeRawBufferPointer(start: buffer, count: Int(lengths[index])), as: UTF8.self)
            if scale == 0, let integer = Int64(text) { return .integer(integer) }
            // Decimal keeps 38 significant digits and rounds the rest away silently: refuse instead.
            guard let decimal = Value.decimal(text: text) else {
                throw DatabaseError(.decoding, "column \(index): the DECIMAL \(text) has more digits than a Decimal holds; cast it to text in SQL to read it")
            }
            return decimal
        case .text:
            return .text(String(decoding: UnsafeRawBufferPointer(start: buffer, count: Int(lengths[index])), as: UTF8.self))
        case .blob:
            return .blob(Data(bytes: buffer, count: Int(lengths[index])))
        }
    }

    /// Every column of the current row.
    func row() throws -> [Value] {
        try (0..<count).map { try value(at: $0) }
    }

    func isNull(at index: Int) -> Bool { nulls[index] != 0 }

    func integer(at index: Int) -> Int64? {
        guard nulls[index] == 0, case .integer(false) = kinds[index] else { return nil }
        return buffers[index].load(as: Int64.self)
    }

    func double(at index: Int) -> Double? {
        guard nulls[index] == 0, case .double = kinds[index] else { return nil }
        return buffers[index].load(as: Double.self)
    }
}

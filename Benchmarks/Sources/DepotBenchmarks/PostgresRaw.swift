import CLibPQBench
import Foundation

/// Big-endian helpers for libpq's binary formats.
enum PGBinary {
    static let epoch: Int64 = 946_684_800_000_000 // 2000-01-01 in microseconds since 1970

    static func append<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    static func read<T: FixedWidthInteger>(_ type: T.Type, _ pointer: UnsafePointer<CChar>) -> T {
        T(bigEndian: UnsafeRawPointer(pointer).loadUnaligned(as: T.self))
    }

    static func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) - epoch }
    static func date(_ micros: Int64) -> Date { Date(timeIntervalSince1970: Double(micros + epoch) / 1_000_000) }
}

/// A COPY's data as a careful C loop builds it: one buffer allocated once,
/// each field stored or `memcpy`'d in place, sent every megabyte. A struct
/// kept in a local variable, so writing to it needs no runtime exclusivity check.
struct CopyBuffer {
    static let capacity = 1 << 20 + 4096
    let base = UnsafeMutableRawPointer.allocate(byteCount: CopyBuffer.capacity, alignment: 8)
    var count = 0

    @inline(__always) mutating func integer<T: FixedWidthInteger>(_ value: T) {
        (base + count).storeBytes(of: value.bigEndian, as: T.self)
        count &+= MemoryLayout<T>.size
    }
    @inline(__always) mutating func byte(_ value: UInt8) {
        (base + count).storeBytes(of: value, as: UInt8.self)
        count &+= 1
    }
    @inline(__always) mutating func bytes(_ source: UnsafeRawBufferPointer) {
        if let start = source.baseAddress { (base + count).copyMemory(from: start, byteCount: source.count) }
        count &+= source.count
    }
    /// A field of text COPY: the bytes as they are up to the first that needs an escape.
    @inline(__always) mutating func escaped(_ source: UnsafeBufferPointer<UInt8>) {
        var run = 0
        for (i, b) in source.enumerated() where b == 92 || b == 9 || b == 10 || b == 13 {
            bytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(source)[run..<i]))
            byte(92)
            byte(b == 92 ? 92 : b == 9 ? 116 : b == 10 ? 110 : 114)
            run = i + 1
        }
        bytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(source)[run...]))
    }
    /// Sends what is buffered once past a megabyte.
    @inline(__always) mutating func sendIfFull(_ connection: OpaquePointer?) {
        if count > 1 << 20 { send(connection) }
    }
    mutating func send(_ connection: OpaquePointer?) {
        _ = PQputCopyData(connection, base.assumingMemoryBound(to: CChar.self), Int32(count))
        count = 0
    }
    func deallocate() { base.deallocate() }
}

/// Each row's ten parameters, binary where fixed-width, written into one buffer
/// allocated once: no allocation per row, as a careful hand-written loop does.
final class RawParameters {
    let types: [Oid]
    let dates: DateStorage
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
    let pointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: 10)
    let lengths = UnsafeMutablePointer<Int32>.allocate(capacity: 10)
    let formats = UnsafeMutablePointer<Int32>.allocate(capacity: 10)

    init(dates: DateStorage) {
        self.dates = dates
        let date: Oid = dates == .native ? 1184 : 25
        types = [20, 25, 25, 16, 16, 20, date, 20, date, 701]
        formats.initialize(repeating: 1, count: 10)
    }

    deinit {
        buffer.deallocate(); pointers.deallocate(); lengths.deallocate(); formats.deallocate()
    }

    /// Writes one row's fields; `field(i)` then gives each one's bytes (nil for NULL).
    /// Straight-line stores through a moving pointer, as C fills its parameter arrays.
    func set(_ item: Item) {
        var at = buffer
        @inline(__always) func mark(_ i: Int, _ start: UnsafeMutablePointer<UInt8>, _ count: Int) {
            pointers[i] = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
            lengths[i] = Int32(count)
        }
        @inline(__always) func int8(_ i: Int, _ v: Int64, _ at: inout UnsafeMutablePointer<UInt8>) {
            UnsafeMutableRawPointer(at).storeBytes(of: v.bigEndian, as: Int64.self)
            mark(i, at, 8)
            at += 8
        }
        @inline(__always) func text(_ i: Int, _ s: String, _ at: inout UnsafeMutablePointer<UInt8>) {
            let count = s.utf8.withContiguousStorageIfAvailable { source in
                if let start = source.baseAddress { at.update(from: start, count: source.count) }
                return source.count
            } ?? { () -> Int in
                var n = 0
                for b in s.utf8 { at[n] = b; n += 1 }
                return n
            }()
            mark(i, at, count)
            at += count
        }
        @inline(__always) func date(_ i: Int, _ d: Date, _ at: inout UnsafeMutablePointer<UInt8>) {
            if dates == .native {
                int8(i, HandISO.micros(d) - PGBinary.epoch, &at)
            } else {
                let count = HandISO.write(d, into: at)
                mark(i, at, count)
                at += count
            }
        }
        int8(0, item.id, &at)
        text(1, item.title, &at)
        text(2, item.notes, &at)
        at.pointee = item.isCompleted ? 1 : 0; mark(3, at, 1); at += 1
        at.pointee = item.isFlagged ? 1 : 0; mark(4, at, 1); at += 1
        if let p = item.priority { int8(5, Int64(p), &at) } else { pointers[5] = nil; lengths[5] = 0 }
        if let due = item.dueDate { date(6, due, &at) } else { pointers[6] = nil; lengths[6] = 0 }
        int8(7, item.listID, &at)
        date(8, item.createdAt, &at)
        int8(9, Int64(bitPattern: item.score.bitPattern), &at)
    }

    /// The bytes of field `i` as `set` wrote them; nil for NULL.
    func field(_ i: Int) -> UnsafeRawBufferPointer? {
        pointers[i].map { UnsafeRawBufferPointer(start: $0, count: Int(lengths[i])) }
    }
}

/// The limit: libpq by hand.
final class RawPostgres {
    let url: String
    let dates: DateStorage
    private var connection: OpaquePointer?
    private var statements = 0

    /// A fresh statement name: the unnamed one would be replaced by the next BEGIN.
    private func nextName(_ base: String) -> String {
        statements += 1
        return "\(base)_\(statements)"
    }

    init(url: String, dates: DateStorage) throws {
        self.url = url
        self.dates = dates
        connection = PQconnectdb(url)
        guard PQstatus(connection) == CONNECTION_OK else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        try exec("SET TIME ZONE 'UTC'")
    }

    deinit { PQfinish(connection) }

    func exec(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw RawError.failed(String(cString: PQerrorMessage(connection)))
        }
    }

    func prepare(_ name: String, _ sql: String, _ types: [Oid]) throws {
        let result = PQprepare(connection, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
    }

    static let insertSQL = "INSERT INTO items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    static let selectSQL = "SELECT id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score FROM items"

    /// One PQexecPrepared per row, in one transaction.
    func insertPerRow(_ items: [Item]) throws {
        let parameters = RawParameters(dates: dates)
        let name = nextName("insert")
        try prepare(name, Self.insertSQL, parameters.types)
        try exec("BEGIN")
        // The name made a C string once, not at every call.
        try name.withCString { name in
            for item in items {
                parameters.set(item)
                let result = PQexecPrepared(connection, name, 10, parameters.pointers, parameters.lengths, parameters.formats, 1)
                let ok = PQresultStatus(result) == PGRES_COMMAND_OK
                PQclear(result)
                guard ok else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
            }
        }
        try exec("COMMIT")
    }

    /// Pipeline mode: up to 1,000 inserts in flight, then a sync.
    func insertPipelined(_ items: [Item]) throws {
        let parameters = RawParameters(dates: dates)
        let name = nextName("pipelined")
        try prepare(name, Self.insertSQL, parameters.types)
        try exec("BEGIN")
        guard PQenterPipelineMode(connection) == 1 else { throw RawError.failed("no pipeline mode") }
        var index = 0
        while index < items.count {
            let chunk = items[index..<min(index + 1000, items.count)]
            for item in chunk {
                parameters.set(item)
                _ = PQsendQueryPrepared(connection, name, 10, parameters.pointers, parameters.lengths, parameters.formats, 1)
            }
            PQpipelineSync(connection)
            var pending = chunk.count
            while true {
                guard let result = PQgetResult(connection) else { continue }
                let status = PQresultStatus(result)
                PQclear(result)
                if status == PGRES_PIPELINE_SYNC { break }
                if status == PGRES_COMMAND_OK { pending -= 1; _ = PQgetResult(connection) } else { throw RawError.failed("pipeline: \(String(cString: PQerrorMessage(connection)))") }
            }
            guard pending == 0 else { throw RawError.failed("pipeline lost \(pending) results") }
            index += chunk.count
        }
        PQexitPipelineMode(connection)
        try exec("COMMIT")
    }

    /// COPY in binary format, each field stored in place in one buffer.
    func insertCopy(_ items: [Item]) throws {
        try exec("BEGIN")
        let result = PQexec(connection, "COPY items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) FROM STDIN (FORMAT binary)")
        guard PQresultStatus(result) == PGRES_COPY_IN else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        PQclear(result)
        var buffer = CopyBuffer()
        defer { buffer.deallocate() }
        for b: UInt8 in [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00] { buffer.byte(b) } // PGCOPY\n\377\r\n\0
        buffer.integer(Int32(0))
        buffer.integer(Int32(0))
        let native = dates == .native
        @inline(__always) func text(_ text: String, _ buffer: inout CopyBuffer) {
            if let done: Void = text.utf8.withContiguousStorageIfAvailable({ source in
                buffer.integer(Int32(source.count))
                buffer.bytes(UnsafeRawBufferPointer(source))
            }) { return done }
            buffer.integer(Int32(text.utf8.count))
            for b in text.utf8 { buffer.byte(b) }
        }
        @inline(__always) func date(_ date: Date, _ buffer: inout CopyBuffer) {
            if native {
                buffer.integer(Int32(8)); buffer.integer(HandISO.micros(date) - PGBinary.epoch)
            } else {
                let length = buffer.count
                buffer.integer(Int32(0))
                let count = HandISO.write(date, into: (buffer.base + buffer.count).assumingMemoryBound(to: UInt8.self))
                (buffer.base + length).storeBytes(of: Int32(count).bigEndian, as: Int32.self)
                buffer.count += count
            }
        }
        for item in items {
            buffer.integer(Int16(10))
            buffer.integer(Int32(8)); buffer.integer(item.id)
            text(item.title, &buffer)
            text(item.notes, &buffer)
            buffer.integer(Int32(1)); buffer.byte(item.isCompleted ? 1 : 0)
            buffer.integer(Int32(1)); buffer.byte(item.isFlagged ? 1 : 0)
            if let p = item.priority { buffer.integer(Int32(8)); buffer.integer(Int64(p)) } else { buffer.integer(Int32(-1)) }
            if let due = item.dueDate { date(due, &buffer) } else { buffer.integer(Int32(-1)) }
            buffer.integer(Int32(8)); buffer.integer(item.listID)
            date(item.createdAt, &buffer)
            buffer.integer(Int32(8)); buffer.integer(item.score.bitPattern)
            buffer.sendIfFull(connection)
        }
        buffer.integer(Int16(-1))
        buffer.send(connection)
        try endCopy()
    }

    /// Sends the last of a COPY's data, ends it, checks the verdict and commits.
    private func endCopy() throws {
        PQputCopyEnd(connection, nil)
        while let result = PQgetResult(connection) {
            let ok = PQresultStatus(result) == PGRES_COMMAND_OK
            PQclear(result)
            guard ok else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        }
        try exec("COMMIT")
    }

    /// COPY in text format: each field written into one buffer, text copied
    /// whole between the bytes that need an escape (none, in this workload).
    func insertTextCopy(_ items: [Item]) throws {
        try exec("BEGIN")
        let result = PQexec(connection, "COPY items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) FROM STDIN")
        guard PQresultStatus(result) == PGRES_COPY_IN else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        PQclear(result)
        var buffer = CopyBuffer()
        defer { buffer.deallocate() }
        let native = dates == .native
        @inline(__always) func integer(_ v: Int64, _ buffer: inout CopyBuffer) {
            if v < 0 { buffer.byte(45) }
            var magnitude = v.magnitude, digits = 1
            var rest = magnitude / 10
            while rest != 0 { digits += 1; rest /= 10 }
            let end = buffer.base + buffer.count + digits
            var at = end
            repeat { at -= 1; at.storeBytes(of: UInt8(48 + magnitude % 10), as: UInt8.self); magnitude /= 10 } while magnitude != 0
            buffer.count += digits
        }
        @inline(__always) func text(_ text: String, _ buffer: inout CopyBuffer) {
            if text.utf8.withContiguousStorageIfAvailable({ buffer.escaped($0) }) == nil {
                var copy = text
                copy.withUTF8 { buffer.escaped($0) }
            }
        }
        @inline(__always) func date(_ date: Date, _ buffer: inout CopyBuffer) {
            buffer.count += HandISO.write(date, into: (buffer.base + buffer.count).assumingMemoryBound(to: UInt8.self))
            if native { buffer.byte(43); buffer.byte(48); buffer.byte(48) } // +00
        }
        for item in items {
            integer(item.id, &buffer); buffer.byte(9)
            text(item.title, &buffer); buffer.byte(9)
            text(item.notes, &buffer); buffer.byte(9)
            buffer.byte(item.isCompleted ? 116 : 102); buffer.byte(9)
            buffer.byte(item.isFlagged ? 116 : 102); buffer.byte(9)
            if let p = item.priority { integer(Int64(p), &buffer) } else { buffer.byte(92); buffer.byte(78) }
            buffer.byte(9)
            if let due = item.dueDate { date(due, &buffer) } else { buffer.byte(92); buffer.byte(78) }
            buffer.byte(9)
            integer(item.listID, &buffer); buffer.byte(9)
            date(item.createdAt, &buffer); buffer.byte(9)
            // The shortest text that reads back as the same Double (a small string: no allocation).
            var score = item.score.description
            score.withUTF8 { buffer.bytes(UnsafeRawBufferPointer($0)) }
            buffer.byte(10)
            buffer.sendIfFull(connection)
        }
        buffer.send(connection)
        try endCopy()
    }

    private func item(_ result: OpaquePointer?, _ row: Int32) -> Item {
        // PQgetisnull only for the nullable columns (priority, dueDate), as C asks it.
        func value(_ c: Int32) -> UnsafeMutablePointer<CChar>? { PQgetvalue(result, row, c) }
        func nullable(_ c: Int32) -> UnsafeMutablePointer<CChar>? { PQgetisnull(result, row, c) == 1 ? nil : PQgetvalue(result, row, c) }
        func text(_ c: Int32) -> String {
            let p = PQgetvalue(result, row, c)!
            return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(PQgetlength(result, row, c))), as: UTF8.self)
        }
        func date(_ c: Int32, nullable isNullable: Bool) -> Date? {
            guard let p = isNullable ? nullable(c) : value(c) else { return nil }
            if dates == .native { return PGBinary.date(PGBinary.read(Int64.self, p)) }
            return p.withMemoryRebound(to: UInt8.self, capacity: 27) { HandISO.parse($0, Int(PQgetlength(result, row, c))) }
        }
        return Item(id: PGBinary.read(Int64.self, value(0)!), title: text(1), notes: text(2),
                    isCompleted: value(3)!.pointee != 0, isFlagged: value(4)!.pointee != 0,
                    priority: nullable(5).map { Int(PGBinary.read(Int64.self, $0)) }, dueDate: date(6, nullable: true),
                    listID: PGBinary.read(Int64.self, value(7)!), createdAt: date(8, nullable: false) ?? Date(),
                    score: Double(bitPattern: PGBinary.read(UInt64.self, value(9)!)))
    }

    func fetchAll() throws -> [Item] {
        let result = PQexecParams(connection, Self.selectSQL, 0, nil, nil, nil, nil, 1)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        let rows = PQntuples(result)
        var items: [Item] = []
        items.reserveCapacity(Int(rows))
        for row in 0..<rows { items.append(item(result, row)) }
        return items
    }

    private func lookups(_ ids: [Int64], _ body: (Item) -> Void) throws {
        let name = nextName("byid")
        try prepare(name, Self.selectSQL + " WHERE id = $1", [20])
        var key: Int64 = 0
        var length = Int32(8), format = Int32(1)
        try withUnsafeMutableBytes(of: &key) { bytes in
          try name.withCString { name in
            var pointer: UnsafePointer<CChar>? = UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self)
            for id in ids {
                bytes.storeBytes(of: id.bigEndian, as: Int64.self)
                let result = PQexecPrepared(connection, name, 1, &pointer, &length, &format, 1)
                defer { PQclear(result) }
                guard PQresultStatus(result) == PGRES_TUPLES_OK else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
                if PQntuples(result) == 1 { body(item(result, 0)) }
            }
          }
        }
    }

    func fetchEach(_ ids: [Int64]) throws -> Int64 {
        var sum: Int64 = 0
        try lookups(ids) { sum &+= checksum($0) }
        return sum
    }

    func fetchEachItems(_ ids: [Int64]) throws -> [Item] {
        var items: [Item] = []
        try lookups(ids) { items.append($0) }
        return items
    }

    func stream() throws -> (Int, Int64) {
        guard PQsendQueryParams(connection, Self.selectSQL, 0, nil, nil, nil, nil, 1) == 1 else { throw RawError.failed("send") }
        PQsetSingleRowMode(connection)
        var count = 0, sum: Int64 = 0
        while let result = PQgetResult(connection) {
            if PQresultStatus(result) == PGRES_SINGLE_TUPLE { count += 1; sum &+= checksum(item(result, 0)) }
            PQclear(result)
        }
        return (count, sum)
    }
}

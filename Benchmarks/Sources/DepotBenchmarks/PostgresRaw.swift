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
    func set(_ item: Item) {
        var offset = 0
        func put(_ i: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Int) {
            let start = buffer + offset
            let count = write(start)
            pointers[i] = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
            lengths[i] = Int32(count)
            offset += count
        }
        func int8(_ i: Int, _ v: Int64) { put(i) { UnsafeMutableRawPointer($0).storeBytes(of: v.bigEndian, as: Int64.self); return 8 } }
        func text(_ i: Int, _ s: String) {
            var s = s
            s.withUTF8 { bytes in
                put(i) { target in
                    if let source = bytes.baseAddress { target.update(from: source, count: bytes.count) }
                    return bytes.count
                }
            }
        }
        func date(_ i: Int, _ d: Date) {
            if dates == .native { int8(i, HandISO.micros(d) - PGBinary.epoch) } else { put(i) { HandISO.write(d, into: $0) } }
        }
        func null(_ i: Int) { pointers[i] = nil; lengths[i] = 0 }
        int8(0, item.id)
        text(1, item.title)
        text(2, item.notes)
        put(3) { $0.pointee = item.isCompleted ? 1 : 0; return 1 }
        put(4) { $0.pointee = item.isFlagged ? 1 : 0; return 1 }
        if let p = item.priority { int8(5, Int64(p)) } else { null(5) }
        if let due = item.dueDate { date(6, due) } else { null(6) }
        int8(7, item.listID)
        date(8, item.createdAt)
        int8(9, Int64(bitPattern: item.score.bitPattern))
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
        for item in items {
            parameters.set(item)
            let result = PQexecPrepared(connection, name, 10, parameters.pointers, parameters.lengths, parameters.formats, 1)
            let ok = PQresultStatus(result) == PGRES_COMMAND_OK
            PQclear(result)
            guard ok else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
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

    /// COPY in binary format.
    func insertCopy(_ items: [Item]) throws {
        try exec("BEGIN")
        let result = PQexec(connection, "COPY items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) FROM STDIN (FORMAT binary)")
        guard PQresultStatus(result) == PGRES_COPY_IN else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        PQclear(result)
        var buffer: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00] // PGCOPY\n\377\r\n\0
        PGBinary.append(Int32(0), to: &buffer)
        PGBinary.append(Int32(0), to: &buffer)
        let parameters = RawParameters(dates: dates)
        for item in items {
            parameters.set(item)
            PGBinary.append(Int16(10), to: &buffer)
            for i in 0..<10 {
                if let field = parameters.field(i) {
                    PGBinary.append(Int32(field.count), to: &buffer)
                    buffer.append(contentsOf: field)
                } else {
                    PGBinary.append(Int32(-1), to: &buffer)
                }
            }
            if buffer.count > 1 << 20 {
                buffer.withUnsafeBytes { _ = PQputCopyData(connection, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count)) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        PGBinary.append(Int16(-1), to: &buffer)
        try endCopy(buffer)
    }

    /// Sends the last of a COPY's data, ends it, checks the verdict and commits.
    private func endCopy(_ buffer: [UInt8]) throws {
        buffer.withUnsafeBytes { _ = PQputCopyData(connection, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count)) }
        PQputCopyEnd(connection, nil)
        while let result = PQgetResult(connection) {
            let ok = PQresultStatus(result) == PGRES_COMMAND_OK
            PQclear(result)
            guard ok else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        }
        try exec("COMMIT")
    }

    /// COPY in text format, the format Depot's `insert(contentsOf:)` sends: each
    /// field written and escaped by hand into one reused buffer.
    func insertTextCopy(_ items: [Item]) throws {
        try exec("BEGIN")
        let result = PQexec(connection, "COPY items (id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score) FROM STDIN")
        guard PQresultStatus(result) == PGRES_COPY_IN else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        PQclear(result)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20 + 4096)
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        defer { scratch.deallocate() }
        func integer(_ v: Int64) {
            var v = v, count = 0
            let negative = v < 0
            repeat { scratch[31 - count] = UInt8(48 + abs(v % 10)); v /= 10; count += 1 } while v != 0
            if negative { buffer.append(45) }
            buffer.append(contentsOf: UnsafeBufferPointer(start: scratch + 32 - count, count: count))
        }
        func text(_ s: String) {
            for byte in s.utf8 {
                switch byte {
                case 92: buffer.append(92); buffer.append(92)
                case 9: buffer.append(92); buffer.append(116)
                case 10: buffer.append(92); buffer.append(110)
                case 13: buffer.append(92); buffer.append(114)
                default: buffer.append(byte)
                }
            }
        }
        func date(_ d: Date) {
            let count = HandISO.write(d, into: scratch)
            buffer.append(contentsOf: UnsafeBufferPointer(start: scratch, count: count))
            if dates == .native { buffer.append(43); buffer.append(48); buffer.append(48) } // +00
        }
        for item in items {
            integer(item.id); buffer.append(9)
            text(item.title); buffer.append(9)
            text(item.notes); buffer.append(9)
            buffer.append(item.isCompleted ? 116 : 102); buffer.append(9)
            buffer.append(item.isFlagged ? 116 : 102); buffer.append(9)
            if let p = item.priority { integer(Int64(p)) } else { buffer.append(92); buffer.append(78) }
            buffer.append(9)
            if let due = item.dueDate { date(due) } else { buffer.append(92); buffer.append(78) }
            buffer.append(9)
            integer(item.listID); buffer.append(9)
            date(item.createdAt); buffer.append(9)
            buffer.append(contentsOf: item.score.description.utf8); buffer.append(10)
            if buffer.count > 1 << 20 {
                buffer.withUnsafeBytes { _ = PQputCopyData(connection, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count)) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        try endCopy(buffer)
    }

    private func item(_ result: OpaquePointer?, _ row: Int32) -> Item {
        func value(_ c: Int32) -> UnsafeMutablePointer<CChar>? { PQgetisnull(result, row, c) == 1 ? nil : PQgetvalue(result, row, c) }
        func text(_ c: Int32) -> String {
            let p = PQgetvalue(result, row, c)!
            return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(PQgetlength(result, row, c))), as: UTF8.self)
        }
        func date(_ c: Int32) -> Date? {
            guard let p = value(c) else { return nil }
            if dates == .native { return PGBinary.date(PGBinary.read(Int64.self, p)) }
            return p.withMemoryRebound(to: UInt8.self, capacity: 27) { HandISO.parse($0, Int(PQgetlength(result, row, c))) }
        }
        return Item(id: PGBinary.read(Int64.self, value(0)!), title: text(1), notes: text(2),
                    isCompleted: value(3)!.pointee != 0, isFlagged: value(4)!.pointee != 0,
                    priority: value(5).map { Int(PGBinary.read(Int64.self, $0)) }, dueDate: date(6),
                    listID: PGBinary.read(Int64.self, value(7)!), createdAt: date(8) ?? Date(),
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

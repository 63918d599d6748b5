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

/// Each row's ten parameters, binary where fixed-width, so no contender pays for text conversions it need not.
struct RawParameters {
    var buffers: [[UInt8]?] = Array(repeating: nil, count: 10)
    let types: [Oid]
    let formats: [Int32] = Array(repeating: 1, count: 10)

    init(dates: DateStorage) {
        let date: Oid = dates == .native ? 1184 : 25
        types = [20, 25, 25, 16, 16, 20, date, 20, date, 701]
    }

    mutating func set(_ item: Item, dates: DateStorage) {
        func int8(_ v: Int64) -> [UInt8] { var b: [UInt8] = []; PGBinary.append(v, to: &b); return b }
        func date(_ d: Date) -> [UInt8] { dates == .native ? int8(PGBinary.micros(d)) : Array(HandISO.format(d).utf8) }
        buffers[0] = int8(item.id)
        buffers[1] = Array(item.title.utf8)
        buffers[2] = Array(item.notes.utf8)
        buffers[3] = [item.isCompleted ? 1 : 0]
        buffers[4] = [item.isFlagged ? 1 : 0]
        buffers[5] = item.priority.map { int8(Int64($0)) }
        buffers[6] = item.dueDate.map(date)
        buffers[7] = int8(item.listID)
        buffers[8] = date(item.createdAt)
        buffers[9] = int8(Int64(bitPattern: item.score.bitPattern))
    }

    /// Calls `body` with libpq's pointer arrays.
    func withArrays<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>) -> R) -> R {
        let lengths = buffers.map { Int32($0?.count ?? 0) }
        var pointers: [UnsafePointer<CChar>?] = []
        var storage: [UnsafeMutablePointer<UInt8>] = []
        for buffer in buffers {
            guard let buffer else { pointers.append(nil); continue }
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, buffer.count))
            p.initialize(from: buffer, count: buffer.count)
            storage.append(p)
            pointers.append(UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self))
        }
        defer { storage.forEach { $0.deallocate() } }
        return pointers.withUnsafeBufferPointer { p in lengths.withUnsafeBufferPointer { l in formats.withUnsafeBufferPointer { f in
            body(p.baseAddress!, l.baseAddress!, f.baseAddress!)
        } } }
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
        var parameters = RawParameters(dates: dates)
        let name = nextName("insert")
        try prepare(name, Self.insertSQL, parameters.types)
        try exec("BEGIN")
        for item in items {
            parameters.set(item, dates: dates)
            let result = parameters.withArrays { PQexecPrepared(connection, name, 10, $0, $1, $2, 1) }
            let ok = PQresultStatus(result) == PGRES_COMMAND_OK
            PQclear(result)
            guard ok else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        }
        try exec("COMMIT")
    }

    /// Pipeline mode: up to 1,000 inserts in flight, then a sync.
    func insertPipelined(_ items: [Item]) throws {
        var parameters = RawParameters(dates: dates)
        let name = nextName("pipelined")
        try prepare(name, Self.insertSQL, parameters.types)
        try exec("BEGIN")
        guard PQenterPipelineMode(connection) == 1 else { throw RawError.failed("no pipeline mode") }
        var index = 0
        while index < items.count {
            let chunk = items[index..<min(index + 1000, items.count)]
            for item in chunk {
                parameters.set(item, dates: dates)
                _ = parameters.withArrays { PQsendQueryPrepared(connection, name, 10, $0, $1, $2, 1) }
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
        var parameters = RawParameters(dates: dates)
        for item in items {
            parameters.set(item, dates: dates)
            PGBinary.append(Int16(10), to: &buffer)
            for field in parameters.buffers {
                if let field {
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
        buffer.withUnsafeBytes { _ = PQputCopyData(connection, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count)) }
        PQputCopyEnd(connection, nil)
        while let result = PQgetResult(connection) {
            let ok = PQresultStatus(result) == PGRES_COMMAND_OK
            PQclear(result)
            guard ok else { throw RawError.failed(String(cString: PQerrorMessage(connection))) }
        }
        try exec("COMMIT")
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

    func fetchEach(_ ids: [Int64]) throws -> Int64 {
        let name = nextName("byid")
        try prepare(name, Self.selectSQL + " WHERE id = $1", [20])
        var sum: Int64 = 0
        var buffer: [UInt8] = []
        for id in ids {
            buffer.removeAll(keepingCapacity: true)
            PGBinary.append(id, to: &buffer)
            let result: OpaquePointer? = buffer.withUnsafeBytes { bytes in
                var pointer: UnsafePointer<CChar>? = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
                var length = Int32(8), format = Int32(1)
                return PQexecPrepared(connection, name, 1, &pointer, &length, &format, 1)
            }
            if PQntuples(result) == 1 { sum &+= checksum(item(result, 0)) }
            PQclear(result)
        }
        return sum
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

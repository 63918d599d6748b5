import CMariaDBBench
import Foundation

/// The lean raw loops over MariaDB Connector/C: server-side prepared statements
/// with binary binds and results, every buffer allocated once and bound once,
/// dates as `MYSQL_TIME` in UTC. The baseline Depot's MariaDB plug-in is held to.
final class RawMariaDB {
    static let columns = "\"id\", \"title\", \"notes\", \"isCompleted\", \"isFlagged\", \"priority\", \"dueDate\", \"listID\", \"createdAt\", \"score\""
    static let tableSQL = """
        CREATE TABLE "items" ("id" BIGINT PRIMARY KEY, "title" LONGTEXT NOT NULL, "notes" LONGTEXT NOT NULL, "isCompleted" BOOLEAN NOT NULL,
          "isFlagged" BOOLEAN NOT NULL, "priority" BIGINT, "dueDate" DATETIME(6), "listID" BIGINT NOT NULL, "createdAt" DATETIME(6) NOT NULL,
          "score" DOUBLE NOT NULL)
        """

    private let mysql: UnsafeMutablePointer<MYSQL>

    init(url: String) throws {
        guard let parts = URLComponents(string: url), let host = parts.host, let mysql = mysql_init(nil) else {
            throw RawError.failed("not a mariadb:// URL")
        }
        self.mysql = mysql
        let database = String(parts.path.dropFirst())
        mysql_options(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        guard mysql_real_connect(mysql, host, parts.user, parts.password, database, UInt32(parts.port ?? 3306), nil, 0) != nil else {
            throw RawError.failed("connect: " + String(cString: mysql_error(mysql)))
        }
        try exec("SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin")
        try exec("SET SESSION sql_mode = 'STRICT_ALL_TABLES,ANSI_QUOTES,NO_BACKSLASH_ESCAPES', time_zone = '+00:00'")
    }

    deinit { mysql_close(mysql) }

    func exec(_ sql: String) throws {
        guard mysql_real_query(mysql, sql, UInt(sql.utf8.count)) == 0 else {
            throw RawError.failed(String(cString: mysql_error(mysql)) + " (\(sql))")
        }
        if let result = mysql_store_result(mysql) { mysql_free_result(result) }
    }

    func reset() throws {
        try exec("DROP TABLE IF EXISTS \"items\"")
        try exec(Self.tableSQL)
    }

    private func prepare(_ sql: String) throws -> UnsafeMutablePointer<MYSQL_STMT> {
        guard let statement = mysql_stmt_init(mysql) else { throw RawError.failed("mysql_stmt_init") }
        guard mysql_stmt_prepare(statement, sql, UInt(sql.utf8.count)) == 0 else {
            defer { mysql_stmt_close(statement) }
            throw RawError.failed(String(cString: mysql_stmt_error(statement)) + " (\(sql))")
        }
        return statement
    }

    private func fail(_ statement: UnsafeMutablePointer<MYSQL_STMT>) -> RawError {
        RawError.failed(String(cString: mysql_stmt_error(statement)))
    }

    /// One prepared INSERT per row, in one transaction.
    func insertPerRow(_ items: [Item]) throws {
        try exec("START TRANSACTION")
        let statement = try prepare("INSERT INTO \"items\" (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        defer { mysql_stmt_close(statement) }
        let row = RowBuffers()
        var binds = row.binds(forParameters: true)
        guard mysql_stmt_bind_param(statement, &binds) == 0 else { throw fail(statement) }
        for item in items {
            row.store(item)
            guard mysql_stmt_execute(statement) == 0 else { throw fail(statement) }
        }
        try exec("COMMIT")
    }

    static let selectSQL = "SELECT \(columns) FROM \"items\""

    /// Every row, read whole into the client as Depot's plug-in reads a result.
    func fetchAll() throws -> [Item] {
        let statement = try prepare(Self.selectSQL)
        defer { mysql_stmt_close(statement) }
        guard mysql_stmt_execute(statement) == 0, mysql_stmt_store_result(statement) == 0 else { throw fail(statement) }
        let row = RowBuffers()
        var binds = row.binds(forParameters: false)
        guard mysql_stmt_bind_result(statement, &binds) == 0 else { throw fail(statement) }
        var items: [Item] = []
        items.reserveCapacity(Int(mysql_stmt_num_rows(statement)))
        while mysql_stmt_fetch(statement) == 0 { items.append(row.item()) }
        mysql_stmt_free_result(statement)
        return items
    }

    /// One prepared lookup by primary key per id; the checksum of what it read.
    func lookups(_ ids: [Int64]) throws -> Int64 {
        let statement = try prepare(Self.selectSQL + " WHERE \"id\" = ?")
        defer { mysql_stmt_close(statement) }
        let key = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        defer { key.deallocate() }
        var parameter = MYSQL_BIND()
        parameter.buffer_type = MYSQL_TYPE_LONGLONG
        parameter.buffer = UnsafeMutableRawPointer(key)
        guard mysql_stmt_bind_param(statement, &parameter) == 0 else { throw fail(statement) }
        let row = RowBuffers()
        var binds = row.binds(forParameters: false)
        var sum: Int64 = 0
        var bound = false
        for id in ids {
            key.pointee = id
            guard mysql_stmt_execute(statement) == 0, mysql_stmt_store_result(statement) == 0 else { throw fail(statement) }
            if !bound {
                guard mysql_stmt_bind_result(statement, &binds) == 0 else { throw fail(statement) }
                bound = true
            }
            while mysql_stmt_fetch(statement) == 0 { sum &+= checksum(row.item()) }
            mysql_stmt_free_result(statement)
        }
        return sum
    }

    func lookupItems(_ ids: [Int64]) throws -> [Item] {
        var items: [Item] = []
        for id in ids {
            let statement = try prepare(Self.selectSQL + " WHERE \"id\" = \(id)")
            defer { mysql_stmt_close(statement) }
            guard mysql_stmt_execute(statement) == 0, mysql_stmt_store_result(statement) == 0 else { throw fail(statement) }
            let row = RowBuffers()
            var binds = row.binds(forParameters: false)
            guard mysql_stmt_bind_result(statement, &binds) == 0 else { throw fail(statement) }
            while mysql_stmt_fetch(statement) == 0 { items.append(row.item()) }
        }
        return items
    }
}

/// One row's buffers, allocated once: ten columns, text of up to 1 KiB.
private final class RowBuffers {
    static let textCapacity = 1024
    let id = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    let title = UnsafeMutablePointer<UInt8>.allocate(capacity: textCapacity)
    let notes = UnsafeMutablePointer<UInt8>.allocate(capacity: textCapacity)
    let flags = UnsafeMutablePointer<Int8>.allocate(capacity: 2)
    let priority = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    let times = UnsafeMutablePointer<MYSQL_TIME>.allocate(capacity: 2)
    let listID = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    let score = UnsafeMutablePointer<Double>.allocate(capacity: 1)
    let lengths = UnsafeMutablePointer<UInt>.allocate(capacity: 10)
    let nulls = UnsafeMutablePointer<my_bool>.allocate(capacity: 10)

    init() {
        times.initialize(repeating: MYSQL_TIME(), count: 2)
        lengths.initialize(repeating: 0, count: 10)
        nulls.initialize(repeating: 0, count: 10)
    }

    deinit {
        for pointer in [UnsafeMutableRawPointer(id), UnsafeMutableRawPointer(title), UnsafeMutableRawPointer(notes), UnsafeMutableRawPointer(flags),
                        UnsafeMutableRawPointer(priority), UnsafeMutableRawPointer(times), UnsafeMutableRawPointer(listID),
                        UnsafeMutableRawPointer(score), UnsafeMutableRawPointer(lengths), UnsafeMutableRawPointer(nulls)] {
            pointer.deallocate()
        }
    }

    func binds(forParameters: Bool) -> [MYSQL_BIND] {
        let layout: [(enum_field_types, UnsafeMutableRawPointer, UInt)] = [
            (MYSQL_TYPE_LONGLONG, UnsafeMutableRawPointer(id), 8),
            (MYSQL_TYPE_STRING, UnsafeMutableRawPointer(title), UInt(Self.textCapacity)),
            (MYSQL_TYPE_STRING, UnsafeMutableRawPointer(notes), UInt(Self.textCapacity)),
            (MYSQL_TYPE_TINY, UnsafeMutableRawPointer(flags), 1),
            (MYSQL_TYPE_TINY, UnsafeMutableRawPointer(flags + 1), 1),
            (MYSQL_TYPE_LONGLONG, UnsafeMutableRawPointer(priority), 8),
            (MYSQL_TYPE_DATETIME, UnsafeMutableRawPointer(times), UInt(MemoryLayout<MYSQL_TIME>.stride)),
            (MYSQL_TYPE_LONGLONG, UnsafeMutableRawPointer(listID), 8),
            (MYSQL_TYPE_DATETIME, UnsafeMutableRawPointer(times + 1), UInt(MemoryLayout<MYSQL_TIME>.stride)),
            (MYSQL_TYPE_DOUBLE, UnsafeMutableRawPointer(score), 8),
        ]
        return layout.enumerated().map { index, column in
            var bind = MYSQL_BIND()
            bind.buffer_type = column.0
            bind.buffer = column.1
            bind.buffer_length = column.2
            bind.length = lengths + index
            bind.is_null = nulls + index
            return bind
        }
    }

    func store(_ item: Item) {
        id.pointee = item.id
        lengths[1] = UInt(copy(item.title, into: title))
        lengths[2] = UInt(copy(item.notes, into: notes))
        flags[0] = item.isCompleted ? 1 : 0
        flags[1] = item.isFlagged ? 1 : 0
        nulls[5] = item.priority == nil ? 1 : 0
        priority.pointee = Int64(item.priority ?? 0)
        nulls[6] = item.dueDate == nil ? 1 : 0
        if let due = item.dueDate { times[0] = Self.time(due) }
        listID.pointee = item.listID
        times[1] = Self.time(item.createdAt)
        score.pointee = item.score
    }

    private func copy(_ text: String, into buffer: UnsafeMutablePointer<UInt8>) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            let count = min(bytes.count, Self.textCapacity)
            if let base = bytes.baseAddress { buffer.update(from: base, count: count) }
            return count
        }
    }

    func item() -> Item {
        Item(id: id.pointee,
             title: String(decoding: UnsafeBufferPointer(start: title, count: Int(lengths[1])), as: UTF8.self),
             notes: String(decoding: UnsafeBufferPointer(start: notes, count: Int(lengths[2])), as: UTF8.self),
             isCompleted: flags[0] != 0, isFlagged: flags[1] != 0,
             priority: nulls[5] != 0 ? nil : Int(priority.pointee),
             dueDate: nulls[6] != 0 ? nil : Self.date(times[0]),
             listID: listID.pointee, createdAt: Self.date(times[1]), score: score.pointee)
    }

    static let microsPerDay: Int64 = 86_400_000_000

    /// UTC, to the microsecond (Howard Hinnant's civil-from-days).
    static func time(_ date: Date) -> MYSQL_TIME {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var days = micros / microsPerDay
        var rest = micros % microsPerDay
        if rest < 0 { rest += microsPerDay; days -= 1 }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
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

    static func date(_ time: MYSQL_TIME) -> Date {
        let year = Int64(time.year), month = Int64(time.month)
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + Int64(time.day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let micros = days * microsPerDay + (Int64(time.hour) * 3600 + Int64(time.minute) * 60 + Int64(time.second)) * 1_000_000 + Int64(time.second_part)
        return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }
}

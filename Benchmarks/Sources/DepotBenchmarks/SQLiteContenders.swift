import Depot
import DepotSQLite
import Foundation
import GRDB
import GRDBSQLite

/// One way to use SQLite, driven through the four scenarios.
protocol SQLiteContender: AnyObject {
    var name: String { get }
    var isBaseline: Bool { get }
    /// How close a date read back is to the one written, in seconds.
    func datePrecision(_ dates: DateStorage) -> Double
    /// Opens a fresh database (`path` nil: in memory) with an empty `items` table.
    func open(path: String?, dates: DateStorage) async throws
    func insertAll(_ items: [Item]) async throws
    func fetchAll() async throws -> [Item]
    /// Fetches each id in turn; returns a checksum of what it read.
    func fetchEach(_ ids: [Int64]) async throws -> Int64
    /// Streams every row; returns (count, checksum).
    func stream() async throws -> (Int, Int64)
    func close() async
}

func itemsTableSQL(_ dates: DateStorage) -> String {
    let date = dates == .text ? "TEXT" : "REAL"
    return """
        CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, notes TEXT NOT NULL, isCompleted INTEGER NOT NULL,
          isFlagged INTEGER NOT NULL, priority INTEGER, dueDate \(date), listID INTEGER NOT NULL, createdAt \(date) NOT NULL, score REAL NOT NULL)
        """
}

let itemColumns = "id, title, notes, isCompleted, isFlagged, priority, dueDate, listID, createdAt, score"

// MARK: Raw sqlite3

/// The limit: the C API, one prepared statement reused, structs built by hand.
final class RawSQLite: SQLiteContender {
    let name = "raw sqlite3"
    let isBaseline = true
    func datePrecision(_ dates: DateStorage) -> Double { dates == .text ? 0.000_000_5 : 0.000_01 }
    private var db: OpaquePointer?
    private var dates = DateStorage.text
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func open(path: String?, dates: DateStorage) async throws {
        self.dates = dates
        sqlite3_open_v2(path ?? ":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        exec(itemsTableSQL(dates))
    }

    private func exec(_ sql: String) { sqlite3_exec(db, sql, nil, nil, nil) }

    private func prepare(_ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        return statement
    }

    private func bindDate(_ s: OpaquePointer?, _ i: Int32, _ date: Date?) {
        guard let date else { sqlite3_bind_null(s, i); return }
        if dates == .text {
            var text = HandISO.format(date)
            text.withUTF8 { sqlite3_bind_text(s, i, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
        } else {
            sqlite3_bind_double(s, i, date.timeIntervalSince1970)
        }
    }

    private func readDate(_ s: OpaquePointer?, _ i: Int32) -> Date? {
        switch sqlite3_column_type(s, i) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT: return HandISO.parse(sqlite3_column_text(s, i), Int(sqlite3_column_bytes(s, i)))
        default: return Date(timeIntervalSince1970: sqlite3_column_double(s, i))
        }
    }

    func insertAll(_ items: [Item]) async throws {
        exec("BEGIN IMMEDIATE")
        let s = prepare("INSERT INTO items (\(itemColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        for item in items {
            sqlite3_bind_int64(s, 1, item.id)
            var title = item.title, notes = item.notes
            title.withUTF8 { sqlite3_bind_text(s, 2, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
            notes.withUTF8 { sqlite3_bind_text(s, 3, UnsafeRawPointer($0.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
            sqlite3_bind_int64(s, 4, item.isCompleted ? 1 : 0)
            sqlite3_bind_int64(s, 5, item.isFlagged ? 1 : 0)
            if let p = item.priority { sqlite3_bind_int64(s, 6, Int64(p)) } else { sqlite3_bind_null(s, 6) }
            bindDate(s, 7, item.dueDate)
            sqlite3_bind_int64(s, 8, item.listID)
            bindDate(s, 9, item.createdAt)
            sqlite3_bind_double(s, 10, item.score)
            guard sqlite3_step(s) == SQLITE_DONE else { throw RawError.failed(String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(s)
        }
        sqlite3_finalize(s)
        exec("COMMIT")
    }

    private func text(_ s: OpaquePointer?, _ i: Int32) -> String {
        String(decoding: UnsafeBufferPointer(start: sqlite3_column_text(s, i), count: Int(sqlite3_column_bytes(s, i))), as: UTF8.self)
    }

    private func row(_ s: OpaquePointer?) -> Item {
        Item(id: sqlite3_column_int64(s, 0),
             title: text(s, 1),
             notes: text(s, 2),
             isCompleted: sqlite3_column_int64(s, 3) != 0,
             isFlagged: sqlite3_column_int64(s, 4) != 0,
             priority: sqlite3_column_type(s, 5) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(s, 5)),
             dueDate: readDate(s, 6),
             listID: sqlite3_column_int64(s, 7),
             createdAt: readDate(s, 8) ?? Date(),
             score: sqlite3_column_double(s, 9))
    }

    func fetchAll() async throws -> [Item] {
        exec("BEGIN")
        let s = prepare("SELECT \(itemColumns) FROM items")
        var items: [Item] = []
        while sqlite3_step(s) == SQLITE_ROW { items.append(row(s)) }
        sqlite3_finalize(s)
        exec("COMMIT")
        return items
    }

    func fetchEach(_ ids: [Int64]) async throws -> Int64 {
        exec("BEGIN")
        let s = prepare("SELECT \(itemColumns) FROM items WHERE id = ?1")
        var sum: Int64 = 0
        for id in ids {
            sqlite3_bind_int64(s, 1, id)
            if sqlite3_step(s) == SQLITE_ROW { sum &+= checksum(row(s)) }
            sqlite3_reset(s)
        }
        sqlite3_finalize(s)
        exec("COMMIT")
        return sum
    }

    func stream() async throws -> (Int, Int64) {
        exec("BEGIN")
        let s = prepare("SELECT \(itemColumns) FROM items")
        var count = 0, sum: Int64 = 0
        while sqlite3_step(s) == SQLITE_ROW { count += 1; sum &+= checksum(row(s)) }
        sqlite3_finalize(s)
        exec("COMMIT")
        return (count, sum)
    }

    func close() async { sqlite3_close(db); db = nil }
}

enum RawError: Error { case failed(String) }

// MARK: GRDB

protocol GRDBDates { static var encoding: DatabaseDateEncodingStrategy { get }; static var decoding: DatabaseDateDecodingStrategy { get } }
enum GRDBTextDates: GRDBDates { static var encoding: DatabaseDateEncodingStrategy { .deferredToDate }; static var decoding: DatabaseDateDecodingStrategy { .deferredToDate } }
enum GRDBNumberDates: GRDBDates { static var encoding: DatabaseDateEncodingStrategy { .timeIntervalSince1970 }; static var decoding: DatabaseDateDecodingStrategy { .timeIntervalSince1970 } }

/// GRDB's Codable record: what a GRDB user writes first.
struct GRDBItem<Dates: GRDBDates>: Codable, FetchableRecord, PersistableRecord {
    static var databaseTableName: String { "items" }
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy { Dates.encoding }
    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy { Dates.decoding }
    var id: Int64, title: String, notes: String, isCompleted: Bool, isFlagged: Bool, priority: Int?
    var dueDate: Date?, listID: Int64, createdAt: Date, score: Double

    init(_ i: Item) {
        (id, title, notes, isCompleted, isFlagged, priority, dueDate, listID, createdAt, score) =
            (i.id, i.title, i.notes, i.isCompleted, i.isFlagged, i.priority, i.dueDate, i.listID, i.createdAt, i.score)
    }
    var item: Item { Item(id: id, title: title, notes: notes, isCompleted: isCompleted, isFlagged: isFlagged, priority: priority, dueDate: dueDate, listID: listID, createdAt: createdAt, score: score) }
}

/// GRDB with hand-written row mapping: what a GRDB user writes when speed matters.
struct GRDBRowItem: FetchableRecord {
    var item: Item
    init(row: GRDB.Row) throws {
        item = Item(id: row[0], title: row[1], notes: row[2], isCompleted: row[3], isFlagged: row[4], priority: row[5],
                    dueDate: Self.date(row[6]), listID: row[7], createdAt: Self.date(row[8]) ?? Date(), score: row[9])
    }

    static func date(_ value: DatabaseValue) -> Date? {
        switch value.storage {
        case .null: return nil
        case .double(let seconds): return Date(timeIntervalSince1970: seconds)
        case .int64(let seconds): return Date(timeIntervalSince1970: Double(seconds))
        default: return Date.fromDatabaseValue(value)
        }
    }
}

final class GRDBContender: SQLiteContender {
    let name: String
    let isBaseline = false
    let codable: Bool
    /// GRDB's default text format keeps milliseconds, truncated.
    func datePrecision(_ dates: DateStorage) -> Double { dates == .text ? 0.001_000_1 : 0.000_01 }
    private var queue: (any DatabaseWriter)?
    private var dates = DateStorage.text

    init(codable: Bool) {
        self.codable = codable
        name = codable ? "GRDB 7 Codable record" : "GRDB 7 hand-written rows"
    }

    func open(path: String?, dates: DateStorage) async throws {
        self.dates = dates
        let writer: any DatabaseWriter = try path.map { try DatabasePool(path: $0) } ?? DatabaseQueue()
        try await writer.write { db in try db.execute(sql: itemsTableSQL(dates)) }
        queue = writer
    }

    func insertAll(_ items: [Item]) async throws {
        guard let queue else { return }
        let codable = self.codable, dates = self.dates
        try await queue.write { db in
            if codable {
                if dates == .text {
                    for item in items { try GRDBItem<GRDBTextDates>(item).insert(db) }
                } else {
                    for item in items { try GRDBItem<GRDBNumberDates>(item).insert(db) }
                }
            } else {
                let statement = try db.cachedStatement(sql: "INSERT INTO items (\(itemColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                for i in items {
                    let due: (any DatabaseValueConvertible)? = dates == .text ? i.dueDate : i.dueDate?.timeIntervalSince1970
                    let created: any DatabaseValueConvertible = dates == .text ? i.createdAt : i.createdAt.timeIntervalSince1970
                    try statement.execute(arguments: [i.id, i.title, i.notes, i.isCompleted, i.isFlagged, i.priority, due, i.listID, created, i.score])
                }
            }
        }
    }

    func fetchAll() async throws -> [Item] {
        guard let queue else { return [] }
        let codable = self.codable, dates = self.dates
        return try await queue.read { db in
            if codable {
                return dates == .text ? try GRDBItem<GRDBTextDates>.fetchAll(db).map(\.item) : try GRDBItem<GRDBNumberDates>.fetchAll(db).map(\.item)
            }
            return try GRDBRowItem.fetchAll(db, sql: "SELECT \(itemColumns) FROM items").map(\.item)
        }
    }

    func fetchEach(_ ids: [Int64]) async throws -> Int64 {
        guard let queue else { return 0 }
        let codable = self.codable, dates = self.dates
        return try await queue.read { db in
            var sum: Int64 = 0
            for id in ids {
                if codable {
                    let item = dates == .text ? try GRDBItem<GRDBTextDates>.fetchOne(db, key: id)?.item : try GRDBItem<GRDBNumberDates>.fetchOne(db, key: id)?.item
                    sum &+= item.map(checksum) ?? 0
                } else {
                    sum &+= try GRDBRowItem.fetchOne(db, sql: "SELECT \(itemColumns) FROM items WHERE id = ?", arguments: [id]).map { checksum($0.item) } ?? 0
                }
            }
            return sum
        }
    }

    func stream() async throws -> (Int, Int64) {
        guard let queue else { return (0, 0) }
        let codable = self.codable, dates = self.dates
        return try await queue.read { db in
            var count = 0, sum: Int64 = 0
            if codable {
                if dates == .text {
                    let cursor = try GRDBItem<GRDBTextDates>.fetchCursor(db)
                    while let row = try cursor.next() { count += 1; sum &+= checksum(row.item) }
                } else {
                    let cursor = try GRDBItem<GRDBNumberDates>.fetchCursor(db)
                    while let row = try cursor.next() { count += 1; sum &+= checksum(row.item) }
                }
            } else {
                let cursor = try GRDBRowItem.fetchCursor(db, sql: "SELECT \(itemColumns) FROM items")
                while let row = try cursor.next() { count += 1; sum &+= checksum(row.item) }
            }
            return (count, sum)
        }
    }

    func close() async { queue = nil }
}

// MARK: Depot

extension Item: Depot.Record {
    static let tableName = "items"
}

final class DepotSQLiteContender: SQLiteContender {
    let name = "Depot"
    let isBaseline = false
    func datePrecision(_ dates: DateStorage) -> Double { dates == .text ? 0.000_000_5 : 0.000_01 }
    private var store: Store?

    func open(path: String?, dates: DateStorage) async throws {
        var configuration = SQLiteConfiguration()
        if dates == .native {
            configuration.store.encoder.dateEncodingStrategy = .secondsSince1970
            configuration.store.decoder.dateDecodingStrategy = .secondsSince1970
        }
        let store = try path.map { try Store.sqlite(at: $0, configuration) } ?? Store.sqliteInMemory(configuration)
        try await store.write { db in try db.execute(SQL(unsafeRaw: itemsTableSQL(dates))) }
        self.store = store
    }

    func insertAll(_ items: [Item]) async throws {
        try await store?.write { db in try db.insert(contentsOf: items) }
    }

    func fetchAll() async throws -> [Item] {
        try await store?.read { db in try db.fetchAll(Item.self, "SELECT * FROM items") } ?? []
    }

    func fetchEach(_ ids: [Int64]) async throws -> Int64 {
        try await store?.read { db in
            var sum: Int64 = 0
            for id in ids { sum &+= try db.find(Item.self, id: id).map(checksum) ?? 0 }
            return sum
        } ?? 0
    }

    func stream() async throws -> (Int, Int64) {
        try await store?.read { db in
            var count = 0, sum: Int64 = 0
            try db.forEach(Item.self, "SELECT * FROM items") { count += 1; sum &+= checksum($0) }
            return (count, sum)
        } ?? (0, 0)
    }

    func close() async {
        await store?.close()
        store = nil
    }
}

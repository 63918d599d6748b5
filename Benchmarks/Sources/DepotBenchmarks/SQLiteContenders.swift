import Depot
import DepotSQLite
import Foundation
import GRDB
import GRDBSQLite

/// One way to use SQLite, driven through the scenarios.
protocol SQLiteContender: AnyObject {
    var name: String { get }
    var isBaseline: Bool { get }
    /// How close a date read back is to the one written, in seconds.
    func datePrecision(_ dates: DateStorage) -> Double
    /// Opens a fresh database (`path` nil: in memory) with an empty `items` table.
    func open(path: String?, dates: DateStorage) async throws
    func insertAll(_ items: [Item]) async throws
    func fetchAll() async throws -> [Item]
    /// Fetches each id in turn in one read transaction; returns a checksum of what it read.
    func fetchEach(_ ids: [Int64]) async throws -> Int64
    /// The same lookups, returning the items, for checking in full (untimed).
    func fetchEachItems(_ ids: [Int64]) async throws -> [Item]
    /// One read access (a transaction) per id, each holding one lookup; returns a checksum.
    func accessEach(_ ids: [Int64]) async throws -> Int64
    /// Streams every row; returns (count, checksum).
    func stream() async throws -> (Int, Int64)
    /// The same stream, keeping the rows, for checking in full (untimed).
    func streamItems() async throws -> [Item]
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

/// The limit: the C API, opened as Depot and GRDB open it (no mutex), statements
/// prepared once, text bound in place (`SQLITE_STATIC`: the buffer outlives the
/// step), dates formatted into a reused buffer, structs built by hand.
final class RawSQLite: SQLiteContender {
    let name = "raw sqlite3"
    let isBaseline = true
    func datePrecision(_ dates: DateStorage) -> Double { dates == .text ? 0.000_000_5 : 0.000_01 }
    private var db: OpaquePointer?
    private var dates = DateStorage.text
    private var begin: OpaquePointer?, commit: OpaquePointer?, insert: OpaquePointer?, select: OpaquePointer?, byID: OpaquePointer?
    private let dateBuffers = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)

    deinit { dateBuffers.deallocate() }

    func open(path: String?, dates: DateStorage) async throws {
        self.dates = dates
        guard sqlite3_open_v2(path ?? ":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw RawError.failed("open")
        }
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        try exec(itemsTableSQL(dates))
        begin = try prepare("BEGIN")
        commit = try prepare("COMMIT")
        insert = try prepare("INSERT INTO items (\(itemColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        select = try prepare("SELECT \(itemColumns) FROM items")
        byID = try prepare("SELECT \(itemColumns) FROM items WHERE id = ?1")
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw RawError.failed(String(cString: sqlite3_errmsg(db))) }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK else {
            throw RawError.failed(String(cString: sqlite3_errmsg(db)))
        }
        return statement
    }

    /// Runs a statement that returns no rows.
    private func run(_ s: OpaquePointer?) throws {
        let code = sqlite3_step(s)
        sqlite3_reset(s)
        guard code == SQLITE_DONE else { throw RawError.failed(String(cString: sqlite3_errmsg(db))) }
    }

    /// Binds a date; text goes into one of two reused buffers (`slot` 0 or 1), which outlive the step.
    private func bindDate(_ s: OpaquePointer?, _ i: Int32, _ date: Date?, slot: Int) {
        guard let date else { sqlite3_bind_null(s, i); return }
        if dates == .text {
            let buffer = dateBuffers + slot * 32
            let count = HandISO.write(date, into: buffer)
            sqlite3_bind_text(s, i, UnsafeRawPointer(buffer).assumingMemoryBound(to: CChar.self), Int32(count), nil)
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
        try run(begin)
        let s = insert
        for item in items {
            sqlite3_bind_int64(s, 1, item.id)
            sqlite3_bind_int64(s, 4, item.isCompleted ? 1 : 0)
            sqlite3_bind_int64(s, 5, item.isFlagged ? 1 : 0)
            if let p = item.priority { sqlite3_bind_int64(s, 6, Int64(p)) } else { sqlite3_bind_null(s, 6) }
            bindDate(s, 7, item.dueDate, slot: 0)
            sqlite3_bind_int64(s, 8, item.listID)
            bindDate(s, 9, item.createdAt, slot: 1)
            sqlite3_bind_double(s, 10, item.score)
            var title = item.title, notes = item.notes
            let code = title.withUTF8 { t in
                notes.withUTF8 { n in
                    sqlite3_bind_text(s, 2, UnsafeRawPointer(t.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(t.count), nil)
                    sqlite3_bind_text(s, 3, UnsafeRawPointer(n.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(n.count), nil)
                    return sqlite3_step(s)
                }
            }
            sqlite3_reset(s)
            guard code == SQLITE_DONE else { throw RawError.failed(String(cString: sqlite3_errmsg(db))) }
        }
        try run(commit)
    }

    private func text(_ s: OpaquePointer?, _ i: Int32) -> String {
        String(decoding: UnsafeBufferPointer(start: sqlite3_column_text(s, i), count: Int(sqlite3_column_bytes(s, i))), as: UTF8.self)
    }

    private func row(_ s: OpaquePointer?) throws -> Item {
        guard let createdAt = readDate(s, 8) else { throw RawError.failed("createdAt is NULL") }
        return Item(id: sqlite3_column_int64(s, 0),
                    title: text(s, 1),
                    notes: text(s, 2),
                    isCompleted: sqlite3_column_int64(s, 3) != 0,
                    isFlagged: sqlite3_column_int64(s, 4) != 0,
                    priority: sqlite3_column_type(s, 5) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(s, 5)),
                    dueDate: readDate(s, 6),
                    listID: sqlite3_column_int64(s, 7),
                    createdAt: createdAt,
                    score: sqlite3_column_double(s, 9))
    }

    func fetchAll() async throws -> [Item] {
        try run(begin)
        var items: [Item] = []
        while sqlite3_step(select) == SQLITE_ROW { items.append(try row(select)) }
        sqlite3_reset(select)
        try run(commit)
        return items
    }

    private func lookups(_ ids: [Int64], _ body: (Item) -> Void) throws {
        try run(begin)
        for id in ids {
            sqlite3_bind_int64(byID, 1, id)
            if sqlite3_step(byID) == SQLITE_ROW { body(try row(byID)) }
            sqlite3_reset(byID)
        }
        try run(commit)
    }

    func fetchEach(_ ids: [Int64]) async throws -> Int64 {
        var sum: Int64 = 0
        try lookups(ids) { sum &+= checksum($0) }
        return sum
    }

    func fetchEachItems(_ ids: [Int64]) async throws -> [Item] {
        var items: [Item] = []
        try lookups(ids) { items.append($0) }
        return items
    }

    func accessEach(_ ids: [Int64]) async throws -> Int64 {
        var sum: Int64 = 0
        for id in ids {
            try run(begin)
            sqlite3_bind_int64(byID, 1, id)
            if sqlite3_step(byID) == SQLITE_ROW { sum &+= checksum(try row(byID)) }
            sqlite3_reset(byID)
            try run(commit)
        }
        return sum
    }

    private func rows(_ body: (Item) -> Void) throws {
        try run(begin)
        while sqlite3_step(select) == SQLITE_ROW { body(try row(select)) }
        sqlite3_reset(select)
        try run(commit)
    }

    func stream() async throws -> (Int, Int64) {
        var count = 0, sum: Int64 = 0
        try rows { count += 1; sum &+= checksum($0) }
        return (count, sum)
    }

    func streamItems() async throws -> [Item] {
        var items: [Item] = []
        try rows { items.append($0) }
        return items
    }

    func close() async {
        for statement in [begin, commit, insert, select, byID] { sqlite3_finalize(statement) }
        (begin, commit, insert, select, byID) = (nil, nil, nil, nil, nil)
        sqlite3_close(db)
        db = nil
    }
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

    /// `codable`: a Codable record, looked up as users call it (`fetchOne(db, key:)`);
    /// otherwise hand-written rows read by column index, lookups through a cached statement.
    init(codable: Bool) {
        self.codable = codable
        name = codable ? "GRDB 7 Codable record (lookups: fetchOne(db, key:))" : "GRDB 7 hand-written rows (lookups: cached statement)"
    }

    func open(path: String?, dates: DateStorage) async throws {
        self.dates = dates
        let writer: any DatabaseWriter = try path.map { try DatabasePool(path: $0) } ?? DatabaseQueue()
        try await writer.write { db in try db.execute(sql: itemsTableSQL(dates)) }
        queue = writer
    }

    private func writer() throws -> any DatabaseWriter {
        guard let queue else { throw RawError.failed("GRDB is not open") }
        return queue
    }

    func insertAll(_ items: [Item]) async throws {
        let codable = self.codable, dates = self.dates
        try await writer().write { db in
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
        let codable = self.codable, dates = self.dates
        return try await writer().read { db in
            if codable {
                return dates == .text ? try GRDBItem<GRDBTextDates>.fetchAll(db).map(\.item) : try GRDBItem<GRDBNumberDates>.fetchAll(db).map(\.item)
            }
            return try GRDBRowItem.fetchAll(db, sql: "SELECT \(itemColumns) FROM items").map(\.item)
        }
    }

    private static func lookup(_ db: GRDB.Database, _ id: Int64, codable: Bool, dates: DateStorage) throws -> Item? {
        if codable {
            return dates == .text ? try GRDBItem<GRDBTextDates>.fetchOne(db, key: id)?.item : try GRDBItem<GRDBNumberDates>.fetchOne(db, key: id)?.item
        }
        let statement = try db.cachedStatement(sql: "SELECT \(itemColumns) FROM items WHERE id = ?")
        return try GRDBRowItem.fetchOne(statement, arguments: [id])?.item
    }

    func fetchEach(_ ids: [Int64]) async throws -> Int64 {
        let codable = self.codable, dates = self.dates
        return try await writer().read { db in
            var sum: Int64 = 0
            for id in ids { sum &+= try Self.lookup(db, id, codable: codable, dates: dates).map { checksum($0, withDates: dates != .text) } ?? 0 }
            return sum
        }
    }

    func fetchEachItems(_ ids: [Int64]) async throws -> [Item] {
        let codable = self.codable, dates = self.dates
        return try await writer().read { db in try ids.compactMap { try Self.lookup(db, $0, codable: codable, dates: dates) } }
    }

    func accessEach(_ ids: [Int64]) async throws -> Int64 {
        let codable = self.codable, dates = self.dates
        let reader = try writer()
        var sum: Int64 = 0
        for id in ids {
            sum &+= try await reader.read { db in try Self.lookup(db, id, codable: codable, dates: dates).map { checksum($0, withDates: dates != .text) } ?? 0 }
        }
        return sum
    }

    private static func rows(_ db: GRDB.Database, codable: Bool, dates: DateStorage, _ body: (Item) -> Void) throws {
        if codable {
            if dates == .text {
                let cursor = try GRDBItem<GRDBTextDates>.fetchCursor(db)
                while let row = try cursor.next() { body(row.item) }
            } else {
                let cursor = try GRDBItem<GRDBNumberDates>.fetchCursor(db)
                while let row = try cursor.next() { body(row.item) }
            }
        } else {
            let cursor = try GRDBRowItem.fetchCursor(db, sql: "SELECT \(itemColumns) FROM items")
            while let row = try cursor.next() { body(row.item) }
        }
    }

    func stream() async throws -> (Int, Int64) {
        let codable = self.codable, dates = self.dates
        return try await writer().read { db in
            var count = 0, sum: Int64 = 0
            try Self.rows(db, codable: codable, dates: dates) { count += 1; sum &+= checksum($0, withDates: dates != .text) }
            return (count, sum)
        }
    }

    func streamItems() async throws -> [Item] {
        let codable = self.codable, dates = self.dates
        return try await writer().read { db in
            var items: [Item] = []
            try Self.rows(db, codable: codable, dates: dates) { items.append($0) }
            return items
        }
    }

    func close() async { queue = nil }
}

// MARK: Depot

extension Item: Depot.Record {
    static let tableName = "items"
}

/// Depot as users call it: `insert(contentsOf:)`, `fetchAll`, `find`, `forEach`.
/// `generated`: through `@Columns`' positional mapping; otherwise through Codable.
final class DepotSQLiteContender: SQLiteContender {
    let name: String
    let isBaseline = false
    let generated: Bool
    func datePrecision(_ dates: DateStorage) -> Double { dates == .text ? 0.000_000_5 : 0.000_01 }
    private var store: Store?

    /// Whether reads go through the query builder instead of hand-written SQL and `find`.
    let builder: Bool
    /// Whether lookups are hand-written SQL (`fetchOne` of an interpolated SELECT) instead of `find`.
    let handWritten: Bool
    /// Whether lookups run a declared query (`DeclaredQuery`) instead of `find`.
    let declared: Bool

    init(generated: Bool = true, builder: Bool = false, handWritten: Bool = false, declared: Bool = false) {
        self.generated = generated
        self.builder = builder
        self.handWritten = handWritten
        self.declared = declared
        name = declared ? "Depot, declared query" : builder ? "Depot, query builder" : handWritten ? "Depot, hand-written SQL"
            : generated ? "Depot, @Columns" : "Depot, Codable"
    }

    /// The lookup by key, declared once.
    static let byID = DeclaredQuery { (id: QueryExpression<Int64>) in Item.where { $0.id.eq(id) } }

    private static func lookup(_ db: Depot.Database, _ id: Int64, builder: Bool, handWritten: Bool = false, declared: Bool = false) throws -> Item? {
        if declared { return try db.fetchOne(byID, id) }
        if builder { return try db.fetchOne(Item.where { $0.id.eq(id) }) }
        if handWritten { return try db.fetchOne(Item.self, "SELECT * FROM items WHERE id = \(id)") }
        return try db.find(Item.self, id: id)
    }

    private static func each(_ db: Depot.Database, builder: Bool, _ body: (Item) -> Void) throws {
        if builder {
            try db.forEach(Item.all, body)
        } else {
            try db.forEach(Item.self, "SELECT * FROM items", body)
        }
    }

    func open(path: String?, dates: DateStorage) async throws {
        var configuration = SQLiteConfiguration()
        configuration.store.usesGeneratedMapping = generated
        // DEPOT_BENCH_READS_ON_QUEUE=1: every read on its connection's queue, as before reads
        // ran on the calling thread, to measure the two hops that saves in one build.
        if ProcessInfo.processInfo.environment["DEPOT_BENCH_READS_ON_QUEUE"] == "1" {
            configuration.store.readsRunOnCallingThread = false
        }
        if dates == .native {
            configuration.store.encoder.dateEncodingStrategy = .secondsSince1970
            configuration.store.decoder.dateDecodingStrategy = .secondsSince1970
        }
        let store = try path.map { try Store.sqlite(at: $0, configuration) } ?? Store.sqliteInMemory(configuration)
        try await store.write { db in try db.execute(SQL(unsafeRaw: itemsTableSQL(dates))) }
        self.store = store
    }

    private func opened() throws -> Store {
        guard let store else { throw RawError.failed("Depot is not open") }
        return store
    }

    func insertAll(_ items: [Item]) async throws {
        try await opened().write { db in try db.insert(contentsOf: items) }
    }

    func fetchAll() async throws -> [Item] {
        let builder = self.builder, handWritten = self.handWritten, declared = self.declared
        return try await opened().read { db in builder ? try db.fetchAll(Item.all) : try db.fetchAll(Item.self, "SELECT * FROM items") }
    }

    func fetchEach(_ ids: [Int64]) async throws -> Int64 {
        let builder = self.builder, handWritten = self.handWritten, declared = self.declared
        return try await opened().read { db in
            var sum: Int64 = 0
            for id in ids { sum &+= try Self.lookup(db, id, builder: builder, handWritten: handWritten, declared: declared).map { checksum($0) } ?? 0 }
            return sum
        }
    }

    func fetchEachItems(_ ids: [Int64]) async throws -> [Item] {
        let builder = self.builder, handWritten = self.handWritten, declared = self.declared
        return try await opened().read { db in try ids.compactMap { try Self.lookup(db, $0, builder: builder, handWritten: handWritten, declared: declared) } }
    }

    func accessEach(_ ids: [Int64]) async throws -> Int64 {
        let builder = self.builder, handWritten = self.handWritten, declared = self.declared
        let store = try opened()
        var sum: Int64 = 0
        for id in ids {
            sum &+= try await store.read { db in try Self.lookup(db, id, builder: builder, handWritten: handWritten, declared: declared).map { checksum($0) } ?? 0 }
        }
        return sum
    }

    func stream() async throws -> (Int, Int64) {
        let builder = self.builder, handWritten = self.handWritten, declared = self.declared
        return try await opened().read { db in
            var count = 0, sum: Int64 = 0
            try Self.each(db, builder: builder) { count += 1; sum &+= checksum($0) }
            return (count, sum)
        }
    }

    func streamItems() async throws -> [Item] {
        let builder = self.builder, handWritten = self.handWritten, declared = self.declared
        return try await opened().read { db in
            var items: [Item] = []
            try Self.each(db, builder: builder) { items.append($0) }
            return items
        }
    }

    func close() async {
        await store?.close()
        store = nil
    }
}

import Depot
import Foundation

/// `Database.insert(into:columns:rows:)`: many rows of values through the
/// engine's bulk path (PostgreSQL's COPY) or prepared multi-row INSERTs, with
/// one meaning on every engine.
enum InsertRowsChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("sql: rows of values inserted into a table read back as given, every kind of value, past one statement's bound values", readsBack),
        ConformanceCheck("sql: an insert of rows is all or none, and a row of the wrong width or a column named twice is misuse before anything is written", allOrNone),
    ]

    struct Reading: Codable, Equatable {
        var id: Int64
        var label: String
        var count: Int64
        var ratio: Double
        var bytes: Data
        var flag: Bool
        var at: Date
        var tag: UUID
        var note: String?
        var kind: String
    }

    static func readingsStore(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in
            try db.execute("""
                CREATE TABLE \(ident: "readings") (\(ident: "id") \(type: .integer) PRIMARY KEY, \(ident: "label") \(keyType: .text) NOT NULL UNIQUE,
                    \(ident: "count") \(type: .integer) NOT NULL, \(ident: "ratio") \(type: .double) NOT NULL, \(ident: "bytes") \(type: .blob) NOT NULL,
                    \(ident: "flag") \(type: .bool) NOT NULL, \(ident: "at") \(type: .date) NOT NULL, \(ident: "tag") \(type: .uuid) NOT NULL,
                    \(ident: "note") \(type: .text), \(ident: "kind") \(keyType: .text) NOT NULL DEFAULT 'plain')
                """)
        }
        return store
    }

    static func readings(_ store: Store) async throws -> [Reading] {
        try await store.read { db in try db.fetchAll(Reading.self, "SELECT * FROM \(ident: "readings") ORDER BY \(ident: "id")") }
    }

    static let columns = ["id", "label", "count", "ratio", "bytes", "flag", "at", "tag", "note"]

    /// Row `index` as values, and as the record it reads back as (`kind` left to its default).
    static func reading(_ index: Int) -> (values: [Value], reading: Reading) {
        let counts: [Int64] = [0, -1, .max, .min, 42]
        let ratios: [Double] = [0.1, -0.0, 1e300, -2.5e-300, 3]
        let labels = ["plain", "", "é and e\u{301}", "emoji 🧪", "quote ' and \" and \\"]
        // Microseconds: what every engine keeps of a date.
        let at = Date(timeIntervalSince1970: 1_790_000_000 + Double(index) + 0.123456)
        let tag = UUID(uuid: (0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0, 0, 0, 0, UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)))
        let reading = Reading(id: Int64(index), label: "\(index) \(labels[index % labels.count])", count: counts[index % counts.count],
                              ratio: ratios[index % ratios.count], bytes: Data([0, UInt8(index & 0xFF), 0xFF, 0]), flag: index % 2 == 0,
                              at: at, tag: tag, note: index % 3 == 0 ? nil : "note \(index)", kind: "plain")
        let values: [Value] = [.integer(reading.id), .text(reading.label), .integer(reading.count), .double(reading.ratio), .blob(reading.bytes),
                               .bool(reading.flag), .date(at), .uuid(tag), reading.note.map { .text($0) } ?? .null]
        return (values, reading)
    }

    static func readsBack(_ context: ConformanceContext) async throws {
        let store = try await readingsStore(context)
        // 2,500 rows of nine values: past every engine's bound-value limit for one statement.
        let rows = (0..<2500).map(reading)
        try await store.write { db in try db.insert(into: "readings", columns: columns, rows: rows.map(\.values)) }
        let stored = try await readings(store)
        try expectEqual(stored.count, rows.count, "the count of rows read back")
        for (found, expected) in zip(stored, rows.map(\.reading)) where found != expected {
            throw ConformanceFailure("row \(expected.id) read back as \(found), not \(expected)")
        }
        // No rows: nothing written, no error.
        try await store.write { db in try db.insert(into: "readings", columns: columns, rows: [[Value]]()) }
        try expectEqual(try await readings(store).count, rows.count, "the count after inserting no rows")
    }

    static func allOrNone(_ context: ConformanceContext) async throws {
        let store = try await readingsStore(context)
        try await store.write { db in try db.insert(into: "readings", columns: columns, rows: [reading(0).values]) }
        // The 1,001st row clashes with the stored row's label: none of the 1,001 is kept.
        var clash = reading(2000).values
        clash[1] = .text(reading(0).reading.label)
        let clashing = (1...1000).map { reading($0).values } + [clash]
        try await expectError(.unique, "rows whose last clashes with a stored row on a unique key") {
            try await store.write { db in try db.insert(into: "readings", columns: columns, rows: clashing) }
        }
        try expectEqual(try await readings(store).map(\.id), [0], "the rows after the clash")
        // Caught inside a write: that write's earlier rows stay, the failed insert leaves none.
        try await store.write { db in
            try db.insert(into: "readings", columns: columns, rows: [reading(1).values])
            do {
                try db.insert(into: "readings", columns: columns, rows: clashing)
                throw ConformanceFailure("the clashing rows were inserted")
            } catch let error as DatabaseError where error.kind == .unique {}
        }
        try expectEqual(try await readings(store).map(\.id), [0, 1], "the rows after a clash caught inside the write")

        let short = try await expectError(.misuse, "a row with one value too few") {
            try await store.write { db in
                try db.insert(into: "readings", columns: columns, rows: [reading(5).values, Array(reading(6).values.dropLast())])
            }
        }
        try expectEqual(short.message, "row 1 of an insert into readings has 8 values for 9 columns", "the misuse's message")
        try expect(!short.description.contains("note 5"), "the misuse names no value: \(short)")
        let twice = try await expectError(.misuse, "a column named twice") {
            try await store.write { db in try db.insert(into: "readings", columns: columns + ["label"], rows: [reading(5).values + [.text("x")]]) }
        }
        try expectEqual(twice.message, "an insert of rows into readings names the column label twice", "the misuse's message")
        let none = try await expectError(.misuse, "no column") {
            try await store.write { db in try db.insert(into: "readings", columns: [], rows: [[Value]]()) }
        }
        try expectEqual(none.message, "an insert of rows into readings names no column", "the misuse's message")
        try expectEqual(try await readings(store).map(\.id), [0, 1], "the rows after the refused inserts")
    }
}

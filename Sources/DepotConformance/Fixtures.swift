import Depot
import Foundation

/// A record with one column, for round trips of a single type.
@Columns
struct Box<T: Codable & Sendable & Equatable>: Record, Equatable {
    static var tableName: String { "boxes" }
    var id: Int64
    var value: T
}

/// Creates the `boxes` table with a value column of `type`, runs the writes, and
/// reads every box back in id order.
func roundTrip<T: Codable & Sendable & Equatable>(
    _ store: Store, _ type: ColumnType, nullable: Bool = false, _ values: [T]
) async throws -> [T] {
    let boxes = values.enumerated().map { Box(id: Int64($0.offset + 1), value: $0.element) }
    try await store.write { db in
        try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", type, nullable ? "" : "NOT NULL")])
        for box in boxes { try db.insert(box) }
    }
    return try await store.read { db in
        try db.fetchAll(Box<T>.self, "SELECT * FROM \(ident: "boxes") ORDER BY \(ident: "id")").map(\.value)
    }
}

/// Compares round-tripped values one by one, so a failure names the value that changed.
func expectSame<T: Equatable>(_ actual: [T], _ expected: [T], _ what: String) throws {
    try expectEqual(actual.count, expected.count, "\(what): number of values read back")
    for (index, (a, e)) in zip(actual, expected).enumerated() where a != e {
        throw ConformanceFailure("\(what): value \(index) came back as \(a), stored \(e)")
    }
}

enum Priority: Int, Codable, Sendable, Equatable {
    case none = 0, low = 1, medium = 5, high = 9
}

enum Status: String, Codable, Sendable, Equatable {
    case open, done = "DONE", cancelled = "cancelled 🚫"
}

struct Address: Codable, Sendable, Equatable {
    var street: String
    var tags: [String]
    var scores: [String: Double]
    var floor: Int?
}

/// A reminder-like record with every kind of property, for the record and error checks.
@Columns
struct Item: Record, Equatable {
    static var tableName: String { "items" }
    var id: Int64?
    var title: String
    var notes: String?
    var isDone: Bool
    var priority: Priority
    var dueDate: Date?
    var score: Double

    static func createTable(_ db: Database) throws {
        try DepotConformance.createTable(db, "items", [
            ("id", .autoIncrementingPrimaryKey, ""),
            ("title", .text, "NOT NULL"),
            ("notes", .text, ""),
            ("isDone", .bool, "NOT NULL"),
            ("priority", .integer, "NOT NULL"),
            ("dueDate", .date, ""),
            ("score", .double, "NOT NULL"),
        ])
    }

    static func sample(_ n: Int) -> Item {
        Item(id: nil, title: "item \(n)", notes: n % 3 == 0 ? nil : "notes \(n)", isDone: n % 2 == 0,
             priority: [.none, .low, .medium, .high][n % 4],
             dueDate: n % 2 == 0 ? nil : Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 3600.25),
             score: Double(n) / 4)
    }
}

/// Dates at the edges: before 1970, with microseconds, the first and last storable instants.
let edgeDates: [Date] = [
    Date(timeIntervalSince1970: 0),
    Date(timeIntervalSince1970: -1),
    Date(timeIntervalSince1970: -86_400 * 365.25 * 70 + 0.000_001), // 1900, one microsecond in
    Date(timeIntervalSince1970: 1_763_779_518.123_456),
    Date(timeIntervalSince1970: 1_763_779_518.000_001),
    Date(timeIntervalSince1970: 951_782_400), // 2000-02-29
    Date(timeIntervalSince1970: -62_135_596_800), // 0001-01-01T00:00:00Z
    // 9999-12-31T23:59:59.999Z: near year 10000 a Double holds about 30 µs, so .999999 would round into year 10000.
    Date(timeIntervalSince1970: 253_402_300_799.999),
]

/// A date rounded to the microsecond, as every backend keeps it.
func microsecondRounded(_ date: Date) -> Date {
    ISO8601.microseconds(date).map(ISO8601.date(microseconds:)) ?? date
}

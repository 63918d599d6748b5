import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// A batch insert goes through COPY, binary where Depot writes the column
/// type's binary form and text otherwise. Whatever the path, the stored rows
/// and the errors must be those of one INSERT per row.
@Suite(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresCopyTests {
    struct Cells: Record, Equatable {
        static let tableName = "cells"
        var id: Int
        var i4: Int?
        var i2: Int?
        var n: Decimal?
        var u: UUID?
        var ut: String?
        var j: String?
        var jb: String?
        var ts: Date?
        var tz: Date?
        var vc: String?
        var ch: String?
        var b: Data?
        var f4: Double?
        var f8: Double?
        var d: Date?
        var bo: Bool?
        var t: String?
    }

    static let schema: SQL = """
        CREATE TABLE cells (id bigint PRIMARY KEY, i4 integer, i2 smallint, n numeric, u uuid, ut uuid, j json, jb jsonb,
            ts timestamp, tz timestamptz, vc varchar(8), ch char(3), b bytea, f4 real, f8 double precision, d date,
            bo boolean, t text)
        """

    typealias Generator = SeededGenerator

    static func randomRow(_ id: Int, _ g: inout Generator) -> Cells {
        func maybe<T>(_ make: () -> T) -> T? { Int.random(in: 0..<3, using: &g) == 0 ? nil : make() }
        let pieces = ["a", "é", "\t", "\n", "\r", "\\", "\\N", "💡", " ", "x y", "'", "\""]
        func text(_ count: Int) -> String { (0..<Int.random(in: 0...count, using: &g)).map { _ in pieces.randomElement(using: &g)! }.joined() }
        func date() -> Date {
            // Whole microseconds inside the years 0001...9999.
            let micros = Int64.random(in: -62_135_596_800_000_000...253_402_300_799_999_999, using: &g)
            return Date(timeIntervalSince1970: Double(micros / 1_000_000)).addingTimeInterval(Double(micros % 1_000_000) / 1_000_000)
        }
        return Cells(
            id: id,
            i4: maybe { Int(Int32.random(in: .min ... .max, using: &g)) },
            i2: maybe { Int(Int16.random(in: .min ... .max, using: &g)) },
            // Decimals have no binary form in Depot: about half the rows switch the COPY to text.
            n: Int.random(in: 0..<2, using: &g) == 0 ? nil : Decimal(Int.random(in: -1_000_000...1_000_000, using: &g)) / 100,
            u: maybe { UUID() },
            ut: Int.random(in: 0..<4, using: &g) == 0 ? UUID().uuidString : nil,
            j: maybe { "{\"k\": \(Int.random(in: 0...9, using: &g)), \"s\": \"\(text(3).replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "").replacingOccurrences(of: "\t", with: "").replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: "\r", with: ""))\"}" },
            jb: maybe { "[\(Int.random(in: 0...9, using: &g)), {\"b\": true}]" },
            ts: maybe(date),
            tz: maybe(date),
            vc: maybe { String(String.UnicodeScalarView(text(8).unicodeScalars.prefix(8))) },
            ch: maybe { text(1) },
            b: maybe { Data((0..<Int.random(in: 0...16, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }) },
            f4: Int.random(in: 0..<4, using: &g) == 0 ? Double(Float.random(in: -1000...1000, using: &g)) : nil,
            f8: maybe { Double.random(in: -1e300...1e300, using: &g) },
            d: Int.random(in: 0..<4, using: &g) == 0 ? date() : nil,
            bo: maybe { Bool.random(using: &g) },
            t: maybe { text(12) }
        )
    }

    /// Every row as the server prints it.
    static func stored(_ store: Store) async throws -> [String] {
        try await store.read { db in try db.fetchAll(String.self, "SELECT row_to_json(c)::text FROM cells c ORDER BY id") }
    }

    @Test func aBatchStoresWhatOneInsertPerRowStores() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("PostgresCopyTests seed: \(seed)")
        var g = Generator(seed: seed)
        let fixed = [
            Cells(id: 1, i4: Int(Int32.max), i2: Int(Int16.min), u: UUID(), j: "{\"a\": [1, 2]}", jb: "{\"z\": 1, \"a\": 2}",
                  ts: Date(timeIntervalSince1970: 0.000001), tz: Date(timeIntervalSince1970: -62_135_596_800), vc: "12345678", ch: "ab",
                  b: Data(), f8: .infinity, bo: false, t: ""),
            Cells(id: 2),
        ]
        let rows = fixed + (3..<400).map { Self.randomRow($0, &g) }
        let oneByOne = try await PostgresTestServer.freshStore()
        let batch = try await PostgresTestServer.freshStore()
        defer { Task { await oneByOne.close(); await batch.close() } }
        for store in [oneByOne, batch] { try await store.write { db in try db.execute(Self.schema) } }
        try await oneByOne.write { db in for row in rows { try db.insert(row) } }
        try await batch.write { db in try db.insert(contentsOf: rows) }
        let expected = try await Self.stored(oneByOne)
        let actual = try await Self.stored(batch)
        #expect(actual.count == rows.count)
        for (want, got) in zip(expected, actual) where want != got {
            Issue.record("seed \(seed): one insert stored \(want), the batch \(got)")
            break
        }
        // Read back through Depot too.
        let read = try await batch.read { db in try db.fetchAll(Cells.self, "SELECT * FROM cells ORDER BY id") }
        #expect(read.map(\.id) == rows.map(\.id))
    }

    @Test(arguments: [
        ("a value too large for integer", Cells(id: 3, i4: Int(Int32.max) + 1)),
        ("a value too large for smallint", Cells(id: 3, i2: Int(Int16.max) + 1)),
        ("text too long for varchar(8)", Cells(id: 3, vc: "123456789")),
        ("text that is no JSON", Cells(id: 3, jb: "{")),
        ("text that is no UUID", Cells(id: 3, ut: "not a uuid")),
    ])
    func aBadValueInABatchFailsAsItsOwnInsertWouldAndStoresNothing(_ what: String, _ bad: Cells) async throws {
        let store = try await PostgresTestServer.freshStore()
        defer { Task { await store.close() } }
        try await store.write { db in try db.execute(Self.schema) }
        let single = await #expect(throws: DatabaseError.self, "\(what), inserted alone") {
            try await store.write { db in try db.insert(bad) }
        }
        // Good binary rows first, so the bad one arrives in the middle of a COPY.
        let good = (1...2).map { Cells(id: $0, i4: $0, i2: $0, u: UUID(), vc: "ok", bo: true, t: "fine") }
        let batched = await #expect(throws: DatabaseError.self, "\(what), in a batch") {
            try await store.write { db in try db.insert(contentsOf: good + [bad, Cells(id: 4, i4: 4)]) }
        }
        // The server's wording may differ between COPY and INSERT ("value … is out of
        // range for type integer", "integer out of range"); the kind and code may not.
        #expect(batched?.kind == single?.kind, "\(what): \(batched?.description ?? "") against \(single?.description ?? "")")
        #expect(batched?.engineCode == single?.engineCode)
        for error in [single, batched] {
            let text = error?.description ?? ""
            for value in ["2147483648", "32768", "123456789", "not a uuid"] {
                #expect(!text.contains(value), "\(what): the error shows the value: \(text)")
            }
        }
        #expect(try await Self.stored(store).isEmpty)
    }

    @Test func aBatchInsideARepeatableReadWriteStoresTheSameRows() async throws {
        // Outside READ COMMITTED the column types are not read: every row goes in text.
        let store = try await PostgresTestServer.freshStore()
        defer { Task { await store.close() } }
        try await store.write { db in try db.execute(Self.schema) }
        let rows = [Cells(id: 1, i4: 7, i2: -7, u: UUID(), ts: Date(timeIntervalSince1970: 1.5), b: Data([0, 1]), bo: true, t: "a\tb")]
        try await store.write(isolation: .repeatableRead) { db in try db.insert(contentsOf: rows) }
        let read = try await store.read { db in try db.fetchAll(Cells.self, "SELECT * FROM cells") }
        #expect(read == rows)
    }
}

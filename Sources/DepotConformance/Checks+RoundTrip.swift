import Depot
import Foundation

/// Every supported Swift type comes back as it was stored, at its bounds.
enum RoundTripChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("round trip: signed integers at their bounds") { context in
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .integer, [Int8.min, -1, 0, 1, Int8.max]), [Int8.min, -1, 0, 1, Int8.max], "Int8")
            let store2 = try await context.makeStore()
            try expectSame(try await roundTrip(store2, .integer, [Int16.min, Int16.max]), [Int16.min, Int16.max], "Int16")
            let store3 = try await context.makeStore()
            try expectSame(try await roundTrip(store3, .integer, [Int32.min, Int32.max]), [Int32.min, Int32.max], "Int32")
            let store4 = try await context.makeStore()
            let int64s: [Int64] = [.min, .min + 1, -1, 0, 1, 1 << 53 + 1, .max - 1, .max]
            try expectSame(try await roundTrip(store4, .integer, int64s), int64s, "Int64")
            let store5 = try await context.makeStore()
            try expectSame(try await roundTrip(store5, .integer, [Int.min, Int.max]), [Int.min, Int.max], "Int")
        },
        ConformanceCheck("round trip: unsigned integers up to Int64.max") { context in
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .integer, [UInt8.min, UInt8.max]), [UInt8.min, UInt8.max], "UInt8")
            let store2 = try await context.makeStore()
            try expectSame(try await roundTrip(store2, .integer, [UInt16.max]), [UInt16.max], "UInt16")
            let store3 = try await context.makeStore()
            try expectSame(try await roundTrip(store3, .integer, [UInt32.max]), [UInt32.max], "UInt32")
            let store4 = try await context.makeStore()
            let big: [UInt64] = [0, UInt64(Int64.max)]
            try expectSame(try await roundTrip(store4, .integer, big), big, "UInt64")
            let store5 = try await context.makeStore()
            try expectSame(try await roundTrip(store5, .integer, [UInt(0), UInt(Int.max)]), [UInt(0), UInt(Int.max)], "UInt")
        },
        ConformanceCheck("round trip: UInt64 above Int64.max is refused with an encoding error") { context in
            let store = try await context.makeStore()
            let error = await expectThrowsAny { try await roundTrip(store, .integer, [UInt64(Int64.max) + 1]) }
            let kind = (error as? DatabaseError)?.kind
            try expectEqual(kind, .encoding, "storing UInt64(Int64.max) + 1 (error: \(String(describing: error)))")
            try expectMentions(String(describing: error), ["9223372036854775808", "value"], "the encoding error")
        },
        ConformanceCheck("round trip: doubles at their extremes and infinities") { context in
            let store = try await context.makeStore()
            let infinities = store.dialect.capabilities.doubleCanHoldInfinity
            let values: [Double] = [0, -0.0, 1.5, -1.5, .pi, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                    .leastNormalMagnitude, .leastNonzeroMagnitude, 0.1 + 0.2] + (infinities ? [.infinity, -.infinity] : [])
            let back = try await roundTrip(store, .double, values)
            // Compared with ==, so -0.0 may come back as 0.0 (SQLite stores whole REALs as integers).
            try expectSame(back, values, "Double")
            try expectSame(back.dropFirst(2).map(\.bitPattern), values.dropFirst(2).map(\.bitPattern), "Double bit patterns")
            let floats: [Float] = [0, 1.25, .greatestFiniteMagnitude, .leastNonzeroMagnitude] + (infinities ? [-.infinity] : [])
            let store2 = try await context.makeStore()
            try expectSame(try await roundTrip(store2, .double, floats), floats, "Float")
            if !infinities {
                let store3 = try await context.makeStore()
                try await store3.write { db in try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", .double, "")]) }
                try await expectInfinityRefused("a Double +infinity") { try await store3.write { db in try db.insert(Box(id: 1, value: Double.infinity)) } }
                try await expectInfinityRefused("a Double -infinity") { try await store3.write { db in try db.insert(Box(id: 2, value: -Double.infinity)) } }
                try await expectInfinityRefused("a Float -infinity") { try await store3.write { db in try db.insert(Box(id: 3, value: -Float.infinity)) } }
                let stored = try await store3.read { db in try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "boxes")") }
                try expectEqual(stored, [], "rows stored by the refused infinities")
            }
        },
        ConformanceCheck("round trip: NaN is refused with an encoding error, never stored as NULL") { context in
            let store = try await context.makeStore()
            let error = await expectThrowsAny { try await roundTrip(store, .double, nullable: true, [Double.nan]) }
            try expectEqual((error as? DatabaseError)?.kind, .encoding, "storing NaN (error: \(String(describing: error)))")
            try expectMentions(String(describing: error), ["NaN"], "the NaN error")
            let nanBinding = await expectThrowsAny { try await store.read { db in try db.fetchOne(Int.self, "SELECT 1 WHERE \(Double.nan) IS NULL") } }
            try expectEqual((nanBinding as? DatabaseError)?.kind, .encoding, "binding NaN in SQL")
        },
        ConformanceCheck("round trip: text keeps every byte, empty and non-ASCII") { context in
            let values = ["", " ", "a", "é", "e\u{301}", "Ω≈ç√", "日本語のテキスト", "👩‍👩‍👧‍👦🏳️‍🌈", "line\nbreak\ttab", "quote ' and \" and \\",
                          String(repeating: "long ", count: 20_000)]
            let store = try await context.makeStore()
            let back = try await roundTrip(store, .text, values)
            try expectSame(back.map { Array($0.utf8) }, values.map { Array($0.utf8) }, "String UTF-8 bytes")
        },
        ConformanceCheck("round trip: text holding U+0000 is kept whole or refused, never cut short") { context in
            let store = try await context.makeStore()
            let values = ["before\u{0}after", "\u{0}"]
            if store.dialect.capabilities.textCanHoldNUL {
                let back = try await roundTrip(store, .text, values)
                try expectSame(back.map { Array($0.utf8) }, values.map { Array($0.utf8) }, "text holding NUL")
            } else {
                let error = await expectThrowsAny { try await roundTrip(store, .text, nullable: true, values) }
                try expectEqual((error as? DatabaseError)?.kind, .encoding, "storing text holding NUL where text cannot hold it (error: \(String(describing: error)))")
                // The refused write rolled back its table too: make it again, then try a batch.
                try await store.write { db in
                    try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", .text, "")])
                }
                let batch = await expectThrowsAny {
                    try await store.write { db in try db.insert(contentsOf: [Box(id: 9, value: "a\u{0}b")]) }
                }
                try expectEqual((batch as? DatabaseError)?.kind, .encoding, "a batch holding NUL (error: \(String(describing: batch)))")
            }
        },
        ConformanceCheck("round trip: blobs, empty and 1 MiB") { context in
            let mebibyte = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            let values = [Data(), Data([0]), Data([0, 255, 0, 1]), mebibyte]
            let store = try await context.makeStore()
            let back = try await roundTrip(store, .blob, values)
            try expectSame(back, values, "Data")
            try expect(back[0].isEmpty, "an empty blob must decode as empty Data")
        },
        ConformanceCheck("round trip: dates before 1970, with microseconds, at 0001 and 9999") { context in
            let store = try await context.makeStore()
            let back = try await roundTrip(store, .date, edgeDates)
            try expectSame(back, edgeDates.map(microsecondRounded), "Date")
            let now = Date()
            let store2 = try await context.makeStore()
            try expectSame(try await roundTrip(store2, .date, [now]), [microsecondRounded(now)], "Date() rounded to the microsecond")
        },
        ConformanceCheck("round trip: dates outside the years 0001...9999 are refused") { context in
            // The table is created once, in a write of its own, so the check
            // does not depend on a failed write rolling back its schema changes.
            let store = try await context.makeStore()
            try await store.write { db in try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", .date, "")]) }
            let dates = [Date(timeIntervalSince1970: -62_135_596_801), Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: 1e12), Date.distantPast]
            for (index, date) in dates.enumerated() {
                let error = await expectThrowsAny { try await store.write { db in try db.insert(Box(id: Int64(index + 1), value: date)) } }
                try expectEqual((error as? DatabaseError)?.kind, .encoding, "storing \(date) (error: \(String(describing: error)))")
            }
            let stored = try await store.read { db in try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "boxes")") }
            try expectEqual(stored, [], "rows stored by the refused writes")
        },
        ConformanceCheck("round trip: UUIDs") { context in
            let values = [UUID(), UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .uuid, values), values, "UUID")
        },
        ConformanceCheck("round trip: decimals keep every digit") { context in
            let values = ["0", "-1", "0.1", "123456789012345678901234567890.123456789", "-0.000000000000000000000000000001", "1000000", "3.14159265358979323846264338327950288"]
                .compactMap { Decimal(string: $0, locale: Locale(identifier: "en_US_POSIX")) }
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .decimal, values), values, "Decimal")
        },
        ConformanceCheck("round trip: URLs and RawRepresentable enums store their raw value") { context in
            let urls = [URL(string: "https://example.com/a?b=c#d")!, URL(string: "file:///tmp/x%20y")!]
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .text, urls), urls, "URL")
            let store2 = try await context.makeStore()
            try expectSame(try await roundTrip(store2, .integer, [Priority.none, .high]), [.none, .high], "Int enum")
            let stored = try await store2.read { db in try db.fetchAll(Int.self, "SELECT \(ident: "value") FROM \(ident: "boxes") ORDER BY \(ident: "id")") }
            try expectEqual(stored, [0, 9], "an Int enum's stored raw values")
            let store3 = try await context.makeStore()
            try expectSame(try await roundTrip(store3, .text, [Status.open, .done, .cancelled]), [.open, .done, .cancelled], "String enum")
            let texts = try await store3.read { db in try db.fetchAll(String.self, "SELECT \(ident: "value") FROM \(ident: "boxes") ORDER BY \(ident: "id")") }
            try expectEqual(texts, ["open", "DONE", "cancelled 🚫"], "a String enum's stored raw values (not JSON)")
        },
        ConformanceCheck("round trip: booleans") { context in
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .bool, [true, false]), [true, false], "Bool")
            let filtered = try await store.read { db in
                try db.fetchAll(Int64.self, "SELECT \(ident: "id") FROM \(ident: "boxes") WHERE \(ident: "value") = \(true)")
            }
            try expectEqual(filtered, [1], "filtering a Bool column by a bound true")
        },
        ConformanceCheck("round trip: optionals keep nil as NULL and values as values") { context in
            let store = try await context.makeStore()
            let values: [Int64?] = [nil, 0, nil, 42]
            try expectSame(try await roundTrip(store, .integer, nullable: true, values), values, "Int64?")
            let nulls = try await store.read { db in
                try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "boxes") WHERE \(ident: "value") IS NULL")
            }
            try expectEqual(nulls, 2, "rows whose optional is NULL")
            let store2 = try await context.makeStore()
            let texts: [String?] = [nil, "", "x"]
            try expectSame(try await roundTrip(store2, .text, nullable: true, texts), texts, "String? (\"\" is not NULL)")
        },
        ConformanceCheck("round trip: nested structs, arrays and dictionaries as JSON") { context in
            let addresses = [Address(street: "1 Infinite Loop", tags: ["work", "hq"], scores: ["a": 1.5, "b": -2], floor: nil),
                             Address(street: "", tags: [], scores: [:], floor: 3)]
            let store = try await context.makeStore()
            try expectSame(try await roundTrip(store, .json, addresses), addresses, "nested struct")
            let store2 = try await context.makeStore()
            let arrays = [[1, 2, 3], [], [Int.max]]
            try expectSame(try await roundTrip(store2, .json, arrays), arrays, "array")
            let store3 = try await context.makeStore()
            let dictionaries: [[String: [Date]]] = [["x": [Date(timeIntervalSince1970: 0)]], [:]]
            try expectSame(try await roundTrip(store3, .json, dictionaries), dictionaries, "dictionary of arrays of dates")
        },
    ]
}

/// Runs `body` and returns the error it throws, or nil when it succeeds.
/// Where ``Capabilities/doubleCanHoldInfinity`` is false: storing an infinity
/// fails with an `encoding` error (never a clamped or NULL value).
func expectInfinityRefused(_ what: String, _ body: () async throws -> Void) async throws {
    let error = await expectThrowsAny(body)
    try expectEqual((error as? DatabaseError)?.kind, .encoding,
                    "storing \(what) where doubles hold no infinity (error: \(String(describing: error)))")
}

func expectThrowsAny<T>(_ body: () async throws -> T) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

import Depot
import Foundation
import PropertyBased
import DepotTesting

/// Random cells of every storage class, decoded into every mapped Swift type on
/// both engines: each outcome is a value or a `decoding` error naming the
/// column, never a trap, and the two engines give the same outcome.
enum CellDecodingProperties {
    enum Fruit: String, Codable { case apple, pear }
    struct Nested: Codable, Equatable { var name: String; var score: Double? }
    /// A record whose one property `v` is a nested value, read from JSON.
    struct Holder: Decodable { var v: Nested }

    /// Every target, with how it reads one column named `v`.
    static let targets: [(name: String, read: @Sendable (Database, SQL) throws -> String)] = [
        ("Bool", { db, sql in canonical(try db.fetchOne(Bool.self, sql) as Any) }),
        ("Int8", { db, sql in canonical(try db.fetchOne(Int8.self, sql) as Any) }),
        ("Int16", { db, sql in canonical(try db.fetchOne(Int16.self, sql) as Any) }),
        ("Int32", { db, sql in canonical(try db.fetchOne(Int32.self, sql) as Any) }),
        ("Int64", { db, sql in canonical(try db.fetchOne(Int64.self, sql) as Any) }),
        ("Int", { db, sql in canonical(try db.fetchOne(Int.self, sql) as Any) }),
        ("UInt8", { db, sql in canonical(try db.fetchOne(UInt8.self, sql) as Any) }),
        ("UInt16", { db, sql in canonical(try db.fetchOne(UInt16.self, sql) as Any) }),
        ("UInt32", { db, sql in canonical(try db.fetchOne(UInt32.self, sql) as Any) }),
        ("UInt64", { db, sql in canonical(try db.fetchOne(UInt64.self, sql) as Any) }),
        ("UInt", { db, sql in canonical(try db.fetchOne(UInt.self, sql) as Any) }),
        ("Double", { db, sql in canonical(try db.fetchOne(Double.self, sql) as Any) }),
        ("Float", { db, sql in canonical(try db.fetchOne(Float.self, sql) as Any) }),
        ("String", { db, sql in canonical(try db.fetchOne(String.self, sql) as Any) }),
        ("Data", { db, sql in canonical(try db.fetchOne(Data.self, sql) as Any) }),
        ("Date", { db, sql in canonical(try db.fetchOne(Date.self, sql) as Any) }),
        ("UUID", { db, sql in canonical(try db.fetchOne(UUID.self, sql) as Any) }),
        ("Decimal", { db, sql in canonical(try db.fetchOne(Decimal.self, sql) as Any) }),
        ("URL", { db, sql in canonical(try db.fetchOne(URL.self, sql) as Any) }),
        ("Fruit", { db, sql in canonical(try db.fetchOne(Fruit.self, sql) as Any) }),
        ("[String]", { db, sql in canonical(try db.fetchOne([String].self, sql) as Any) }),
        ("Set<String>", { db, sql in canonical(try db.fetchOne(Set<String>.self, sql) as Any) }),
        ("[String: Double]", { db, sql in canonical(try db.fetchOne([String: Double].self, sql) as Any) }),
        ("Nested", { db, sql in canonical(try db.fetchOne(Holder.self, sql)?.v as Any) }),
        ("Int?", { db, sql in canonical(try db.fetchOne(Int?.self, sql) as Any) }),
        ("String?", { db, sql in canonical(try db.fetchOne(String?.self, sql) as Any) }),
        ("Date?", { db, sql in canonical(try db.fetchOne(Date?.self, sql) as Any) }),
    ]

    static let integerEdges: [Int64] = [0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 300, 32_767, 32_768, -32_769,
                                        2_147_483_647, 2_147_483_648, 4_294_967_295, 4_294_967_296, 9_007_199_254_740_993,
                                        .max, .min, .max - 1]
    static let doubleEdges: [Double] = [0, -0.0, 0.5, 1, -1, 2.5, 3, 255, 256, 1e300, -1e-300, .infinity, -.infinity,
                                        9_223_372_036_854_775_808, 9_007_199_254_740_992, 9_007_199_254_740_994, .leastNonzeroMagnitude,
                                        Double(Float.greatestFiniteMagnitude), 0.1, 1.0e20, 1e-7]
    static let textPool: [String] = [
        "", "abc", "42", "-7", "1.5", "1e3", "1e400", "00012", "0x10", " 42", "3.0", "-0",
        "12345678901234567890123456789012345678", "12345678901234567890123456789012345678901",
        "2026-11-22", "2026-11-22 02:45:18.123456", "2026-11-22T02:45:18Z", "2026-11-22T02:45:18.5+01:00",
        "9999-12-31 23:59:59.999999", "10000-01-01", "2026-02-30", "0000-01-01", "2026-11-22 02:45:18.1234567",
        "0f8fad5b-d9cb-469f-a165-70867728950e", "0F8FAD5B-D9CB-469F-A165-70867728950E", "0f8fad5b-d9cb-469f-a165",
        #"["a","b"]"#, #"["a",2]"#, #"{"x":1.5}"#, #"{"name":"n","score":null}"#, #"{"name":"n"}"#, "{", "null", "true", "[]",
        "https://example.com/a b", "https://example.com/?q=1#top", "hello world", "mailto:a@b.c",
        "apple", "pear", "delta", "true", "false", "1", "0", "t",
    ]

    static func randomValue(_ rng: inout Xoshiro) -> Value {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return .null
        case 1: return .integer(integerEdges.randomElement(using: &rng) ?? 0)
        case 2: return .integer(Gen.int64().run(using: &rng))
        case 3: return .double(doubleEdges.randomElement(using: &rng) ?? 0)
        case 4: return .double(Gen.double(in: -1e12...1e12).run(using: &rng))
        case 5: return .bool(Bool.random(using: &rng))
        case 6, 7: return .text(textPool.randomElement(using: &rng) ?? "")
        case 8: return .text(randomText(&rng))
        case 9:
            let count = [0, 1, 16, Int.random(in: 2...40, using: &rng)].randomElement(using: &rng) ?? 0
            return .blob(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case 10:
            let micros = Int64.random(in: -62_135_596_800_000_000...253_402_300_799_000_000, using: &rng)
            return [.date(Date(timeIntervalSince1970: Double(micros / 1_000_000))),
                    .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(micros % 100_000_000_000) / 1_000_000)),
                    .uuid(UUID())].randomElement(using: &rng) ?? .null
        default:
            let texts = ["0.1", "-12.50", "12345678901234567890.123", "1e-10", "42", "0", "-7.000"]
            return Value.decimal(text: texts.randomElement(using: &rng) ?? "0") ?? .null
        }
    }

    /// What a value read from `cell` as `target` must be, where the mapping says
    /// exactly (the text read as text, a number as the same number...); nil where this oracle has no rule.
    static func oracle(_ cell: Value, _ target: String, _ read: String) -> String? {
        func is_(_ expected: String) -> String? { read == expected ? nil : "expected \(expected)" }
        switch (cell, target) {
        case (.text(let s), "String"), (.text(let s), "String?"): return is_(canonical(Optional(s)))
        case (.text(let s), "URL"): return is_("url \(s)")
        case (.text(let s), "Decimal"):
            guard let literal = canonicalDecimalLiteral(s), let decimal = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")),
                  canonicalDecimalLiteral(decimal.description) == literal else { return "\(s) has no exact Decimal, yet \(read) was read" }
            return is_(canonical(Optional(decimal)))
        case (.decimal(let d, let scale), "String"): return is_(canonical(Optional(Value.decimalText(d, scale: scale)))) // 10.50 stays 10.50
        case (.decimal(let d, _), "Decimal"): return is_(canonical(Optional(d)))
        case (.integer(let i), "Int64"): return is_(canonical(Optional(i)))
        case (.integer(let i), "Decimal"): return is_(canonical(Optional(Decimal(i))))
        case (.double(let d), "Double"): return is_(canonical(Optional(d)))
        case (.date(let d), "Date"), (.date(let d), "Date?"): // kept to the microsecond
            return is_(canonical(ISO8601.microseconds(d).map(ISO8601.date(microseconds:)) as Any))
        case (.uuid(let u), "UUID"): return is_(canonical(Optional(u)))
        case (.uuid(let u), "String"): return is_(canonical(Optional(u.uuidString.lowercased())))
        case (.blob(let b), "Data"): return is_(canonical(Optional(b)))
        case (.bool(let b), "Bool"): return is_(canonical(Optional(b)))
        default: return nil
        }
    }

    /// Whether an engine with these capabilities stores the cell at all.
    static func isStorable(_ cell: Value, _ capabilities: Capabilities) -> Bool {
        switch cell {
        case .double(let d) where d.isInfinite: capabilities.doubleCanHoldInfinity
        case .text(let t) where t.unicodeScalars.contains("\0"): capabilities.textCanHoldNUL
        default: true
        }
    }

    static func everyCellDecodesIntoEveryType(_ run: DifferentialRun) async throws {
        var rng = propertySeed("cells into types")
        let engines = try await run.makeEngines()
        // Every edge once, then random cells.
        let edges: [Value] = Self.integerEdges.map(Value.integer) + Self.doubleEdges.map(Value.double) + Self.textPool.map(Value.text)
        let cells = edges + (0..<120).map { _ in Self.randomValue(&rng) }
        var outcomes: [String: [Outcome]] = [:]
        for (name, store) in engines.both {
            outcomes[name] = try await store.read { db in
                var results: [Outcome] = []
                for cell in cells {
                    let sql: SQL = "SELECT \(cell) AS \(ident: "v")"
                    for target in Self.targets {
                        results.append(Outcome.of { try target.read(db, sql) })
                    }
                }
                return results
            }
        }
        let (firstName, secondName) = (engines.both[0].name, engines.both[1].name)
        let (x, y) = (engines.both[0].store.dialect.capabilities, engines.both[1].store.dialect.capabilities)
        await engines.close()
        let first = outcomes[firstName] ?? [], second = outcomes[secondName] ?? []
        var disagreements = 0, untyped = 0, unnamed = 0, values = 0, wrong = 0
        for (index, (a, b)) in zip(first, second).enumerated() {
            let cell = cells[index / Self.targets.count], target = Self.targets[index % Self.targets.count].name
            // A documented capability may refuse the cell on one engine (an infinity, U+0000).
            if a != b, Self.isStorable(cell, x) == Self.isStorable(cell, y) {
                disagreements += 1
                run.record("\(cell) as \(target): \(firstName) gives \(a), \(secondName) gives \(b)")
            }
            for outcome in [a, b] {
                switch outcome {
                case .value(let read):
                    values += 1
                    if let violation = Self.oracle(cell, target, read) {
                        wrong += 1
                        run.record("\(cell) as \(target): a silent wrong value: read \(read), \(violation)")
                    }
                case .untyped:
                    untyped += 1
                    run.record("\(cell) as \(target): \(outcome)")
                case .error(let kind, let column, let columnIndex):
                    if case .encoding = kind, column == nil { continue } // a value no engine stores (out-of-range date)
                    if kind != .decoding || column != "v" || columnIndex != 0 {
                        unnamed += 1
                        run.record("\(cell) as \(target): \(outcome), expected a decoding error naming column v (index 0)")
                    }
                }
            }
        }
        print("cells into types: \(first.count) cases per engine, \(values) values read, silent wrong values \(wrong), disagreements \(disagreements), untyped errors \(untyped), errors without their cell \(unnamed)")
        run.expect(first.count == cells.count * Self.targets.count && second.count == first.count, "\(first.count) and \(second.count) outcomes for \(cells.count * Self.targets.count) cases")
    }
}

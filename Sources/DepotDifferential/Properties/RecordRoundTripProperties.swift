import Depot
import Foundation
import PropertyBased
import DepotTesting

/// Random records holding every mapped Swift type, written and read back through
/// both engines, one by one and in batches: each comes back exactly (as the
/// oracle here says it must) or fails with the typed error the oracle names.
enum RecordRoundTripProperties {
    enum Fruit: String, Codable, Sendable { case apple, pear, none = "" }
    struct Nested: Codable, Equatable, Sendable { var name: String; var scores: [Double]; var when: Date? }

    struct Sample: Record, Equatable {
        static let tableName = "samples"
        var id: Int64?
        var flag: Bool
        var tiny: Int8
        var small: Int16
        var medium: Int32
        var big: Int64
        var unsigned: UInt32
        var huge: UInt64
        var real: Double
        var single: Float
        var text: String
        var bytes: Data
        var date: Date
        var uuid: UUID
        var decimal: Decimal
        var url: URL
        var fruit: Fruit
        var tags: [String]
        var nested: Nested
        var note: String?
        var due: Date?
        var count: Int?

        static let columns: [(String, ColumnType, String)] = [
            ("id", .autoIncrementingPrimaryKey, ""), ("flag", .bool, "NOT NULL"), ("tiny", .integer, "NOT NULL"),
            ("small", .integer, "NOT NULL"), ("medium", .integer, "NOT NULL"), ("big", .integer, "NOT NULL"),
            ("unsigned", .integer, "NOT NULL"), ("huge", .integer, "NOT NULL"), ("real", .double, "NOT NULL"),
            ("single", .double, "NOT NULL"), ("text", .text, "NOT NULL"), ("bytes", .blob, "NOT NULL"),
            ("date", .date, "NOT NULL"), ("uuid", .uuid, "NOT NULL"), ("decimal", .decimal, "NOT NULL"),
            ("url", .text, "NOT NULL"), ("fruit", .text, "NOT NULL"), ("tags", .json, "NOT NULL"),
            ("nested", .json, "NOT NULL"), ("note", .text, ""), ("due", .date, ""), ("count", .integer, ""),
        ]

        /// What a store must give back: dates at the microsecond, nothing else changed.
        var asStored: Sample {
            var copy = self
            copy.date = microsecondRounded(date)
            copy.due = due.map(microsecondRounded)
            return copy
        }

        /// The error kind the oracle expects when this record is written, nil when it must be stored.
        func expectedRefusal(_ capabilities: Capabilities) -> DatabaseError.Kind? {
            if huge > UInt64(Int64.max) || real.isNaN { return .encoding }
            if !capabilities.doubleCanHoldInfinity, real.isInfinite { return .encoding }
            if ISO8601.microseconds(date) == nil || due.map({ ISO8601.microseconds($0) == nil }) == true { return .encoding }
            if !capabilities.textCanHoldNUL, text.unicodeScalars.contains("\0") || note?.unicodeScalars.contains("\0") == true { return .encoding }
            return nil
        }
    }

    /// The date a store gives back: the nearest Date to the nearest microsecond.
    static func microsecondRounded(_ date: Date) -> Date {
        ISO8601.microseconds(date).map(ISO8601.date(microseconds:)) ?? date
    }

    static func randomDate(_ rng: inout Xoshiro, refusable: Bool) -> Date {
        switch Int.random(in: 0..<40, using: &rng) {
        case 0 where refusable: return Date(timeIntervalSince1970: [-62_135_596_801, 253_402_300_800, 1e15].randomElement(using: &rng) ?? 0)
        case 0...3: return Date(timeIntervalSince1970: [-62_135_596_800, 253_402_300_799, 0, -1, 951_782_400].randomElement(using: &rng) ?? 0)
        case 4...9: return Date(timeIntervalSince1970: Double(Int64.random(in: -62_135_596_800...253_402_300_799, using: &rng)))
        default: return Gen.dateTime(inYear: 1800...2200).run(using: &rng)
        }
    }

    /// A random record; with `refusable`, now and then one the oracle expects refused.
    static func randomSample(_ rng: inout Xoshiro, refusable: Bool = true) -> Sample {
        let decimals = ["0", "0.1", "-12.5", "12345678901234567890.12345678901234567", "1e-20", "99999999999999999999999999999999999999"]
        let urls = ["https://example.com/a%20b?q=1#top", "file:///tmp/x", "mailto:a@b.c", "https://例え.jp/", "relative/path"]
        let rare = refusable ? Int.random(in: 0..<40, using: &rng) : 40
        return Sample(
            id: nil,
            flag: Bool.random(using: &rng),
            tiny: Gen.int8().run(using: &rng),
            small: Gen.int16().run(using: &rng),
            medium: Gen.int32().run(using: &rng),
            big: [Int64.min, Int64.max, 0, Gen.int64().run(using: &rng)].randomElement(using: &rng) ?? 0,
            unsigned: Gen.uint32().run(using: &rng),
            huge: rare == 0 ? UInt64(Int64.max) + UInt64.random(in: 1...1000, using: &rng) : UInt64.random(in: 0...UInt64(Int64.max), using: &rng),
            real: rare == 1 ? .nan : [0, -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                                      Gen.double(in: -1e15...1e15).run(using: &rng)].randomElement(using: &rng) ?? 0,
            single: Gen.float(in: -1e6...1e6).run(using: &rng),
            text: rare == 2 ? "a\u{0}b" : randomText(&rng, maxLength: 30),
            bytes: Data((0..<Int.random(in: 0...24, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }),
            date: randomDate(&rng, refusable: refusable),
            uuid: UUID(),
            decimal: Decimal(string: decimals.randomElement(using: &rng) ?? "0", locale: Locale(identifier: "en_US_POSIX")) ?? 0,
            url: URL(string: urls.randomElement(using: &rng) ?? "https://example.com")!,
            fruit: [.apple, .pear, .none].randomElement(using: &rng) ?? .apple,
            tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in randomText(&rng, maxLength: 6) },
            nested: Nested(name: randomText(&rng, maxLength: 8), scores: [Gen.double(in: -1e9...1e9).run(using: &rng)],
                           when: Bool.random(using: &rng) ? Gen.dateTime(inYear: 1990...2100).run(using: &rng) : nil),
            note: Bool.random(using: &rng) ? randomText(&rng) : nil,
            due: Bool.random(using: &rng) ? randomDate(&rng, refusable: refusable) : nil,
            count: Bool.random(using: &rng) ? Gen.int().run(using: &rng) : nil)
    }

    static func everyRecordRoundTrips(_ run: DifferentialRun) async throws {
        var rng = propertySeed("records")
        let samples = (0..<600).map { _ in Self.randomSample(&rng) }
        // Two batches in three hold only storable records; the third may hold one the oracle refuses.
        let batches = (0..<30).map { n in (0..<20).map { _ in Self.randomSample(&rng, refusable: n % 3 == 0) } }
        let engines = try await run.makeEngines()
        var outcomes: [String: [Outcome]] = [:]
        var wrong = 0, refused = 0
        for (name, store) in engines.both {
            let capabilities = store.dialect.capabilities
            try await store.write { db in try createSamples(db) }
            var results: [Outcome] = []
            // One by one: insert, then find and fetchAll give the oracle's record.
            for sample in samples {
                let expected = sample.expectedRefusal(capabilities)
                let outcome = await outcomeOf(store) { db in
                    let stored = try db.insert(sample)
                    var want = sample.asStored
                    want.id = stored.id
                    let found = try db.find(Sample.self, id: stored.id)
                    let fetched = try db.fetchOne(Sample.self, "SELECT * FROM \(ident: "samples") WHERE \(ident: "id") = \(stored.id)")
                    if stored != want || found != want || fetched != want {
                        return "changed: stored \(want)\ninsert gave \(stored)\nfind gave \(String(describing: found))"
                    }
                    return "stored"
                }
                check(run, name, outcome, expected, &refused, &wrong)
                results.append(outcome)
            }
            // In batches: all or none, and the same rows as one by one.
            for batch in batches {
                let expected = batch.compactMap { $0.expectedRefusal(capabilities) }.first
                let before = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "samples")") ?? -1 }
                let outcome = await outcomeOf(store) { db in
                    try db.insert(contentsOf: batch)
                    let back = try db.fetchAll(Sample.self, "SELECT * FROM \(ident: "samples") ORDER BY \(ident: "id") DESC LIMIT \(batch.count)")
                    let want = batch.map(\.asStored)
                    let got = back.reversed().map { record -> Sample in var copy = record; copy.id = nil; return copy }
                    if got != want { return "changed: a batch" }
                    return "stored"
                }
                check(run, name, outcome, expected, &refused, &wrong)
                let after = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "samples")") ?? -1 }
                run.expect(after == before + (outcome.isError ? 0 : batch.count), "\(name): a refused batch left no row")
                results.append(outcome)
            }
            outcomes[name] = results
        }
        let (first, second) = (engines.both[0], engines.both[1])
        let (x, y) = (first.store.dialect.capabilities, second.store.dialect.capabilities)
        await engines.close()
        // The engines agree, except where a documented capability differs
        // (text holding U+0000, a double holding an infinity).
        var disagreements = 0
        let cases = samples + batches.compactMap(\.first)
        for (index, (a, b)) in zip(outcomes[first.name] ?? [], outcomes[second.name] ?? []).enumerated() where a != b {
            let byCapability = index < samples.count
                ? samples[index].expectedRefusal(x) != samples[index].expectedRefusal(y)
                : batches[index - samples.count].contains { $0.expectedRefusal(x) != $0.expectedRefusal(y) }
            if byCapability { continue }
            disagreements += 1
            run.record("case \(index): \(first.name) \(a), \(second.name) \(b): \(cases[index])")
        }
        print("records: \(samples.count) records and \(batches.count) batches of 20 per engine, \(refused) refusals as the oracle says, silent wrong values \(wrong), disagreements \(disagreements)")
    }

    private static func createSamples(_ db: Database) throws {
        let definitions = Sample.columns.map { column, type, constraints -> SQL in
            "\(ident: column) \(type: type)\(unsafeRaw: constraints.isEmpty ? "" : " " + constraints)"
        }
        try db.execute("CREATE TABLE \(ident: "samples") (\(SQL.join(definitions, separator: ", ")))")
    }

    private static func outcomeOf(_ store: Store, _ body: @escaping @Sendable (Database) throws -> String) async -> Outcome {
        do {
            return .value(try await store.write(body))
        } catch let error as DatabaseError {
            return .error(error.kind, column: nil, index: nil)
        } catch {
            return .untyped("\(error)")
        }
    }

    private static func check(_ run: DifferentialRun, _ engine: String, _ outcome: Outcome, _ expected: DatabaseError.Kind?, _ refused: inout Int, _ wrong: inout Int) {
        if case .value(let text) = outcome, text != "stored" {
            wrong += 1
            run.record("\(engine): a silent wrong value: \(text)")
            return
        }
        switch (outcome, expected) {
        case (.value, nil): break
        case (.error(let kind, _, _), let want?) where kind == want: refused += 1
        default: run.record("\(engine): expected \(expected.map { "a \($0) error" } ?? "the record stored"), got \(outcome)")
        }
    }
}

import Depot
import Foundation

/// A type's generated `@Columns` mapping means exactly what its Codable
/// conformance means: the same stored row, the same decoded value, the same error.
enum MappingChecks {
    /// Every kind of property, read and written by position.
    @Columns
    struct Mapped: Record, Equatable {
        static var tableName: String { "mapped" }
        var id: Int64
        var title: String
        var notes: String?
        var count: Int
        var small: Int8
        var unsigned: UInt64?
        var ratio: Double
        var single: Float
        var flag: Bool
        var when: Date
        var maybeWhen: Date?
        var uuid: UUID
        var data: Data?
        var amount: Decimal
        var priority: Priority
        var status: Status?
        var address: Address?
        var tags: [String]
    }

    /// The same properties, read and written through Codable's containers.
    struct Coded: Record, Equatable {
        static var tableName: String { "coded" }
        var id: Int64
        var title: String
        var notes: String?
        var count: Int
        var small: Int8
        var unsigned: UInt64?
        var ratio: Double
        var single: Float
        var flag: Bool
        var when: Date
        var maybeWhen: Date?
        var uuid: UUID
        var data: Data?
        var amount: Decimal
        var priority: Priority
        var status: Status?
        var address: Address?
        var tags: [String]

        init(_ m: Mapped) {
            (id, title, notes, count, small, unsigned, ratio, single, flag, when, maybeWhen) =
                (m.id, m.title, m.notes, m.count, m.small, m.unsigned, m.ratio, m.single, m.flag, m.when, m.maybeWhen)
            (uuid, data, amount, priority, status, address, tags) = (m.uuid, m.data, m.amount, m.priority, m.status, m.address, m.tags)
        }
    }

    /// A mapped type whose `CodingKeys` rename one property and leave one out.
    @Columns
    struct Renamed: Record, Equatable {
        static var tableName: String { "renamed" }
        var id: Int64
        var displayName: String
        var cached: Int = 0
        enum CodingKeys: String, CodingKey { case id, displayName = "name" }
    }

    static let columns: [(String, ColumnType, String)] = [
        ("id", .integer, "PRIMARY KEY"), ("title", .text, "NOT NULL"), ("notes", .text, ""), ("count", .integer, "NOT NULL"),
        ("small", .integer, "NOT NULL"), ("unsigned", .integer, ""), ("ratio", .double, "NOT NULL"), ("single", .double, "NOT NULL"),
        ("flag", .bool, "NOT NULL"), ("when", .date, "NOT NULL"), ("maybeWhen", .date, ""), ("uuid", .uuid, "NOT NULL"),
        ("data", .blob, ""), ("amount", .decimal, "NOT NULL"), ("priority", .integer, "NOT NULL"), ("status", .text, ""),
        ("address", .json, ""), ("tags", .json, "NOT NULL"),
    ]

    /// Two rows; the second's `ratio` is +infinity, or the largest double
    /// where the engine's doubles hold no infinity.
    static func samples(infinities: Bool = true) -> [Mapped] {
        [
            Mapped(id: 1, title: "é 👩‍👩‍👧 \"quoted\"", notes: nil, count: Int(Int32.max) + 1, small: -128, unsigned: UInt64(Int64.max),
                   ratio: -0.1, single: 1.5, flag: true, when: edgeDates[3], maybeWhen: nil,
                   uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID(), data: Data([0, 255, 10]),
                   amount: Decimal(string: "12345.678901") ?? 0, priority: .high, status: .cancelled,
                   address: Address(street: "Main", tags: ["a"], scores: ["x": 0.5], floor: nil), tags: ["x", ""]),
            Mapped(id: 2, title: "", notes: "", count: -1, small: 127, unsigned: nil, ratio: infinities ? .infinity : .greatestFiniteMagnitude, single: -0.0, flag: false,
                   when: edgeDates[6], maybeWhen: edgeDates[7], uuid: UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID(),
                   data: Data(), amount: -0.5, priority: .none, status: nil, address: nil, tags: []),
        ]
    }

    /// The stored rows of a table, compared cell by cell.
    static func cells(_ db: Database, _ table: String) throws -> [[Value]] {
        try db.fetchAll(Row.self, "SELECT * FROM \(ident: table) ORDER BY \(ident: "id")").map(\.values)
    }

    /// What an attempt gave: the value's description or the error's full text.
    static func outcome<T>(_ body: () throws -> T) -> String {
        do { return "value \(try body())" } catch { return "error \(error)" }
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("mapping: a @Columns type stores the same cells and reads back the same values as Codable") { context in
            let store = try await context.makeStore()
            let infinities = store.dialect.capabilities.doubleCanHoldInfinity
            let samples = samples(infinities: infinities)
            let (mappedCells, codedCells, mappedBack, codedBack, crossed) = try await store.write { db in
                try createTable(db, "mapped", columns)
                try createTable(db, "coded", columns)
                for sample in samples {
                    try db.insert(sample)
                    try db.insert(Coded(sample))
                }
                try db.insert(contentsOf: samples.map { var s = $0; s.id += 10; return s })
                try db.insert(contentsOf: samples.map { var s = Coded($0); s.id += 10; return s })
                return (try cells(db, "mapped"), try cells(db, "coded"),
                        try db.fetchAll(Mapped.self, "SELECT * FROM \(ident: "mapped") ORDER BY \(ident: "id")"),
                        try db.fetchAll(Coded.self, "SELECT * FROM \(ident: "coded") ORDER BY \(ident: "id")"),
                        try db.fetchAll(Mapped.self, "SELECT * FROM \(ident: "coded") ORDER BY \(ident: "id")"))
            }
            try expectSame(mappedCells, codedCells, "cells stored by the mapping and by Codable")
            try expectSame(mappedBack.map(Coded.init), codedBack, "values read by the mapping and by Codable")
            try expectSame(crossed, mappedBack, "the mapping reading rows Codable stored")
            if !infinities {
                let infinite = { var row = samples[1]; row.id = 50; row.ratio = -.infinity; return row }()
                try await expectInfinityRefused("an infinity through the mapping") { try await store.write { db in try db.insert(infinite) } }
                try await expectInfinityRefused("an infinity through Codable") { try await store.write { db in try db.insert(Coded(infinite)) } }
                try await expectInfinityRefused("an infinity in a batch") { try await store.write { db in try db.insert(contentsOf: [infinite]) } }
                let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "mapped") WHERE \(ident: "id") = \(50)") }
                try expectEqual(count, 0, "rows stored by the refused infinities")
            }
        },
        ConformanceCheck("mapping: a @Columns type fails with the same error as Codable, cell for cell") { context in
            let store = try await context.makeStore()
            // Each case replaces one column of a good row with a value that cannot be read.
            let cases: [(String, SQL)] = [
                ("title", "\(nil as String?)"), ("count", "\("twelve")"), ("count", "\(2.5)"), ("small", "\(300)"),
                ("unsigned", "\(-1)"), ("when", "\("yesterday")"), ("priority", "\(4)"), ("status", "\("open?")"),
                ("tags", "\("{not json")"), ("uuid", "\("not-a-uuid")"), ("flag", "\(7)"),
            ]
            let names = columns.map(\.0)
            let outcomes = try await store.write { db -> [(String, String, String)] in
                try createTable(db, "mapped", columns)
                try db.insert(samples()[0])
                var outcomes: [(String, String, String)] = []
                for (column, replacement) in cases {
                    let list = names.map { $0 == column ? "\(replacement) AS \(ident: $0)" as SQL : "\(ident: $0)" as SQL }
                    let sql: SQL = "SELECT \(SQL.join(list, separator: ", ")) FROM \(ident: "mapped")"
                    let mapped = try db.savepoint { db in outcome { try db.fetchAll(Mapped.self, sql) } }
                    let coded = try db.savepoint { db in outcome { try db.fetchAll(Coded.self, sql) } }
                    outcomes.append((column, mapped, coded))
                }
                let missing: SQL = "SELECT \(SQL.join(names.filter { $0 != "notes" }.map { "\(ident: $0)" as SQL }, separator: ", ")) FROM \(ident: "mapped")"
                outcomes.append(("notes left out", outcome { try db.fetchAll(Mapped.self, missing) }, outcome { try db.fetchAll(Coded.self, missing) }))
                return outcomes
            }
            for (column, mapped, coded) in outcomes {
                try expect(mapped.hasPrefix("error"), "\(column): the mapping read a bad cell: \(mapped)")
                try expectEqual(mapped, coded, "\(column): the mapping's error against Codable's")
            }
        },
        ConformanceCheck("mapping: CodingKeys rename columns and leave properties out, as Codable does") { context in
            let store = try await context.makeStore()
            let (stored, back) = try await store.write { db in
                try createTable(db, "renamed", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")])
                try db.insert(Renamed(id: 1, displayName: "Ada", cached: 42))
                return (try cells(db, "renamed"), try db.find(Renamed.self, id: 1))
            }
            try expectSame(stored, [[.integer(1), .text("Ada")]], "the renamed row as stored")
            try expectEqual(back, Renamed(id: 1, displayName: "Ada", cached: 0), "the renamed row read back, its left-out property at its default")
        },
        ConformanceCheck("mapping: key and missing-column strategies apply to a @Columns type as to Codable") { context in
            var configuration = Store.Configuration()
            configuration.encoder.keyStrategy = .custom { "c_" + $0 }
            configuration.decoder.keyStrategy = .custom { "c_" + $0 }
            configuration.decoder.missingColumnStrategy = .decodeOptionalAsNil
            let store = try await context.makeStore(configuration)
            let (stored, back, partial) = try await store.write { db in
                try createTable(db, "prefixed", [("c_id", .integer, "PRIMARY KEY"), ("c_name", .text, "NOT NULL")])
                try db.insert(StrategyChecks.Prefixed(id: 3, name: "x"))
                return (try db.fetchAll(Row.self, "SELECT * FROM \(ident: "prefixed")").map(\.values), try db.fetchOne(StrategyChecks.Prefixed.self, "SELECT * FROM \(ident: "prefixed")"),
                        try db.fetchOne(Item.self, "SELECT \("a") AS \(ident: "c_title"), \(false) AS \(ident: "c_isDone"), \(1) AS \(ident: "c_priority"), \(0.5) AS \(ident: "c_score")"))
            }
            try expectSame(stored, [[.integer(3), .text("x")]], "the prefixed row as stored")
            try expectEqual(back, StrategyChecks.Prefixed(id: 3, name: "x"), "the prefixed row read back")
            try expectEqual(partial?.notes, nil, "an optional property with no column, under decodeOptionalAsNil")
            try expectEqual(partial?.id, nil, "the optional id with no column")
        },
    ]
}

import Depot
import Foundation

/// A value comes back exactly or fails with a typed error naming the cell:
/// the holes found by random rows and by the peers' own test suites.
enum ExactValueChecks {
    struct One<T: Decodable & Sendable>: Decodable, Sendable { var v: T }

    enum Fruit: String, Codable, Sendable { case apple, pear }

    /// A nested value whose coding reads the coders' `userInfo`: with the
    /// `swapsFields` key it stores `a` under "b" and `b` under "a".
    struct Pair: Codable, Sendable, Equatable {
        var a: String
        var b: String
        static let swapsFields = CodingUserInfoKey(rawValue: "depot.conformance.swapsFields")!
        enum CodingKeys: String, CodingKey { case a, b }

        init(a: String, b: String) { self.a = a; self.b = b }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let swaps = decoder.userInfo[Self.swapsFields] as? Bool == true
            a = try container.decode(String.self, forKey: swaps ? .b : .a)
            b = try container.decode(String.self, forKey: swaps ? .a : .b)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let swaps = encoder.userInfo[Self.swapsFields] as? Bool == true
            try container.encode(a, forKey: swaps ? .b : .a)
            try container.encode(b, forKey: swaps ? .a : .b)
        }
    }

    @Columns
    struct Keyed<Key: Codable & Sendable & Equatable>: Record, Equatable {
        static var tableName: String { "keyed" }
        var id: Key
        var title: String
    }

    @Columns
    struct KeyOnly: Record, Equatable {
        static var tableName: String { "key_only" }
        var id: Int64
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("values: a statement run again with other parameter types reads its new result types") { context in
            let store = try await context.makeStore()
            let (integer, double, text) = try await store.write { db in
                (try db.fetchOne(Int.self, "SELECT \(1) AS \(ident: "v")"),
                 try db.fetchOne(Double.self, "SELECT \(1.5) AS \(ident: "v")"),
                 try db.fetchOne(String.self, "SELECT \("x") AS \(ident: "v")"))
            }
            try expectEqual(integer, 1, "SELECT 1")
            try expectEqual(double, 1.5, "the same SQL with 1.5")
            try expectEqual(text, "x", "the same SQL with 'x'")
            let (none, five) = try await store.write { db in
                (try db.fetchOne(Int.self, "SELECT coalesce(\(nil as Int?), 0) AS \(ident: "v")"),
                 try db.fetchOne(Int.self, "SELECT coalesce(\(5 as Int?), 0) AS \(ident: "v")"))
            }
            try expectEqual(none, 0, "coalesce(NULL, 0)")
            try expectEqual(five, 5, "the same SQL with 5")
        },
        ConformanceCheck("values: a date outside the years 0001...9999, or one a Date cannot hold exactly, is a decoding error naming the column, never a clamped date") { context in
            let store = try await context.makeStore()
            for text in ["10000-01-01", "200000-01-01", "9999-12-31 23:59:59.999999"] {
                let error = try await expectError(.decoding, "decoding \(text) as Date") {
                    try await store.read { db in try db.fetchOne(Date.self, "SELECT CAST(\(text) AS \(castType: .date)) AS \(ident: "d")") }
                }
                try expectEqual(error.column, "d", "the failing column for \(text)")
                // As text, a date reads as the exact text, or fails: never another date.
                do {
                    let read = try await store.read { db in try db.fetchOne(String.self, "SELECT CAST(\(text) AS \(castType: .date)) AS \(ident: "d")") }
                    try expect(read?.hasPrefix(text) == true, "\(text) read as text gave another date: \(read ?? "nil")")
                } catch let error as DatabaseError {
                    try expectEqual(error.kind, .decoding, "the error kind for \(text) as String")
                    try expectEqual(error.column, "d", "the failing column for \(text) as String")
                }
            }
        },
        ConformanceCheck("values: Decimal text with more digits than Decimal holds is an error, never rounded") { context in
            let store = try await context.makeStore()
            let exact = ["0.1", "-12.50", "12345678901234567890123456789012345678", "1e5", "0.000001"]
            for text in exact {
                let decimal = try await store.read { db in try db.fetchOne(Decimal.self, "SELECT \(text) AS \(ident: "v")") }
                try expectEqual(decimal, Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), "decoding \(text) as Decimal")
            }
            for text in ["1234567890123456789012345678901234567890.5", "0.12345678901234567890123456789012345678901", "1e400", "12abc"] {
                let error = try await expectError(.decoding, "decoding \(text) as Decimal") {
                    try await store.read { db in try db.fetchOne(Decimal.self, "SELECT \(text) AS \(ident: "v")") }
                }
                try expectEqual(error.column, "v", "the failing column for \(text)")
            }
        },
        ConformanceCheck("values: a decimal keeps its scale: 10.50 reads as the text 10.50 and as the Decimal 10.5") { context in
            let store = try await context.makeStore()
            let texts = ["10.50", "-0.970", "0.00", "5.000", "1.10", "12345678901234567890.1230", "7"]
            try await store.write { db in
                try createTable(db, "prices", [("id", .integer, "PRIMARY KEY"), ("amount", .decimal, "NOT NULL")])
                for (index, text) in texts.enumerated() {
                    try db.execute("INSERT INTO \(ident: "prices") VALUES (\(index), CAST(\(text) AS \(castType: .decimal)))")
                }
            }
            for (index, text) in texts.enumerated() {
                let (asText, asDecimal, asURL) = try await store.read { db in
                    (try db.fetchOne(String.self, "SELECT \(ident: "amount") FROM \(ident: "prices") WHERE \(ident: "id") = \(index)"),
                     try db.fetchOne(Decimal.self, "SELECT \(ident: "amount") FROM \(ident: "prices") WHERE \(ident: "id") = \(index)"),
                     try db.fetchOne(URL.self, "SELECT \(ident: "amount") FROM \(ident: "prices") WHERE \(ident: "id") = \(index)"))
                }
                try expectEqual(asText, text, "the stored decimal \(text) read as a String")
                try expectEqual(asURL?.absoluteString, text, "the stored decimal \(text) read as a URL")
                try expectEqual(asDecimal, Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), "the stored decimal \(text) read as a Decimal")
            }
            // What was read is written back unchanged: a copy of the table's rows keeps every scale.
            let rows = try await store.read { db in try db.fetchAll(Row.self, "SELECT \(ident: "id"), \(ident: "amount") FROM \(ident: "prices") ORDER BY \(ident: "id")") }
            try await store.write { db in
                try createTable(db, "prices_copy", [("id", .integer, "PRIMARY KEY"), ("amount", .decimal, "NOT NULL")])
                for row in rows {
                    try db.execute("INSERT INTO \(ident: "prices_copy") VALUES (\(row[0]), \(row[1]))")
                }
            }
            let copied = try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "amount") FROM \(ident: "prices_copy") ORDER BY \(ident: "id")") }
            try expectEqual(copied, texts, "the decimals read as values and written back, read as text")
        },
        ConformanceCheck("values: text that is not a URL is a decoding error naming the column, never percent-encoded") { context in
            let store = try await context.makeStore()
            for text in ["hello world", "https://example.com/a b", "ünïcode"] {
                let error = try await expectError(.decoding, "decoding '\(text)' as URL") {
                    try await store.read { db in try db.fetchOne(One<URL>.self, "SELECT \(text) AS \(ident: "v")") }
                }
                try expectEqual(error.column, "v", "the failing column for '\(text)'")
            }
            let url = URL(string: "https://example.com/a%20b?q=1#top")!
            let back = try await store.read { db in try db.fetchOne(URL.self, "SELECT \(url) AS \(ident: "v")") }
            try expectEqual(back, url, "a URL round trip")
        },
        ConformanceCheck("values: an array or dictionary fetched from one column reads its JSON, or fails") { context in
            let store = try await context.makeStore()
            try await store.write { db in
                try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("tags", .json, "NOT NULL"), ("scores", .json, "NOT NULL"), ("note", .text, "NOT NULL")])
                try db.execute("INSERT INTO \(ident: "boxes") VALUES (1, \(["a", "b, c"]), \(["x": 1.5]), \("not json"))")
            }
            let tags = try await store.read { db in try db.fetchOne([String].self, "SELECT \(ident: "tags") FROM \(ident: "boxes")") }
            try expectEqual(tags, ["a", "b, c"], "a JSON array column as [String]")
            let set = try await store.read { db in try db.fetchOne(Set<String>.self, "SELECT \(ident: "tags") FROM \(ident: "boxes")") }
            try expectEqual(set, ["a", "b, c"], "a JSON array column as Set<String>")
            let scores = try await store.read { db in try db.fetchOne([String: Double].self, "SELECT \(ident: "scores") FROM \(ident: "boxes")") }
            try expectEqual(scores, ["x": 1.5], "a JSON object column as [String: Double]")
            let error = try await expectError(.decoding, "text that is not JSON as [String]") {
                try await store.read { db in try db.fetchOne([String].self, "SELECT \(ident: "note") FROM \(ident: "boxes")") }
            }
            try expectEqual(error.column, "note", "the failing column")
            try await expectError(.decoding, "two columns as [String]") {
                try await store.read { db in try db.fetchOne([String].self, "SELECT \(ident: "tags"), \(ident: "note") FROM \(ident: "boxes")") }
            }
        },
        ConformanceCheck("values: the coders' userInfo reaches nested values stored as JSON") { context in
            var configuration = Store.Configuration()
            configuration.encoder.userInfo[Pair.swapsFields] = true
            configuration.decoder.userInfo[Pair.swapsFields] = true
            let store = try await context.makeStore(configuration)
            let pair = Pair(a: "first", b: "second")
            let (back, stored) = try await store.write { db in
                try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", .json, "NOT NULL")])
                try db.insert(Box(id: 1, value: pair))
                return (try db.find(Box<Pair>.self, id: 1)?.value,
                        try db.fetchOne(String.self, "SELECT CAST(\(ident: "value") AS \(castType: .text)) FROM \(ident: "boxes")"))
            }
            try expectEqual(back, pair, "a nested value written and read with userInfo")
            let json = try JSONSerialization.jsonObject(with: Data((stored ?? "").utf8)) as? [String: String]
            try expectEqual(json, ["a": "second", "b": "first"], "the stored JSON, written through userInfo")
        },
        ConformanceCheck("values: an error a type's own init(from:) throws names the column and its index") { context in
            let store = try await context.makeStore()
            let error = try await expectError(.decoding, "decoding 'delta' as Fruit") {
                try await store.read { db in try db.fetchOne(Fruit.self, "SELECT \("delta") AS \(ident: "fruit")") }
            }
            try expectEqual(error.column, "fruit", "the failing column")
            try expectEqual(error.columnIndex, 0, "the failing column's index")
            try expectMentions(error.description, ["Fruit", "delta", "fruit"], "the error text")
            let inRecord = try await expectError(.decoding, "decoding 'delta' as a record's Fruit") {
                try await store.read { db in try db.fetchOne(One<Fruit>.self, "SELECT \(1) AS \(ident: "n"), \("delta") AS \(ident: "v")") }
            }
            try expectEqual(inRecord.column, "v", "the failing column in a record")
            try expectEqual(inRecord.columnIndex, 1, "the failing column's index in a record")
        },
        ConformanceCheck("records: upsert of a record with a nil generated id inserts it with a new id") { context in
            let store = try await RecordChecks.itemsStore(context)
            let (first, second) = try await store.write { db in (try db.upsert(Item.sample(1)), try db.upsert(Item.sample(2))) }
            try expect(first.id != nil && second.id != nil && first.id != second.id, "two upserts get two ids: \(first), \(second)")
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") }
            try expectEqual(count, 2, "rows after two upserts")
        },
        ConformanceCheck("records: after explicit ids, a generated id follows the largest one", requires: .consecutiveGeneratedKeys) { context in
            let store = try await RecordChecks.itemsStore(context)
            @Sendable func with(_ id: Int64?, _ n: Int) -> Item { var item = Item.sample(n); item.id = id; return item }
            let ids = try await store.write { db -> [Int64?] in
                var ids: [Int64?] = []
                try db.insert(with(5, 1))
                ids.append(try db.insert(with(nil, 2)).id)                          // 6
                try db.insert(contentsOf: [with(10, 3), with(12, 4), with(11, 5)])
                ids.append(try db.insert(with(nil, 6)).id)                          // 13
                try db.upsert(with(20, 7))
                ids.append(try db.upsert(with(nil, 8)).id)                          // 21
                try db.insert(with(3, 9))                                            // below the largest: no change
                ids.append(try db.insert(with(nil, 10)).id)                         // 22
                return ids
            }
            try expectEqual(ids, [6, 13, 21, 22], "generated ids after explicit ones")
        },
        ConformanceCheck("records: a table recreated with generated ids is seen, whatever the connection learned before", requires: .consecutiveGeneratedKeys) { context in
            let store = try await context.makeStore()
            @Sendable func with(_ id: Int64?, _ n: Int) -> Item { var item = Item.sample(n); item.id = id; return item }
            let id = try await store.write { db -> Int64? in
                // First without a generator: explicit ids only.
                try createTable(db, "items", [("id", .integer, "PRIMARY KEY"), ("title", .text, "NOT NULL"), ("notes", .text, ""),
                                              ("isDone", .bool, "NOT NULL"), ("priority", .integer, "NOT NULL"), ("dueDate", .date, ""),
                                              ("score", .double, "NOT NULL")])
                try db.insert(with(5, 1))
                try db.execute("DROP TABLE \(ident: "items")")
                try Item.createTable(db)
                try db.insert(with(7, 2))
                return try db.insert(with(nil, 3)).id
            }
            try expectEqual(id, 8, "the generated id after an explicit 7 in the recreated table")
        },
        ConformanceCheck("records: delete by id encodes the key with the store's strategies, as find does") { context in
            var configuration = Store.Configuration()
            configuration.encoder.uuidEncodingStrategy = .uppercaseText
            configuration.encoder.dateEncodingStrategy = .millisecondsSince1970
            configuration.decoder.dateDecodingStrategy = .millisecondsSince1970
            configuration.encoder.dataEncodingStrategy = .base64Text
            configuration.decoder.dataDecodingStrategy = .base64Text
            let store = try await context.makeStore(configuration)
            let uuid = UUID()
            let date = Date(timeIntervalSince1970: 1_700_000_000.25)
            let data = Data([0, 1, 2, 255])
            let deleted = try await store.write { db -> [Bool] in
                try createTable(db, "keyed", [("id", .text, "PRIMARY KEY"), ("title", .text, "NOT NULL")])
                try db.insert(Keyed(id: uuid, title: "uuid"))
                let found = try db.find(Keyed<UUID>.self, id: uuid)
                try expectEqual(found?.title, "uuid", "find by an uppercase-text UUID")
                let byUUID = try db.delete(Keyed<UUID>.self, id: uuid)
                try db.execute("DROP TABLE \(ident: "keyed")")
                try createTable(db, "keyed", [("id", .integer, "PRIMARY KEY"), ("title", .text, "NOT NULL")])
                try db.insert(Keyed(id: date, title: "date"))
                let byDate = try db.delete(Keyed<Date>.self, id: date)
                try db.execute("DROP TABLE \(ident: "keyed")")
                try createTable(db, "keyed", [("id", .text, "PRIMARY KEY"), ("title", .text, "NOT NULL")])
                try db.insert(Keyed(id: data, title: "data"))
                let byData = try db.delete(Keyed<Data>.self, id: data)
                return [byUUID, byDate, byData]
            }
            try expectEqual(deleted, [true, true, true], "rows deleted by a UUID, a Date and a Data key")
        },
        ConformanceCheck("records: update of a record with only key columns reports a missing row") { context in
            let store = try await context.makeStore()
            try await store.write { db in
                try createTable(db, "key_only", [("id", .integer, "PRIMARY KEY")])
                try db.insert(KeyOnly(id: 1))
                try db.update(KeyOnly(id: 1))
            }
            try await expectError(.notFound, "updating a key-only record that does not exist") {
                try await store.write { db in try db.update(KeyOnly(id: 2)) }
            }
        },
        ConformanceCheck("values: a stored date compares with the engine's own CURRENT_TIMESTAMP") { context in
            let store = try await context.makeStore()
            let (before, after) = try await store.write { db in
                try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", .date, "NOT NULL")])
                // Read inside the access: a busy machine may take long to grant it.
                let now = Date()
                try db.insert(Box(id: 1, value: now.addingTimeInterval(-90)))
                try db.insert(Box(id: 2, value: now.addingTimeInterval(90)))
                return (try db.fetchAll(Int.self, "SELECT \(ident: "id") FROM \(ident: "boxes") WHERE \(ident: "value") < CURRENT_TIMESTAMP"),
                        try db.fetchAll(Int.self, "SELECT \(ident: "id") FROM \(ident: "boxes") WHERE \(ident: "value") > CURRENT_TIMESTAMP"))
            }
            try expectEqual(before, [1], "dates before CURRENT_TIMESTAMP")
            try expectEqual(after, [2], "dates after CURRENT_TIMESTAMP")
        },
        ConformanceCheck("values: a quoted name that matches no column is an error, never read as text") { context in
            let store = try await RecordChecks.itemsStore(context)
            try await store.write { db in try db.insert(Item.sample(1)) }
            let error = try await expectError(.syntax, "selecting a column that does not exist") {
                try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "titel") FROM \(ident: "items")") }
            }
            try expectMentions(error.description, ["titel"], "the error text")
            try await expectError(.syntax, "filtering on a column that does not exist") {
                try await store.read { db in try db.fetchAll(Item.self, "SELECT * FROM \(ident: "items") WHERE \(ident: "titel") = \("titel")") }
            }
        },
        ConformanceCheck("errors: no error text holds a bound value unless the store asks, and constraint, table and column stay") { context in
            let secret = "alice@example.com"
            for shows in [false, true] {
                var configuration = Store.Configuration()
                configuration.showsBoundValues = shows
                let store = try await context.makeStore(configuration)
                try await store.write { db in
                    try createTable(db, "people", [("id", .integer, "PRIMARY KEY"), ("email", .text, "NOT NULL UNIQUE"),
                                                   ("age", .integer, "CHECK (\"age\" >= 0)"), ("badge", .uuid, "")])
                    try db.execute("INSERT INTO \(ident: "people") (\(ident: "id"), \(ident: "email")) VALUES (\(1), \(secret))")
                }
                var errors: [DatabaseError] = []
                errors.append(try await expectError(.unique, "a duplicate email") {
                    try await store.write { db in try db.execute("INSERT INTO \(ident: "people") (\(ident: "id"), \(ident: "email")) VALUES (\(2), \(secret))") }
                })
                errors.append(try await expectError(.check, "a negative age") {
                    try await store.write { db in try db.execute("INSERT INTO \(ident: "people") (\(ident: "id"), \(ident: "email"), \(ident: "age")) VALUES (\(3), \(secret + ".uk"), \(-1))") }
                })
                if let unique = errors.first {
                    try expect(unique.table == "people" || unique.message.contains("people"), "the unique error names the table: \(unique)")
                }
                do {
                    try await store.write { db in try db.execute("UPDATE \(ident: "people") SET \(ident: "badge") = \(secret)") }
                } catch let error as DatabaseError {
                    errors.append(error)
                }
                for error in errors {
                    let texts = [error.description, error.message, error.detail ?? "", "\(error)", String(reflecting: error)]
                    for text in texts where !shows {
                        try expect(!text.contains(secret), "a bound value in error text with showsBoundValues off: \(text)")
                    }
                }
                if shows {
                    try expect(errors[0].description.contains(secret), "showsBoundValues on shows the value: \(errors[0])")
                }
            }
        },
    ]
}

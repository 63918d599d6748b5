import Depot
import Foundation

/// Bad rows fail with a decoding error that points at the exact cell.
enum DecodingErrorChecks {
    @Columns
    struct StrictNotes: Codable, Sendable {
        var id: Int64
        var title: String
        var notes: String
    }

    @Columns
    struct Typo: Codable, Sendable {
        var id: Int64
        var titel: String?
    }
    struct One<T: Decodable & Sendable>: Decodable, Sendable { var v: T }

    static func itemsStore(_ context: ConformanceContext, _ configuration: Store.Configuration = Store.Configuration()) async throws -> Store {
        let store = try await context.makeStore(configuration)
        try await store.write { db in
            try Item.createTable(db)
            try db.insert(Item(id: nil, title: "milk", notes: nil, isDone: false, priority: .low, dueDate: nil, score: 1))
        }
        return store
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("decoding: NULL into a non-optional property names the column, its index and the SQL") { context in
            let store = try await itemsStore(context)
            let error = try await expectError(.decoding, "decoding NULL notes as String") {
                try await store.read { db in try db.fetchAll(StrictNotes.self, "SELECT * FROM \(ident: "items")") }
            }
            try expectEqual(error.column, "notes", "the failing column")
            try expectEqual(error.columnIndex, 2, "the failing column's index")
            try expectEqual(error.codingPath, "notes", "the coding path")
            try expectMentions(error.description, ["NULL", "String", "SELECT * FROM \"items\""], "the error text")
        },
        ConformanceCheck("decoding: a missing column is an error, also for an optional property") { context in
            let store = try await itemsStore(context)
            let error = try await expectError(.decoding, "decoding a property with no column") {
                try await store.read { db in try db.fetchAll(Typo.self, "SELECT * FROM \(ident: "items")") }
            }
            try expectEqual(error.column, "titel", "the missing column")
            try expectMentions(error.message, ["titel", "title", "isDone"], "the error lists the columns the row has")
        },
        ConformanceCheck("decoding: a missing column reads as nil only when the decoder allows it") { context in
            var configuration = Store.Configuration()
            configuration.decoder.missingColumnStrategy = .decodeOptionalAsNil
            let store = try await itemsStore(context, configuration)
            let typos = try await store.read { db in try db.fetchAll(Typo.self, "SELECT * FROM \(ident: "items")") }
            try expectEqual(typos.map(\.titel), [nil], "an optional with no column")
            try await expectError(.decoding, "a non-optional with no column") {
                try await store.read { db in try db.fetchAll(StrictNotes.self, "SELECT \(ident: "id"), \(ident: "notes") FROM \(ident: "items")") }
            }
        },
        ConformanceCheck("decoding: text into an integer names the column, the Swift type and the stored value") { context in
            let store = try await context.makeStore()
            let error = try await expectError(.decoding, "decoding 'abc' as Int") {
                try await store.read { db in try db.fetchAll(One<Int>.self, "SELECT \("abc") AS \(ident: "v")") }
            }
            try expectEqual(error.column, "v", "the failing column")
            try expectEqual(error.columnIndex, 0, "the failing column's index")
            try expectMentions(error.message, ["Int", "TEXT 'abc'"], "the error text")
        },
        ConformanceCheck("decoding: integers never wrap: 300 into Int8 and -1 into UInt8 are errors") { context in
            let store = try await context.makeStore()
            let error = try await expectError(.decoding, "decoding 300 as Int8") {
                try await store.read { db in try db.fetchAll(One<Int8>.self, "SELECT \(300) AS \(ident: "v")") }
            }
            try expectMentions(error.message, ["Int8", "300", "out of range"], "the error text")
            try await expectError(.decoding, "decoding -1 as UInt8") {
                try await store.read { db in try db.fetchOne(UInt8.self, "SELECT \(-1)") }
            }
        },
        ConformanceCheck("decoding: a fractional number into an integer is an error, a whole one is read") { context in
            let store = try await context.makeStore()
            try await expectError(.decoding, "decoding 2.5 as Int") {
                try await store.read { db in try db.fetchOne(Int.self, "SELECT \(2.5)") }
            }
            let whole = try await store.read { db in try db.fetchOne(Int.self, "SELECT \(3.0)") }
            try expectEqual(whole, 3, "decoding 3.0 as Int")
        },
        ConformanceCheck("decoding: an unknown enum raw value is an error naming the column and the value") { context in
            let store = try await itemsStore(context)
            try await store.write { db in try db.execute("UPDATE \(ident: "items") SET \(ident: "priority") = \(7)") }
            let error = try await expectError(.decoding, "decoding priority 7") {
                try await store.read { db in try db.fetchAll(Item.self, "SELECT * FROM \(ident: "items")") }
            }
            try expectEqual(error.column, "priority", "the failing column")
            try expectMentions(error.message, ["Priority", "7"], "the error text")
        },
        ConformanceCheck("decoding: JSON of the wrong shape names the column and the path inside the JSON") { context in
            let store = try await context.makeStore()
            try await store.write { db in
                try createTable(db, "boxes", [("id", .integer, "PRIMARY KEY"), ("value", .json, "NOT NULL")])
                try db.execute("INSERT INTO \(ident: "boxes") VALUES (1, \(Value.json(#"{"street": "x", "tags": ["a", 2], "scores": {}}"#)))")
            }
            let error = try await expectError(.decoding, "decoding a JSON array holding a number as [String]") {
                try await store.read { db in try db.fetchAll(Box<Address>.self, "SELECT * FROM \(ident: "boxes")") }
            }
            try expectEqual(error.column, "value", "the failing column")
            try expectMentions(error.message, ["Address", "tags[1]"], "the error text")
            try expectMentions(error.codingPath ?? "", ["value.tags[1]"], "the coding path")
        },
        ConformanceCheck("decoding: date text that is not ISO-8601 is an error, database-written forms are read") { context in
            let store = try await context.makeStore()
            try await expectError(.decoding, "decoding 'yesterday' as Date") {
                try await store.read { db in try db.fetchOne(Date.self, "SELECT \("yesterday")") }
            }
            let forms = ["2024-03-01 12:34:56", "2024-03-01T12:34:56Z", "2024-03-01T13:34:56.000+01:00", "2024-03-01T12:34:56.000000000Z"]
            for form in forms {
                let date = try await store.read { db in try db.fetchOne(Date.self, "SELECT \(form)") }
                try expectEqual(date, Date(timeIntervalSince1970: 1_709_296_496), "decoding \(form)")
            }
        },
        ConformanceCheck("decoding: UUID text is read in its 8-4-4-4-12 hex form only, in either case; a sign or a brace is an error, not another UUID") { context in
            let store = try await context.makeStore()
            let expected = UUID(uuid: (0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A, 0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F))
            for form in ["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "E621e1f8-C36c-495A-93fC-0c247A3E6E5f"] {
                let uuid = try await store.read { db in try db.fetchOne(UUID.self, "SELECT \(form)") }
                try expectEqual(uuid, expected, "decoding \(form)")
            }
            // Foundation's parser on Linux read "+6" and "-6" as a byte (6 and 0xFA): a different UUID, silently.
            let malformed = ["+621E1F8-C36C-495A-93FC-0C247A3E6E5F", "-621E1F8-C36C-495A-93FC-0C247A3E6E5F", " 621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                             "E621E1F8-C36C-495A-93FC-0C247A3E6E5G", "E621E1F8C-36C-495A-93FC-0C247A3E6E5F", "{621E1F8-C36C-495A-93FC-0C247A3E6E5}",
                             "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF", "E621E1F8-C36C-495A-93FC-0C247A3E6É5"]
            for text in malformed {
                let error = try await expectError(.decoding, "decoding \(text) as UUID") {
                    try await store.read { db in try db.fetchOne(UUID.self, "SELECT \(text)") }
                }
                try expectMentions(error.message, ["not a UUID"], "the error text for \(text)")
            }
        },
        ConformanceCheck("decoding: a single value needs exactly one column") { context in
            let store = try await context.makeStore()
            let error = try await expectError(.decoding, "decoding two columns as Int") {
                try await store.read { db in try db.fetchOne(Int.self, "SELECT 1 AS \(ident: "a"), 2 AS \(ident: "b")") }
            }
            try expectMentions(error.message, ["2 columns", "a, b"], "the error text")
        },
        ConformanceCheck("decoding: fetchOne of several rows is a tooManyRows error") { context in
            let store = try await itemsStore(context)
            try await store.write { db in try db.insert(Item.sample(1)) }
            try await expectError(.tooManyRows, "fetchOne over two rows") {
                try await store.read { db in try db.fetchOne(Item.self, "SELECT * FROM \(ident: "items")") }
            }
            let none = try await store.read { db in try db.fetchOne(Item.self, "SELECT * FROM \(ident: "items") WHERE 1 = 0") }
            try expect(none == nil, "fetchOne over no row must be nil")
        },
        ConformanceCheck("errors: bound values stay out of error text unless the store asks for them") { context in
            let secret = "s3cr3t-p4ssw0rd"
            for shows in [false, true] {
                var configuration = Store.Configuration()
                configuration.showsBoundValues = shows
                let store = try await itemsStore(context, configuration)
                // The stored item's generated id: 1 on most engines, not on every node of a cluster.
                let taken = try await store.read { db in try db.fetchOne(Int64.self, "SELECT \(ident: "id") FROM \(ident: "items")") }
                let error = try await expectError(.unique, "inserting a duplicate id") {
                    try await store.write { db in
                        try db.execute("INSERT INTO \(ident: "items") (\(ident: "id"), \(ident: "title"), \(ident: "isDone"), \(ident: "priority"), \(ident: "score")) VALUES (\(taken), \(secret), \(false), \(0), \(0.0))")
                    }
                }
                try expectEqual(error.description.contains(secret), shows, "the error text shows the bound value (showsBoundValues = \(shows)): \(error)")
            }
        },
    ]
}

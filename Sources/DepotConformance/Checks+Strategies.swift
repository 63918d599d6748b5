import Depot
import Foundation

/// The coders' strategies mean the same on every engine.
enum StrategyChecks {
    @Columns
    struct Snake: Record, Equatable {
        static var tableName: String { "snake_items" }
        var id: Int64
        var dueDate: Date?
        var remindersListID: Int64
        var isURLValid: Bool
    }

    @Columns
    struct Prefixed: Record, Equatable {
        static var tableName: String { "prefixed" }
        static var primaryKey: [String] { ["c_id"] }
        var id: Int64
        var name: String
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("strategies: snake_case keys write and read snake_case columns") { context in
            var configuration = Store.Configuration()
            configuration.encoder.keyStrategy = .snakeCase
            configuration.decoder.keyStrategy = .snakeCase
            let store = try await context.makeStore(configuration)
            let record = Snake(id: 1, dueDate: edgeDates[3], remindersListID: 7, isURLValid: true)
            let back = try await store.write { db in
                try createTable(db, "snake_items", [("id", .integer, "PRIMARY KEY"), ("due_date", .date, ""),
                                                    ("reminders_list_id", .integer, "NOT NULL"), ("is_url_valid", .bool, "NOT NULL")])
                try db.insert(record)
                return try db.find(Snake.self, id: 1)
            }
            try expectEqual(back, Snake(id: 1, dueDate: microsecondRounded(edgeDates[3]), remindersListID: 7, isURLValid: true), "a snake_case round trip")
        },
        ConformanceCheck("strategies: custom key mapping applies to both directions") { context in
            var configuration = Store.Configuration()
            configuration.encoder.keyStrategy = .custom { "c_" + $0 }
            configuration.decoder.keyStrategy = .custom { "c_" + $0 }
            let store = try await context.makeStore(configuration)
            let back = try await store.write { db in
                try createTable(db, "prefixed", [("c_id", .integer, "PRIMARY KEY"), ("c_name", .text, "NOT NULL")])
                return try db.insert(Prefixed(id: 3, name: "x"))
            }
            try expectEqual(back, Prefixed(id: 3, name: "x"), "a custom-keyed round trip")
        },
        ConformanceCheck("strategies: numeric and text date strategies round trip in their column types") { context in
            let date = Date(timeIntervalSince1970: 1_700_000_000.5)
            let cases: [(DateStrategy, ColumnType, String)] = [
                (.secondsSince1970, .double, "seconds since 1970"),
                (.millisecondsSince1970, .integer, "milliseconds since 1970"),
                (.timeIntervalSinceReferenceDate, .double, "seconds since 2001"),
                (.iso8601Text, .text, "ISO-8601 text"),
                (.custom(encode: { .text(String($0.timeIntervalSince1970)) },
                         decode: { value in
                             guard case .text(let text) = value, let seconds = Double(text) else { throw ConformanceFailure("bad custom date \(value)") }
                             return Date(timeIntervalSince1970: seconds)
                         }), .text, "a custom form"),
            ]
            for (strategy, type, name) in cases {
                var configuration = Store.Configuration()
                configuration.encoder.dateEncodingStrategy = strategy
                configuration.decoder.dateDecodingStrategy = strategy
                let store = try await context.makeStore(configuration)
                try expectSame(try await roundTrip(store, type, [date]), [date], "a date stored as \(name)")
            }
            var iso = Store.Configuration()
            iso.encoder.dateEncodingStrategy = .iso8601Text
            let store = try await context.makeStore(iso)
            _ = try await roundTrip(store, .text, [date])
            let text = try await store.read { db in try db.fetchOne(String.self, "SELECT \(ident: "value") FROM \(ident: "boxes")") }
            try expectEqual(text, "2023-11-14 22:13:20.500", "the stored date text, in SQLite's own form")
        },
        ConformanceCheck("strategies: UUIDs as upper- or lowercase text or 16-byte blobs, all readable") { context in
            let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
            let cases: [(UUIDStrategy, ColumnType, Value)] = [
                (.lowercaseText, .text, .text("e621e1f8-c36c-495a-93fc-0c247a3e6e5f")),
                (.uppercaseText, .text, .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")),
                (.blob, .blob, withUnsafeBytes(of: uuid.uuid) { .blob(Data($0)) }),
            ]
            for (strategy, type, stored) in cases {
                var configuration = Store.Configuration()
                configuration.encoder.uuidEncodingStrategy = strategy
                let store = try await context.makeStore(configuration)
                try expectSame(try await roundTrip(store, type, [uuid]), [uuid], "a UUID stored as \(stored.kindName)")
                let raw = try await store.read { db in try db.fetchOne(Value.self, "SELECT \(ident: "value") FROM \(ident: "boxes")") }
                try expectEqual(raw, stored, "the stored UUID")
            }
        },
        ConformanceCheck("strategies: Data as base64 text") { context in
            var configuration = Store.Configuration()
            configuration.encoder.dataEncodingStrategy = .base64Text
            configuration.decoder.dataDecodingStrategy = .base64Text
            let store = try await context.makeStore(configuration)
            let data = Data([0, 1, 2, 250, 255])
            try expectSame(try await roundTrip(store, .text, [data]), [data], "base64 Data")
            let text = try await store.read { db in try db.fetchOne(String.self, "SELECT \(ident: "value") FROM \(ident: "boxes")") }
            try expectEqual(text, "AAEC+v8=", "the stored base64 text")
        },
        ConformanceCheck("strategies: a per-column JSON encoder shapes that column only") { context in
            var configuration = Store.Configuration()
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = .sortedKeys
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            configuration.encoder.columnJSONEncoders = ["value": encoder]
            configuration.decoder.columnJSONDecoders = ["value": decoder]
            let store = try await context.makeStore(configuration)
            let values = [["at": Date(timeIntervalSince1970: 0)]]
            try expectSame(try await roundTrip(store, .json, values), values, "JSON with ISO dates")
            let text = try await store.read { db in try db.fetchOne(String.self, "SELECT \(ident: "value") FROM \(ident: "boxes")") }
            try expect(text?.contains("1970-01-01T00:00:00Z") == true, "the column's JSON uses its own encoder: \(text ?? "nil")")
        },
    ]
}

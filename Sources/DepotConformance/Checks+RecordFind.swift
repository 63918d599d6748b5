import Depot
import Foundation

/// `find` returns the one row of its key, and a key the table does not hold
/// unique is found out: a second row is a `tooManyRows` error. An engine may
/// stop at the first row when its own plan proves no second can follow
/// (``DriverStatement/returnsOneRowAtMost``); these checks hold it to that.
enum FindChecks {
    /// A record keyed by a text column, read through its generated mapping.
    @Columns
    struct Coded: Record, Equatable {
        static var tableName: String { "coded" }
        static var primaryKey: [String] { ["code"] }
        var code: String
        var title: String
    }

    /// The same rows, read through Codable.
    struct CodedThroughCodable: Record, Equatable {
        static var tableName: String { "coded" }
        static var primaryKey: [String] { ["code"] }
        var code: String
        var title: String
    }

    /// Both `find` paths for one key: the generated mapping's and Codable's.
    static func findBoth(_ store: Store, _ code: String) async throws -> (Coded?, CodedThroughCodable?) {
        try await store.read { db in (try db.find(Coded.self, id: code), try db.find(CodedThroughCodable.self, id: code)) }
    }

    static func expectFound(_ store: Store, _ code: String, title: String, _ what: String) async throws {
        let (mapped, codable) = try await findBoth(store, code)
        try expectEqual(mapped, Coded(code: code, title: title), "\(what), through the mapping")
        try expectEqual(codable, CodedThroughCodable(code: code, title: title), "\(what), through Codable")
    }

    static func expectNotUnique(_ store: Store, _ code: String, _ what: String) async throws {
        let mapped = try await expectError(.tooManyRows, "\(what), through the mapping") {
            try await store.read { db in try db.find(Coded.self, id: code) }
        }
        try expect(mapped.message.contains("is not unique"), "\(what): the error names the key: \(mapped)")
        try await expectError(.tooManyRows, "\(what), through Codable") {
            try await store.read { db in try db.find(CodedThroughCodable.self, id: code) }
        }
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("records: find by a key the table holds unique (primary key, unique index) finds its row") { context in
            let store = try await context.makeStore()
            try await store.write { db in
                try db.execute("CREATE TABLE \(ident: "coded") (\(ident: "code") VARCHAR(20) PRIMARY KEY, \(ident: "title") VARCHAR(40) NOT NULL)")
                try db.execute("INSERT INTO \(ident: "coded") VALUES ('a', 'first'), ('b', 'second')")
            }
            try await expectFound(store, "b", title: "second", "find by a text primary key")
            let missing = try await findBoth(store, "z")
            try expect(missing.0 == nil && missing.1 == nil, "find of a missing key is nil: \(missing)")
            try await store.write { db in
                try db.execute("DROP TABLE \(ident: "coded")")
                try db.execute("CREATE TABLE \(ident: "coded") (\(ident: "code") VARCHAR(20) NOT NULL, \(ident: "title") VARCHAR(40) NOT NULL)")
                try db.execute("CREATE UNIQUE INDEX \(ident: "coded_code") ON \(ident: "coded") (\(ident: "code"))")
                try db.execute("INSERT INTO \(ident: "coded") VALUES ('a', 'first'), ('b', 'second')")
            }
            try await expectFound(store, "a", title: "first", "find by a uniquely indexed column")
        },
        ConformanceCheck("records: find by a declared key the table does not hold unique is a tooManyRows error, also after the key was unique") { context in
            let store = try await context.makeStore()
            try await store.write { db in
                try db.execute("CREATE TABLE \(ident: "coded") (\(ident: "code") VARCHAR(20) PRIMARY KEY, \(ident: "title") VARCHAR(40) NOT NULL)")
                try db.execute("INSERT INTO \(ident: "coded") VALUES ('a', 'first')")
            }
            // Found while the key was unique, so every connection may have
            // compiled (and judged) the lookup; then the table changes under it.
            for _ in 0..<3 { try await expectFound(store, "a", title: "first", "find while the key is unique") }
            try await store.write { db in
                try db.execute("DROP TABLE \(ident: "coded")")
                try db.execute("CREATE TABLE \(ident: "coded") (\(ident: "code") VARCHAR(20) NOT NULL, \(ident: "title") VARCHAR(40) NOT NULL)")
                try db.execute("INSERT INTO \(ident: "coded") VALUES ('a', 'first'), ('a', 'again'), ('b', 'second')")
            }
            try await expectNotUnique(store, "a", "find of a key two rows hold")
            try await expectFound(store, "b", title: "second", "find of a key one row holds")
            // The same inside one access whose earlier find judged the key unique.
            try await store.write { db in
                try db.execute("DELETE FROM \(ident: "coded") WHERE \(ident: "title") = 'again'")
            }
            let inOneAccess = try await expectError(.tooManyRows, "find after the key stopped being unique, in the same access") {
                try await store.write { db in
                    _ = try db.find(Coded.self, id: "a")
                    try db.execute("INSERT INTO \(ident: "coded") VALUES ('a', 'again')")
                    return try db.find(Coded.self, id: "a")
                }
            }
            try expect(inOneAccess.message.contains("is not unique"), "the error names the key: \(inOneAccess)")
        },
    ]
}

import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Testing
import TestSupport

/// The same records written through both backends read back as identical values.
@Suite(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct CrossEngineTests {
    struct Everything: Record, Equatable {
        static let tableName = "everything"
        struct Nested: Codable, Equatable { var tags: [String]; var weights: [String: Double] }
        enum Kind: String, Codable { case a, b }
        var id: Int64
        var flag: Bool
        var small: Int8
        var big: Int64
        var unsigned: UInt32
        var ratio: Double
        var title: String
        var notes: String?
        var bytes: Data
        var when: Date
        var maybeWhen: Date?
        var uuid: UUID
        var amount: Decimal
        var link: URL
        var kind: Kind
        var nested: Nested

        static func sample(_ n: Int) -> Everything {
            Everything(id: Int64(n), flag: n % 2 == 0, small: Int8(n % 100 - 50), big: Int64.max - Int64(n), unsigned: UInt32.max - UInt32(n),
                       ratio: Double(n) / 7, title: "título \(n) 🧪", notes: n % 3 == 0 ? nil : "", bytes: Data((0..<n).map { UInt8($0 % 256) }),
                       when: Date(timeIntervalSince1970: -1_000_000 + Double(n) * 12_345.678_901),
                       maybeWhen: n % 2 == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(n)),
                       uuid: UUID(), amount: Decimal(string: "\(n).0\(n)")!, link: URL(string: "https://example.com/\(n)")!,
                       kind: n % 2 == 0 ? .a : .b, nested: Nested(tags: ["t\(n)"], weights: ["w": Double(n) + 0.5]))
        }
    }

    func migrate(_ store: Store) async throws {
        var migrator = Migrator()
        migrator.register("everything") { db in
            try db.execute("""
                CREATE TABLE "everything" ("id" \(type: .integer) PRIMARY KEY, "flag" \(type: .bool) NOT NULL,
                  "small" \(type: .integer) NOT NULL, "big" \(type: .integer) NOT NULL, "unsigned" \(type: .integer) NOT NULL,
                  "ratio" \(type: .double) NOT NULL, "title" \(type: .text) NOT NULL, "notes" \(type: .text),
                  "bytes" \(type: .blob) NOT NULL, "when" \(type: .date) NOT NULL, "maybeWhen" \(type: .date),
                  "uuid" \(type: .uuid) NOT NULL, "amount" \(type: .decimal) NOT NULL, "link" \(type: .text) NOT NULL,
                  "kind" \(type: .text) NOT NULL, "nested" \(type: .json) NOT NULL)
                """)
        }
        try await migrator.migrate(store)
    }

    @Test func bothEnginesReadBackTheSameValues() async throws {
        let records = (1...40).map(Everything.sample)
        let sqlite = Store.sqliteInMemory()
        let postgres = try await PostgresTestServer.freshStore()
        var results: [[Everything]] = []
        for store in [sqlite, postgres] {
            try await migrate(store)
            try await store.write { db in
                try db.insert(contentsOf: records.prefix(20))
                for record in records.dropFirst(20) { try db.insert(record) }
            }
            results.append(try await store.read { db in
                try db.fetchAll(Everything.self, "SELECT * FROM \(ident: "everything") ORDER BY \(ident: "id")")
            })
        }
        #expect(results[0] == results[1])
        let expected = records.map { record -> Everything in
            var copy = record
            copy.when = ISO8601.microseconds(record.when).map(ISO8601.date(microseconds:)) ?? record.when
            return copy
        }
        #expect(results[1] == expected)
        await postgres.close()
    }
}

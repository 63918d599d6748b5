import Depot
@testable import DepotPostgres
import Foundation
import Testing
import TestSupport

/// PostgreSQL's own types at and past the edges Depot maps: each value reads
/// back exactly or fails with a `decoding` error naming the column, never a trap.
@Suite(.enabled(if: PostgresTestServer.shouldRun, "no PostgreSQL server named (set DEPOT_POSTGRES_URL, or run scripts/test)"))
struct PostgresExactValueTests {
    @Test(arguments: ["'300000-01-01'::date", "'5874897-12-31'::date", "'10000-01-01'::date", "'4713-01-01 BC'::date",
                      "'0001-01-01 BC'::date", "'294276-12-31 23:59:59'::timestamptz", "'4713-01-01 00:00:00 BC'::timestamp",
                      "'10000-01-01'::timestamptz"])
    func aDateOutsideTheMappedYearsIsADecodingErrorForEveryTarget(_ literal: String) async throws {
        let store = try await PostgresTestServer.freshStore()
        defer { Task { await store.close() } }
        for target in ["Date", "String", "Date?"] {
            let error = await #expect(throws: DatabaseError.self, "\(literal) as \(target)") {
                try await store.read { db in
                    let sql: SQL = "SELECT \(unsafeRaw: literal) AS \(ident: "d")"
                    switch target {
                    case "Date": _ = try db.fetchOne(Date.self, sql)
                    case "String": _ = try db.fetchOne(String.self, sql)
                    default: _ = try db.fetchAll(Row.self, sql)
                    }
                }
            }
            #expect(error?.kind == .decoding)
            #expect(error?.column == "d")
            #expect(error?.message.contains("0001...9999") == true, "\(error?.description ?? "")")
        }
    }

    @Test func theEdgesOfTheMappedYearsReadExactly() async throws {
        let store = try await PostgresTestServer.freshStore()
        defer { Task { await store.close() } }
        let (first, last, firstText, lastText) = try await store.read { db in
            (try db.fetchOne(Date.self, "SELECT '0001-01-01'::date"),
             try db.fetchOne(Date.self, "SELECT '9999-12-31 23:59:59.5+00'::timestamptz"),
             try db.fetchOne(String.self, "SELECT '0001-01-01'::date"),
             try db.fetchOne(String.self, "SELECT '9999-12-31 23:59:59+00'::timestamptz"))
        }
        #expect(first == Date(timeIntervalSince1970: -62_135_596_800))
        #expect(last.map { ISO8601.microseconds($0) } == 253_402_300_799_500_000)
        #expect(firstText == "0001-01-01 00:00:00")
        #expect(lastText == "9999-12-31 23:59:59")
        // A Date cannot hold this microsecond: it would read as year 10000.
        let error = await #expect(throws: DatabaseError.self) {
            try await store.read { db in try db.fetchOne(String.self, "SELECT '9999-12-31 23:59:59.999999+00'::timestamptz AS \(ident: "t")") }
        }
        #expect(error?.kind == .decoding && error?.column == "t")
    }

    @Test func aStatementPreparedForOtherParameterTypesReadsItsOwnResultTypes() async throws {
        let store = try await PostgresTestServer.freshStore { $0.maxConnections = 1 }
        defer { Task { await store.close() } }
        let values = try await store.read { db -> [String] in
            var read: [String] = []
            for _ in 0..<3 {
                read.append("\(try db.fetchOne(Int.self, "SELECT \(1) AS \(ident: "v")") ?? -1)")
                read.append("\(try db.fetchOne(Double.self, "SELECT \(1.5) AS \(ident: "v")") ?? -1)")
                read.append(try db.fetchOne(String.self, "SELECT \(Date(timeIntervalSince1970: 0)) AS \(ident: "v")") ?? "nil")
                read.append("\(try db.fetchOne(Bool.self, "SELECT \(true) AS \(ident: "v")") ?? false)")
            }
            // Streaming reads the types of its own execution too.
            try db.forEach(Double.self, "SELECT \(2.5) AS \(ident: "v")") { read.append("\($0)") }
            try db.forEach(Int.self, "SELECT \(7) AS \(ident: "v")") { read.append("\($0)") }
            return read
        }
        #expect(values == Array(repeating: ["1", "1.5", "1970-01-01 00:00:00", "true"], count: 3).flatMap { $0 } + ["2.5", "7"])
    }

    @Test(arguments: [
        "postgres://app:hunter2@127.0.0.1:notaport/db",
        "postgres://app:hunter2@bad host/db",
        "postgres://app:hunter2@[::1/db",
        "app:hunter2@127.0.0.1/db",
        "postgres://app:hunter2@127.0.0.1:5432/db?sslmode=bogus&password=hunter2",
        "mysql://app:hunter2@127.0.0.1/db",
        "postgres://app:hun@ter2@127.0.0.1:x/db",
    ])
    func aMalformedURLNeverEchoesItsPassword(_ url: String) {
        do {
            let configuration = try PostgresConfiguration(url: url)
            for text in [configuration.description, String(reflecting: configuration), dumped(configuration)] {
                #expect(!text.contains("hunter2") && !text.contains("ter2"), "\(text)")
            }
        } catch {
            #expect(!"\(error)".contains("ter2"), "\(error)")
        }
    }

    @Test func neitherDumpNorMirrorShowsThePassword() throws {
        var configuration = try PostgresConfiguration(url: "postgres://app:hunter2@db.example.com/app")
        configuration.parameters["password"] = "hunter2"
        let texts = [dumped(configuration), String(reflecting: configuration), "\(configuration)",
                     Mirror(reflecting: configuration).children.map { "\($0.label ?? ""): \($0.value)" }.joined()]
        for text in texts {
            #expect(!text.contains("hunter2"), "\(text)")
        }
        #expect(dumped(configuration).contains("db.example.com"))
    }

    @Test func detailsKeepTheirShapeWithoutTheValues() {
        #expect(PostgresError.redactingValues(detail: "Key (email)=(alice@example.com) already exists.") == "Key (email)=(…) already exists.")
        #expect(PostgresError.redactingValues(detail: "Key (list_id)=(5) is not present in table \"lists\".") == "Key (list_id)=(…) is not present in table \"lists\".")
        #expect(PostgresError.redactingValues(detail: "Key (id)=(a) is still referenced from table \"x\".") == "Key (id)=(…) is still referenced from table \"x\".")
        #expect(PostgresError.redactingValues(detail: "Key (lower(title))=(x) y) already exists.") == "Key (lower(title))=(…) already exists.")
        #expect(PostgresError.redactingValues(detail: "Failing row contains (3, bob, -1).") == "Failing row contains (…).")
        #expect(PostgresError.redactingValues(detail: "Something new quoting 'alice'.") == nil)
        #expect(PostgresError.redactingValues(message: "invalid input syntax for type uuid: \"alice\"", sqlState: "22P02") == "invalid input syntax for type uuid: \"…\"")
        #expect(PostgresError.redactingValues(message: "value \"2147483648\" is out of range for type integer", sqlState: "22003") == "value \"…\" is out of range for type integer")
        #expect(PostgresError.redactingValues(message: "invalid input syntax for type uuid: \"a\"b\"", sqlState: "22P02") == "invalid input syntax for type uuid: \"…\"")
    }

    private func dumped(_ value: some Any) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }
}

import Depot
import Foundation
import Logging

/// Keeps what a logger was sent, for the logging checks.
final class CapturedLogs: @unchecked Sendable {
    struct Record {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var captured: [Record] = []

    var records: [Record] { lock.withLock { captured } }

    func append(_ record: Record) { lock.withLock { captured.append(record) } }

    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "depot.conformance") { _ in Handler(logs: self) }
        logger.logLevel = level
        return logger
    }

    struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            logs.append(Record(level: event.level, message: "\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}

/// Statements are logged with their SQL and duration, never their values unless shown.
enum LoggingChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("logging: statements at debug with their SQL and duration, never their values unless shown") { context in
            let logs = CapturedLogs()
            var configuration = Store.Configuration()
            configuration.logger = logs.logger(level: .debug)
            let store = try await context.makeStore(configuration)
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            try await store.write { db in try db.execute("INSERT INTO \(ident: "events") VALUES (\(1), \("secret value"))") }
            let statements = logs.records.filter { $0.message == "statement" }
            try expect(statements.allSatisfy { $0.level == .debug }, "statements are logged at debug")
            guard let insert = statements.first(where: { "\($0.metadata["db.statement"] ?? "")".hasPrefix("INSERT") }) else {
                throw ConformanceFailure("the INSERT was not logged; logged: \(logs.records.map(\.message))")
            }
            try expect(insert.metadata["db.duration_ms"] != nil, "the INSERT's duration is logged")
            try expectEqual("\(insert.metadata["db.rows_changed"] ?? "")", "1", "rows changed by the INSERT")
            let everything = logs.records.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            try expect(!everything.contains("secret value"), "a bound value reached the log: \(everything)")

            var showing = Store.Configuration()
            showing.showsBoundValues = true
            let shownLogs = CapturedLogs()
            showing.logger = shownLogs.logger(level: .debug)
            let shown = try await context.makeStore(showing)
            _ = try await shown.read { db in try db.fetchOne(String.self, "SELECT \("shown value")") }
            try expect(shownLogs.records.contains { "\($0.metadata["db.values"] ?? "")".contains("shown value") },
                       "with showsBoundValues the values are logged")
        },
        ConformanceCheck("logging: rows changed is what a statement changed: 0 for a query on every engine") { context in
            let logs = CapturedLogs()
            var configuration = Store.Configuration()
            configuration.logger = logs.logger(level: .debug)
            let store = try await context.makeStore(configuration)
            try await store.write { db in
                try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")])
                try db.execute("INSERT INTO \(ident: "events") VALUES (1, 'a'), (2, 'b'), (3, 'c')")
                _ = try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: "events")")
                try db.execute("UPDATE \(ident: "events") SET \(ident: "name") = 'z' WHERE \(ident: "id") < 3")
            }
            let changed = logs.records.filter { $0.message == "statement" }.map { record in
                ("\(record.metadata["db.statement"] ?? "")".prefix(6).uppercased(), "\(record.metadata["db.rows_changed"] ?? "")")
            }
            try expectEqual(changed.filter { $0.0 == "INSERT" }.map(\.1), ["3"], "rows changed by the INSERT")
            try expectEqual(changed.filter { $0.0 == "SELECT" }.map(\.1), ["0"], "rows changed by the SELECT after it")
            try expectEqual(changed.filter { $0.0 == "UPDATE" }.map(\.1), ["2"], "rows changed by the UPDATE")
        },
        ConformanceCheck("logging: slow statements at warning; above debug nothing else; a per-access logger replaces the store's") { context in
            let logs = CapturedLogs()
            var configuration = Store.Configuration()
            configuration.logger = logs.logger(level: .info)
            configuration.slowStatementThreshold = .zero
            let store = try await context.makeStore(configuration)
            _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
            let messages = logs.records.map(\.message)
            try expect(messages.contains("slow statement"), "a statement past the threshold is logged: \(messages)")
            try expect(!messages.contains("statement"), "no debug statement at info: \(messages)")
            try expect(logs.records.filter { $0.message == "slow statement" }.allSatisfy { $0.level == .warning }, "slow statements at warning")

            let requestLogs = CapturedLogs()
            var request = requestLogs.logger(level: .debug)
            request[metadataKey: "request.id"] = "r-42"
            _ = try await store.read(logger: request) { db in try db.fetchOne(Int.self, "SELECT 2") }
            try expect(requestLogs.records.contains { $0.metadata["db.statement"] != nil && "\($0.metadata["request.id"] ?? "")" == "r-42" },
                       "the access's statements went to its own logger, with the request's metadata")

            let quiet = CapturedLogs()
            var silent = Store.Configuration()
            silent.logger = quiet.logger(level: .error)
            let silentStore = try await context.makeStore(silent)
            _ = try await silentStore.read { db in try db.fetchOne(Int.self, "SELECT 3") }
            try expectEqual(quiet.records.map(\.message), [], "records logged at error level")
        },
    ]
}

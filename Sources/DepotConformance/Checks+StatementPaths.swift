import Depot
import Foundation
import InMemoryTracing

/// Every way of running a statement takes one path: each read path wakes an
/// observation, and each statement is logged, traced and timed.
enum StatementPathChecks {
    /// A counter read through the generated column mapping.
    @Columns
    struct MappedCounter: Record, Equatable {
        static var tableName: String { "counters" }
        var id: Int64
        var value: Int
    }

    /// The same counter read through Codable alone.
    struct CodedCounter: Record, Equatable {
        static var tableName: String { "counters" }
        var id: Int64
        var value: Int
    }

    /// A row of a second table, for joins.
    @Columns
    struct Label: Record, Equatable {
        static var tableName: String { "labels" }
        var id: Int64
        var counterID: Int64
    }

    static let counterSQL: SQL = "SELECT \(ident: "value") FROM \(ident: "counters") WHERE \(ident: "id") = 1"
    static let rowSQL: SQL = "SELECT * FROM \(ident: "counters") WHERE \(ident: "id") = 1"

    /// Every public way of reading the counter inside an access, by name.
    static let readPaths: [(String, @Sendable (Database) throws -> Int)] = [
        ("fetchAll of a value", { db in try db.fetchAll(Int.self, counterSQL).first ?? -1 }),
        ("fetchOne of a value", { db in try db.fetchOne(Int.self, counterSQL) ?? -1 }),
        ("cursor of a value", { db in
            let cursor = try db.cursor(Int.self, counterSQL)
            return try cursor.next() ?? -1
        }),
        ("forEach of a value", { db in
            var last = -1
            try db.forEach(Int.self, counterSQL) { last = $0 }
            return last
        }),
        ("cursor of a Codable record", { db in try db.cursor(CodedCounter.self, rowSQL).next()?.value ?? -1 }),
        ("forEach of a Codable record", { db in
            var last = -1
            try db.forEach(CodedCounter.self, rowSQL) { last = $0.value }
            return last
        }),
        ("fetchAll of a @Columns record", { db in try db.fetchAll(MappedCounter.self, rowSQL).first?.value ?? -1 }),
        ("fetchOne of a @Columns record", { db in try db.fetchOne(MappedCounter.self, rowSQL)?.value ?? -1 }),
        ("forEach of a @Columns record", { db in
            var last = -1
            try db.forEach(MappedCounter.self, rowSQL) { last = $0.value }
            return last
        }),
        ("find of a Codable record", { db in try db.find(CodedCounter.self, id: 1)?.value ?? -1 }),
        ("find of a @Columns record", { db in try db.find(MappedCounter.self, id: 1)?.value ?? -1 }),
        ("fetchAll by ids", { db in try db.fetchAll(MappedCounter.self, ids: [Int64(1)]).first?.value ?? -1 }),
        ("query fetchAll", { db in try db.fetchAll(MappedCounter.where { $0.id.eq(1) }).first?.value ?? -1 }),
        ("query fetchOne", { db in try db.fetchOne(MappedCounter.where { $0.id.eq(1) })?.value ?? -1 }),
        ("query forEach", { db in
            var last = -1
            try db.forEach(MappedCounter.where { $0.id.eq(1) }) { last = $0.value }
            return last
        }),
        ("query fetchCount", { db in try db.fetchCount(MappedCounter.where { $0.value.eq(7) }) }),
        ("selection fetchOne", { db in try db.fetchOne(MappedCounter.where { $0.id.eq(1) }.select { $0.value }) ?? -1 }),
        ("join fetchAll", { db in
            try db.fetchAll(MappedCounter.all.join(Label.self) { counter, label in counter.id.eq(label.counterID) }).first?.0.value ?? -1
        }),
    ]

    /// A store with an observable counter at 0 and a label that joins it.
    static func counterStore(_ context: ConformanceContext, _ configuration: Store.Configuration = Store.Configuration()) async throws -> Store {
        let store = try await context.makeStore(configuration)
        try await store.write { db in
            try createTable(db, "counters", [("id", .integer, "PRIMARY KEY"), ("value", .integer, "NOT NULL")])
            try createTable(db, "labels", [("id", .integer, "PRIMARY KEY"), ("counterID", .integer, "NOT NULL")])
            try db.execute("INSERT INTO \(ident: "counters") VALUES (1, 0)")
            try db.execute("INSERT INTO \(ident: "labels") VALUES (1, 1)")
            try db.enableObservation(of: ["counters", "labels"])
        }
        return store
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("statement paths: an observation that reads through any read path wakes on a relevant commit") { context in
            let store = try await counterStore(context)
            var iterators: [(String, Observation<Int>.Iterator)] = []
            for (name, read) in readPaths {
                let iterator = store.observe { db in try read(db) }.makeAsyncIterator()
                let first = try await ObservationChecks.next(iterator, "\(name): the first value")
                try expectEqual(first, 0, "\(name): the first value")
                iterators.append((name, iterator))
            }
            try await store.write { db in
                try db.execute("UPDATE \(ident: "counters") SET \(ident: "value") = 7 WHERE \(ident: "id") = 1")
            }
            for (name, iterator) in iterators {
                // fetchCount counts the counters at 7: 0, then 1; every other path reads the value.
                // A commit may wake an observation more than once (the value again): wait for the new one.
                let expected = name == "query fetchCount" ? 1 : 7
                var next = try await ObservationChecks.next(iterator, "\(name): after the counter changed")
                var woken = 1
                while next == 0, woken < 5 {
                    next = try await ObservationChecks.next(iterator, "\(name): after the counter changed")
                    woken += 1
                }
                try expectEqual(next, expected, "\(name): the value after the counter changed")
            }
        },
        ConformanceCheck("statement paths: every way of running a statement is logged, traced and timed") { context in
            let logs = CapturedLogs()
            let tracer = InMemoryTracer()
            let metrics = CapturedMetrics()
            var configuration = Store.Configuration()
            configuration.logger = logs.logger(level: .debug)
            configuration.tracer = tracer
            configuration.metricsFactory = metrics
            let store = try await counterStore(context, configuration)

            var paths: [(String, @Sendable (Database) throws -> Void)] = readPaths.map { name, read in
                let run: @Sendable (Database) throws -> Void = { db in _ = try read(db) }
                return (name, run)
            }
            let writePaths: [(String, @Sendable (Database) throws -> Void)] = [
                ("execute", { db in _ = try db.execute("UPDATE \(ident: "counters") SET \(ident: "value") = 1 WHERE \(ident: "id") = 1") }),
                ("execute(script:)", { db in try db.execute(script: "UPDATE \(ident: "counters") SET \(ident: "value") = 2") }),
                ("insert of a record", { db in _ = try db.insert(MappedCounter(id: 10, value: 0)) }),
                ("update of a record", { db in try db.update(MappedCounter(id: 10, value: 1)) }),
                ("upsert of a record", { db in _ = try db.upsert(CodedCounter(id: 10, value: 2)) }),
                ("delete of a record", { db in _ = try db.delete(MappedCounter.self, id: 10) }),
                ("insert(contentsOf:) of Codable records", { db in
                    try db.insert(contentsOf: (20..<25).map { CodedCounter(id: Int64($0), value: 0) })
                }),
                ("insert(contentsOf:) of @Columns records", { db in
                    try db.insert(contentsOf: (30..<35).map { MappedCounter(id: Int64($0), value: 0) })
                }),
            ]
            paths += writePaths
            for (name, path) in paths {
                let before = (logs.records.count, tracer.finishedSpans.count, metrics.handlers("db.client.operation.duration").flatMap(\.values).count)
                try await store.write { db in try path(db) }
                let lines = logs.records.dropFirst(before.0).filter { $0.message == "statement" }
                try expect(!lines.isEmpty, "\(name): no statement was logged")
                try expect(lines.allSatisfy { $0.metadata["db.duration_ms"] != nil }, "\(name): a statement was logged without its duration")
                let spans = tracer.finishedSpans.dropFirst(before.1).filter { $0.operationName != "depot.write" }
                try expect(!spans.isEmpty, "\(name): no statement span")
                try expect(spans.allSatisfy { $0.attributes["db.query.text"] != nil }, "\(name): a statement span without its SQL")
                let timed = metrics.handlers("db.client.operation.duration").flatMap(\.values).count - before.2
                try expect(timed >= 1, "\(name): no statement duration recorded")
                try expectEqual(timed, lines.count, "\(name): statement durations recorded against statements logged")
            }
        },
    ]
}

import Depot
import Foundation
import InMemoryTracing
import Tracing

/// A span per access and per statement, with the database attributes and no values.
enum TracingChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("tracing: a span per access and per statement, children of the caller's, with the SQL and never its values") { context in
            let tracer = InMemoryTracer()
            var configuration = Store.Configuration()
            configuration.tracer = tracer
            let store = try await context.makeStore(configuration)
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            let request = tracer.startSpan("request")
            try await ServiceContext.withValue(request.context) {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "events") VALUES (\(1), \("secret value"))") }
                try await expectError(.unique, "a duplicate key") {
                    try await store.write { db in try db.execute("INSERT INTO \(ident: "events") VALUES (\(1), \("again"))") }
                }
            }
            request.end()
            let spans = tracer.finishedSpans
            let requestID = spans.first { $0.operationName == "request" }?.spanID
            let writes = spans.filter { $0.operationName == "depot.write" && $0.parentSpanID == requestID }
            try expectEqual(writes.count, 2, "write spans under the request")
            let system = store.dialect.engineName.lowercased()
            try expect(writes.allSatisfy { "\($0.attributes["db.system.name"].map { "\($0.toSpanAttribute())" } ?? "")".contains(system) },
                       "db.system.name is \(system): \(writes.map(\.attributes))")
            let inserts = spans.filter { $0.operationName == "INSERT" && writes.map(\.spanID).contains($0.parentSpanID ?? "") }
            try expectEqual(inserts.count, 2, "INSERT spans under the write spans")
            let text = inserts.map { "\($0.attributes)" }.joined(separator: "\n")
            try expect(text.contains("INSERT INTO"), "the statement's SQL is an attribute: \(text)")
            try expect(!text.contains("secret value"), "a bound value reached a span: \(text)")
            try expectEqual(inserts.filter { $0.status?.code == .error }.count, 1, "the failed INSERT's span is an error")
            try expectEqual(writes.filter { $0.status?.code == .error }.count, 1, "the failed write's span is an error")
        },
    ]
}

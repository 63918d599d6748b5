import CoreMetrics
import Depot
import Foundation

/// Records what a store sends through swift-metrics, for the metrics check.
final class CapturedMetrics: MetricsFactory, @unchecked Sendable {
    final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler, @unchecked Sendable {
        let label: String
        let dimensions: [String: String]
        private let lock = NSLock()
        private var recorded: [Double] = []
        var values: [Double] { lock.withLock { recorded } }

        init(label: String, dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = Dictionary(dimensions, uniquingKeysWith: { $1 })
        }

        private func add(_ value: Double) { lock.withLock { recorded.append(value) } }
        func increment(by amount: Int64) { add(Double(amount)) }
        func increment(by amount: Double) { add(amount) }
        func decrement(by amount: Double) { add(-amount) }
        func set(_ value: Int64) { add(Double(value)) }
        func set(_ value: Double) { add(value) }
        func record(_ value: Int64) { add(Double(value)) }
        func record(_ value: Double) { add(value) }
        func recordNanoseconds(_ duration: Int64) { add(Double(duration)) }
        func reset() {}
    }

    private let lock = NSLock()
    private var handlers: [Handler] = []

    func handlers(_ label: String) -> [Handler] { lock.withLock { handlers.filter { $0.label == label } } }

    private func make(_ label: String, _ dimensions: [(String, String)]) -> Handler {
        let handler = Handler(label: label, dimensions: dimensions)
        lock.withLock { handlers.append(handler) }
        return handler
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { make(label, dimensions) }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler { make(label, dimensions) }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { make(label, dimensions) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { make(label, dimensions) }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { make(label, dimensions) }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

/// Connections, waits, statement durations and errors by kind reach swift-metrics.
enum MetricsChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("metrics: connections, waits, statement durations and errors under OpenTelemetry's names") { context in
            let metrics = CapturedMetrics()
            var configuration = Store.Configuration()
            configuration.metricsFactory = metrics
            let store = try await context.makeStore(configuration)
            try await store.write { db in try createTable(db, "events", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")]) }
            try await store.write { db in try db.execute("INSERT INTO \(ident: "events") VALUES (\(1), \("a"))") }
            _ = try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: "events")") }
            try await expectError(.unique, "a duplicate key") {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "events") VALUES (\(1), \("b"))") }
            }
            let system = store.dialect.engineName.lowercased()
            // OpenTelemetry's names for database clients.
            let operations = metrics.handlers("db.client.operation.duration")
            let succeeded = operations.filter { $0.dimensions["error.type"] == nil }.flatMap(\.values)
            try expect(succeeded.count >= 3 && succeeded.allSatisfy { $0 >= 0 }, "statement durations recorded: \(succeeded)")
            try expect(operations.allSatisfy { $0.dimensions["db.system.name"] == system }, "db.system.name is \(system)")
            let failed = operations.filter { $0.dimensions["error.type"] == "unique" }.flatMap(\.values)
            try expectEqual(failed.count, 1, "the failed INSERT's duration, with error.type unique")
            try expect(metrics.handlers("db.client.connection.wait_time").flatMap(\.values).count >= 4, "a checkout wait per access")
            let counts = metrics.handlers("db.client.connection.count")
            try expect(counts.allSatisfy { $0.dimensions["db.client.connection.pool.name"] != nil }, "every count names its pool")
            try expect(counts.filter { $0.dimensions["db.client.connection.state"] == "used" }.flatMap(\.values).contains(0),
                       "connections used back to 0 after the accesses")
            try expect(counts.filter { $0.dimensions["db.client.connection.state"] == "idle" }.flatMap(\.values).contains { $0 >= 1 },
                       "idle connections reported")
            try expect(metrics.handlers("db.client.connection.max").flatMap(\.values).contains { $0 >= 1 }, "the pool's maximum reported")
            try expect(!metrics.handlers("db.client.connection.pending_requests").isEmpty, "pending requests reported")
            let errors = metrics.handlers("depot.errors").filter { $0.dimensions["error.type"] == "unique" }.flatMap(\.values)
            try expectEqual(errors, [1], "unique errors counted")
            try expect(metrics.handlers("depot.errors").allSatisfy { $0.dimensions["db.system.name"] == system }, "errors carry db.system.name")
        },
    ]
}

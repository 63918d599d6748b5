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
        ConformanceCheck("metrics: connections, checkout and statement durations, and errors by kind") { context in
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
            let statements = metrics.handlers("depot.statement.duration").flatMap(\.values)
            try expect(statements.count >= 3 && statements.allSatisfy { $0 >= 0 }, "statement durations recorded: \(statements)")
            try expect(metrics.handlers("depot.statement.duration").allSatisfy { $0.dimensions["db.system"] == system }, "db.system is \(system)")
            try expect(metrics.handlers("depot.checkout.duration").flatMap(\.values).count >= 4, "a checkout duration per access")
            try expect(metrics.handlers("depot.connections.open").flatMap(\.values).contains { $0 >= 1 }, "connections open reported")
            try expect(metrics.handlers("depot.connections.in_use").flatMap(\.values).contains(0), "connections in use back to 0 after the accesses")
            try expect(metrics.handlers("depot.connections.idle").flatMap(\.values).contains { $0 >= 1 }, "idle connections reported")
            let errors = metrics.handlers("depot.errors").filter { $0.dimensions["error.kind"] == "unique" }.flatMap(\.values)
            try expectEqual(errors, [1], "unique errors counted")
        },
    ]
}

import CoreMetrics
import Foundation

/// The metrics a store records through swift-metrics, when
/// ``Store/Configuration/metricsFactory`` is set, under OpenTelemetry's names
/// for database clients, so dashboards built for other clients show Depot.
/// Every metric carries `db.system.name` (`sqlite`, `postgresql`, `mariadb`);
/// pool metrics also `db.client.connection.pool.name` (`writer`, `reader`:
/// the store's own pools, not unique across stores).
///
/// | label | kind | what |
/// | --- | --- | --- |
/// | `db.client.operation.duration` | timer | each statement's run, rows read included; a failed one with `error.type` (its ``DatabaseError/Kind``) |
/// | `db.client.connection.count` | meter | connections open, by `db.client.connection.state`: `idle` or `used` |
/// | `db.client.connection.max` | meter | the most connections the pool opens |
/// | `db.client.connection.pending_requests` | meter | accesses waiting for a connection |
/// | `db.client.connection.wait_time` | timer | how long an access waited for its connection |
/// | `depot.errors` | counter | failed accesses, by `error.type` (Depot's own: OpenTelemetry names none) |
/// | `depot.write.retries` | counter | writes run again (``WriteRetry``), by the `error.type` of the attempt before |
///
/// Caveat: before these names, Depot recorded `depot.statement.duration`,
/// `depot.checkout.duration`, `depot.connections.open`, `.in_use`, `.idle` and
/// `depot.accesses.waiting`, with `db.system`; a dashboard on those needs the new names.
final class StoreMetrics: @unchecked Sendable {
    // Unchecked: the caches below are read and written under `lock`; the rest is immutable.
    let factory: any MetricsFactory
    let system: String
    let checkoutDuration: CoreMetrics.Timer
    private let statementDuration: CoreMetrics.Timer
    private let lock = NSLock()
    private var errors: [String: Counter] = [:]
    private var retries: [String: Counter] = [:]
    private var failedStatements: [String: CoreMetrics.Timer] = [:]

    init(factory: any MetricsFactory, engineName: String) {
        self.factory = factory
        system = engineName.lowercased()
        checkoutDuration = CoreMetrics.Timer(label: "db.client.connection.wait_time", dimensions: [("db.system.name", system)], factory: factory)
        statementDuration = CoreMetrics.Timer(label: "db.client.operation.duration", dimensions: [("db.system.name", system)], factory: factory)
    }

    /// The kind an error is counted under: a ``DatabaseError``'s kind, `cancelled`, or `other`.
    static func kind(of error: any Error) -> String {
        (error as? DatabaseError).map { "\($0.kind)" } ?? (error is CancellationError ? "cancelled" : "other")
    }

    /// Records one statement's duration, with the kind of its error when it failed.
    func statement(nanoseconds: Int, error: (any Error)?) {
        guard let error else {
            statementDuration.recordNanoseconds(Int64(nanoseconds))
            return
        }
        let kind = Self.kind(of: error)
        let timer = lock.withLock { () -> CoreMetrics.Timer in
            if let timer = failedStatements[kind] { return timer }
            let timer = CoreMetrics.Timer(label: "db.client.operation.duration", dimensions: [("db.system.name", system), ("error.type", kind)], factory: factory)
            failedStatements[kind] = timer
            return timer
        }
        timer.recordNanoseconds(Int64(nanoseconds))
    }

    /// Counts a failed access.
    func failed(_ error: any Error) {
        let kind = Self.kind(of: error)
        let counter = lock.withLock { () -> Counter in
            if let counter = errors[kind] { return counter }
            let counter = Counter(label: "depot.errors", dimensions: [("db.system.name", system), ("error.type", kind)], factory: factory)
            errors[kind] = counter
            return counter
        }
        counter.increment()
    }

    /// Counts a write run again after an error of this kind (``WriteRetry``).
    func retried(_ kind: String) {
        let counter = lock.withLock { () -> Counter in
            if let counter = retries[kind] { return counter }
            let counter = Counter(label: "depot.write.retries", dimensions: [("db.system.name", system), ("error.type", kind)], factory: factory)
            retries[kind] = counter
            return counter
        }
        counter.increment()
    }

    /// The meters of one pool, which opens at most `maxConnections`.
    func pool(_ role: ConnectionRole, maxConnections: Int) -> PoolMetrics {
        let dimensions = [("db.system.name", system), ("db.client.connection.pool.name", role == .writer ? "writer" : "reader")]
        let max = Meter(label: "db.client.connection.max", dimensions: dimensions, factory: factory)
        max.set(maxConnections)
        return PoolMetrics(
            used: Meter(label: "db.client.connection.count", dimensions: dimensions + [("db.client.connection.state", "used")], factory: factory),
            idle: Meter(label: "db.client.connection.count", dimensions: dimensions + [("db.client.connection.state", "idle")], factory: factory),
            max: max,
            waiting: Meter(label: "db.client.connection.pending_requests", dimensions: dimensions, factory: factory))
    }
}

/// One pool's meters.
struct PoolMetrics: Sendable {
    let used: Meter
    let idle: Meter
    let max: Meter
    let waiting: Meter
}

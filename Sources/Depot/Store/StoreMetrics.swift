import CoreMetrics
import Foundation

/// The metrics a store records through swift-metrics, when
/// ``Store/Configuration/metricsFactory`` is set. Every metric carries the
/// dimension `db.system` (`sqlite`, `postgresql`); pool metrics also `db.pool`
/// (`writer`, `reader`).
///
/// | label | kind | what |
/// | --- | --- | --- |
/// | `depot.connections.open` | meter | connections open (or opening) |
/// | `depot.connections.in_use` | meter | connections serving an access |
/// | `depot.connections.idle` | meter | connections open and free |
/// | `depot.accesses.waiting` | meter | accesses waiting for a connection |
/// | `depot.checkout.duration` | timer | how long an access waited for its connection |
/// | `depot.statement.duration` | timer | each statement's run, rows read included |
/// | `depot.errors` | counter | failed accesses, by `error.kind` |
final class StoreMetrics: @unchecked Sendable {
    let factory: any MetricsFactory
    let system: String
    let checkoutDuration: CoreMetrics.Timer
    let statementDuration: CoreMetrics.Timer
    private let lock = NSLock()
    private var errors: [String: Counter] = [:]

    init(factory: any MetricsFactory, engineName: String) {
        self.factory = factory
        system = engineName.lowercased()
        checkoutDuration = CoreMetrics.Timer(label: "depot.checkout.duration", dimensions: [("db.system", system)], factory: factory)
        statementDuration = CoreMetrics.Timer(label: "depot.statement.duration", dimensions: [("db.system", system)], factory: factory)
    }

    /// Counts a failed access.
    func failed(_ error: any Error) {
        let kind = (error as? DatabaseError).map { "\($0.kind)" } ?? (error is CancellationError ? "cancelled" : "other")
        let counter = lock.withLock { () -> Counter in
            if let counter = errors[kind] { return counter }
            let counter = Counter(label: "depot.errors", dimensions: [("db.system", system), ("error.kind", kind)], factory: factory)
            errors[kind] = counter
            return counter
        }
        counter.increment()
    }

    /// The meters of one pool.
    func pool(_ role: ConnectionRole) -> PoolMetrics {
        let dimensions = [("db.system", system), ("db.pool", role == .writer ? "writer" : "reader")]
        return PoolMetrics(
            open: Meter(label: "depot.connections.open", dimensions: dimensions, factory: factory),
            inUse: Meter(label: "depot.connections.in_use", dimensions: dimensions, factory: factory),
            idle: Meter(label: "depot.connections.idle", dimensions: dimensions, factory: factory),
            waiting: Meter(label: "depot.accesses.waiting", dimensions: dimensions, factory: factory))
    }
}

/// One pool's meters.
struct PoolMetrics: @unchecked Sendable {
    let open: Meter
    let inUse: Meter
    let idle: Meter
    let waiting: Meter
}

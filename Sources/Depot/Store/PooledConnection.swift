import Dispatch
import Foundation

/// A driver connection with its own serial queue and its statement cache.
///
/// Every use of the driver connection happens on `queue`, off Swift's
/// cooperative thread pool, so a blocking engine call never starves other tasks.
final class PooledConnection: @unchecked Sendable {
    let role: ConnectionRole
    private let queue: DispatchQueue
    // Touched only on `queue`.
    private let connection: any DriverConnection
    private var statements: [String: any DriverStatement] = [:]
    private var busyStatements: Set<ObjectIdentifier> = []
    private let statementCacheLimit = 512
    private var plans: [PlanKey: DecodePlan] = [:]
    /// The record operations' cache (its type and contents are theirs).
    let records = RecordCache()
    /// The query builder's cache.
    let queries = QueryCache()
    /// Column names of generated mappings under the store's key strategy.
    let columnNames = ColumnNamesCache()
    /// Every layer's cache, told when the schema may have changed.
    private var caches: [any ConnectionCache] { [records, queries, columnNames] }

    private struct PlanKey: Hashable {
        let columns: ObjectIdentifier
        let type: ObjectIdentifier
    }
    // Written on `queue`, read by the pool after `run` has returned.
    private(set) var isBroken = false

    /// The driver connection's observation parts, looked up once.
    let readTracking: (any ReadTrackingConnection)?
    let writeTracking: (any WriteTrackingConnection)?

    init(role: ConnectionRole, connection: any DriverConnection, label: String) {
        self.role = role
        self.connection = connection
        self.queue = DispatchQueue(label: label)
        self.readTracking = connection as? any ReadTrackingConnection
        self.writeTracking = connection as? any WriteTrackingConnection
    }

    /// Runs a closure on the connection's queue and waits for it without blocking a thread.
    func run<T>(_ body: @escaping (PooledConnection) -> T) async -> T {
        let body = Sendable1(body)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Sendable1<T>, Never>) in
            queue.async {
                continuation.resume(returning: Sendable1(body.value(self)))
            }
        }.value
    }

    /// Interrupts whatever statement runs now. Any thread.
    func interrupt() {
        connection.interrupt()
    }

    // MARK: On the queue

    var driver: any DriverConnection { connection }

    /// A prepared statement for this SQL: the cached one when it is free, a fresh one otherwise.
    func statement(_ sql: String) throws -> (any DriverStatement, cached: Bool) {
        if let cached = statements[sql], !busyStatements.contains(ObjectIdentifier(cached)) {
            return (cached, true)
        }
        let statement = try connection.prepare(sql)
        if statements[sql] == nil {
            if statements.count >= statementCacheLimit {
                statements.removeAll(keepingCapacity: true)
                plans.removeAll(keepingCapacity: true)
            }
            statements[sql] = statement
            return (statement, true)
        }
        return (statement, false)
    }

    /// The plan for decoding rows with these columns into a type. It holds the
    /// column set, so the set's identity cannot be reused while the plan is cached.
    func plan(columns: ColumnSet, type: Any.Type, options: DecodingOptions) -> DecodePlan {
        let key = PlanKey(columns: ObjectIdentifier(columns), type: ObjectIdentifier(type))
        if let plan = plans[key] { return plan }
        if plans.count >= 4 * statementCacheLimit { plans.removeAll(keepingCapacity: true) }
        let plan = DecodePlan(columns: columns, options: options, type: type)
        plans[key] = plan
        return plan
    }

    /// Forgets what DDL may have changed: the prepared statements (PostgreSQL
    /// refuses to run a cached plan whose result types changed) and what each
    /// layer's cache says it must.
    func forgetSchemaFacts() {
        statements.removeAll(keepingCapacity: true)
        for cache in caches { cache.schemaMayHaveChanged() }
    }

    func markBusy(_ statement: any DriverStatement) { busyStatements.insert(ObjectIdentifier(statement)) }
    func markFree(_ statement: any DriverStatement) { busyStatements.remove(ObjectIdentifier(statement)) }

    func checkHealth() {
        if !connection.isUsable {
            isBroken = true
        } else if connection.wantsReplacement, !connection.isInTransaction {
            isRetired = true
        }
    }

    /// Healthy, but the driver asked for a fresh connection in its place.
    private(set) var isRetired = false

    func markBroken() { isBroken = true }

    func close() {
        statements.removeAll()
        plans.removeAll()
        connection.close()
    }
}

/// What a layer keeps on each connection (rendered SQL, schema facts): the
/// layer defines and fills it, the connection holds it and drops it with itself.
protocol ConnectionCache: AnyObject {
    /// Forgets what a schema change (DDL on this connection) may have made wrong.
    func schemaMayHaveChanged()
}

/// Carries a value across the continuation: it is handed over, never shared.
struct Sendable1<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

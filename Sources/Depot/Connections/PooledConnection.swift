import Dispatch
import Foundation

/// A driver connection with its own serial queue and its statement cache.
///
/// Every use of the driver connection happens on `queue`, off Swift's
/// cooperative thread pool, so a blocking engine call never starves other
/// tasks; the one exception is a read on a connection whose reads never
/// wait (``readsNeverWait``), which may run on its caller's thread.
final class PooledConnection: @unchecked Sendable {
    // Unchecked: the driver connection and the caches are touched by one
    // access at a time: on `queue`, or on the thread of the task that took the
    // connection from its pool for a read (the pool's lock orders one holder
    // before the next); the thread sanitizer run (`scripts/test --sanitize-thread`) covers both.
    let role: ConnectionRole
    private let queue: DispatchQueue
    // Touched only on `queue`, one access at a time.
    private let connection: any DriverConnection
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, lookup
    // through @Columns: 24.45M instructions with the checks of this group (PooledConnection, Database,
    // RecordCache, QueryCache, ColumnNamesCache, SQLiteStatement, SQLiteConnection), 23.77M without.
    @exclusivity(unchecked) private var statements: [String: CachedStatement] = [:]
    private let statementCacheLimit = 512
    @exclusivity(unchecked) private var plans: [PlanKey: DecodePlan] = [:]
    /// The statement found last, and its SQL: a statement run again and again
    /// (a lookup in a loop, `find`, a declared query, whose text is the same
    /// string each time) is found by comparing the text, not hashing it.
    /// (Two fields, not an optional tuple: comparing the text then reads
    /// them in place, where a tuple was copied out, retains and all.)
    @exclusivity(unchecked) private var lastStatementSQL = ""
    @exclusivity(unchecked) private var lastStatement: CachedStatement?
    /// The plan found last, for the same reason.
    @exclusivity(unchecked) private var lastPlan: (key: PlanKey, plan: DecodePlan)?
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
    @exclusivity(unchecked) private(set) var isBroken = false

    /// What stops the access running on this connection; reset for each.
    let cancellation: CancellationFlag
    /// The hand-off from `queue` to the awaiting task, as the thread sanitizer sees it.
    private let fence = SanitizerFence()

    /// The driver connection's observation parts, looked up once.
    let readTracking: (any ReadTrackingConnection)?
    let writeTracking: (any WriteTrackingConnection)?
    /// The driver's word that a read here never waits
    /// (``DriverConnection/readsNeverWait``), asked once: such a read may
    /// run on the calling task's thread.
    let readsNeverWait: Bool

    init(role: ConnectionRole, connection: any DriverConnection, label: String) {
        self.role = role
        self.connection = connection
        self.queue = DispatchQueue(label: label)
        self.cancellation = CancellationFlag(connection)
        self.readTracking = connection as? any ReadTrackingConnection
        self.writeTracking = connection as? any WriteTrackingConnection
        self.readsNeverWait = connection.readsNeverWait
    }

    /// Runs a closure on the connection's queue and waits for it without blocking a thread.
    ///
    /// The continuation is resumed exactly once, by the block the queue runs,
    /// so the unchecked kind is used: the checked one allocates a canary per access.
    func run<T>(_ body: @escaping (PooledConnection) -> T) async -> T {
        let body = Sendable1(body)
        let fence = self.fence
        let result = await withUnsafeContinuation { (continuation: UnsafeContinuation<Sendable1<T>, Never>) in
            queue.async {
                let value = Sendable1(body.value(self))
                fence.publish()
                continuation.resume(returning: value)
            }
        }.value
        fence.observe()
        return result
    }

    /// Runs an access's transaction on the connection's queue, as ``run(_:)``
    /// does, with one block for the hop: the `Database` made for the access
    /// is already the object to hand over.
    func perform(_ db: Sendable1<Database>) async -> Database.Outcome {
        let fence = self.fence
        let outcome = await withUnsafeContinuation { (continuation: UnsafeContinuation<Database.Outcome, Never>) in
            queue.async {
                let outcome = db.value.runAccess()
                fence.publish()
                continuation.resume(returning: outcome)
            }
        }
        fence.observe()
        return outcome
    }

    /// Interrupts whatever statement runs now. Any thread.
    func interrupt() {
        connection.interrupt()
    }

    // MARK: On the queue

    var driver: any DriverConnection { connection }

    /// A prepared statement for this SQL: the cached one when it is free (its
    /// entry is returned, to be marked busy while it runs), a fresh one otherwise.
    func statement(_ sql: String) throws -> (any DriverStatement, cached: CachedStatement?) {
        if let last = lastStatement, !last.isBusy, lastStatementSQL == sql {
            return (last.statement, last)
        }
        if let cached = statements[sql], !cached.isBusy {
            lastStatementSQL = sql
            lastStatement = cached
            return (cached.statement, cached)
        }
        let statement = try connection.prepare(sql)
        if statements[sql] == nil {
            if statements.count >= statementCacheLimit {
                forgetStatements()
                plans.removeAll(keepingCapacity: true)
                lastPlan = nil
            }
            let entry = CachedStatement(statement)
            statements[sql] = entry
            lastStatementSQL = sql
            lastStatement = entry
            return (statement, entry)
        }
        return (statement, nil)
    }

    /// The plan for decoding rows with these columns into a type. It holds the
    /// column set, so the set's identity cannot be reused while the plan is cached.
    func plan(columns: ColumnSet, type: Any.Type, options: @autoclosure () -> DecodingOptions) -> DecodePlan {
        let key = PlanKey(columns: ObjectIdentifier(columns), type: ObjectIdentifier(type))
        if let last = lastPlan, last.key == key { return last.plan }
        if let plan = plans[key] {
            lastPlan = (key, plan)
            return plan
        }
        if plans.count >= 4 * statementCacheLimit { plans.removeAll(keepingCapacity: true) }
        let plan = DecodePlan(columns: columns, options: options(), type: type)
        plans[key] = plan
        lastPlan = (key, plan)
        return plan
    }

    /// Empties the statement cache. A statement still running keeps its entry
    /// and is finalized when the run lets it go.
    private func forgetStatements() {
        statements.removeAll(keepingCapacity: true)
        lastStatement = nil
        lastStatementSQL = ""
    }

    /// Forgets what DDL may have changed: the prepared statements (PostgreSQL
    /// refuses to run a cached plan whose result types changed) and what each
    /// layer's cache says it must.
    func forgetSchemaFacts() {
        forgetStatements()
        for cache in caches { cache.schemaMayHaveChanged() }
    }


    func checkHealth() {
        if !connection.isUsable {
            markBroken("the driver found it unusable")
        } else if connection.wantsReplacement, !connection.isInTransaction {
            isRetired = true
        }
    }

    /// Healthy, but the driver asked for a fresh connection in its place.
    @exclusivity(unchecked) private(set) var isRetired = false

    /// Why the connection broke, for the log and for the error of a store
    /// whose database lived in it (no bound value: the library's own words).
    @exclusivity(unchecked) private(set) var brokenBecause: String?

    func markBroken(_ reason: String) {
        if !isBroken { brokenBecause = reason }
        isBroken = true
    }

    func close() {
        statements.removeAll()
        lastStatement = nil
        lastStatementSQL = ""
        plans.removeAll()
        lastPlan = nil
        connection.close()
    }
}

/// A statement in a connection's cache, and whether a run holds it now (a
/// cursor left open, or a statement run while another one steps): a busy
/// statement is not handed out again, a fresh one is prepared instead.
final class CachedStatement {
    let statement: any DriverStatement
    /// Set and cleared on the connection's queue only.
    @exclusivity(unchecked) var isBusy = false

    init(_ statement: any DriverStatement) {
        self.statement = statement
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
    // Unchecked: the value goes from the thread that made it to the task that
    // resumes, and neither touches it after the hand-over.
    let value: T
    init(_ value: T) { self.value = value }
}

import CoreMetrics
import Dispatch
import Foundation
import Logging
import Tracing

extension Store {
    /// Runs one access and returns what `body` returns.
    ///
    /// The result type is erased here, at once: the access's machinery (the
    /// continuation, the result carried back from the connection's queue, the
    /// transaction) is then compiled for `Void`, where a generic result type
    /// made the runtime look up the metadata of each generic type it touched,
    /// on every access. `body`'s value goes into memory this call owns.
    ///
    /// `mayRunOnCallingThread: false` keeps a read on its connection's queue
    /// whatever the store's settings: a closure that blocks (a stream's, which
    /// waits for its consumer) must never hold a cooperative thread.
    func access<T: Sendable>(_ kind: TransactionKind, isolation: IsolationLevel?, route: ReadRoute, logger: Logger? = nil,
                             recorder: ReadRecorder? = nil, position: PositionBox? = nil, attempt: Int = 1,
                             mayRunOnCallingThread: Bool = true,
                             _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let result = AccessResult<T>.make(body)
        try await accessReturningNothing(kind, isolation: isolation, route: route, logger: logger, recorder: recorder,
                                         position: position, attempt: attempt,
                                         onCallingThread: kind == .read && mayRunOnCallingThread && settings.readsRunOnCallingThread,
                                         Sendable1(result))
        return try result.take()
    }

    /// The one path of every access: admission, a connection, the transaction
    /// on the connection's queue, cancellation and deadline, retry, release.
    ///
    /// Its common case (an idle connection, no deadline, nothing logged,
    /// traced or measured) costs two thread hops and a few short critical
    /// sections: settings are read from the shared ``StoreSettings`` without
    /// copying the configuration, and taking and returning an idle connection
    /// are synchronous. A read that may run on the calling thread
    /// (`onCallingThread`), on a connection whose reads never wait, makes no
    /// hop at all: the connection, taken from its pool, is this task's alone
    /// until it is given back, as it would be its queue's.
    private func accessReturningNothing(_ kind: TransactionKind, isolation: IsolationLevel?, route: ReadRoute, logger: Logger?,
                                        recorder: ReadRecorder?, position: PositionBox?, attempt writeAttempt: Int,
                                        onCallingThread: Bool, _ body: Sendable1<any AccessBody>) async throws {
        let settings = self.settings
        // Where the access runs, and what a replica must have applied first.
        let pool: ConnectionPool
        var replay: (CommitPosition, Duration)?
        switch (kind, route.target) {
        case (.write, _):
            pool = writers
        case (.read, .primary):
            // Without replicas every reader sees the primary: keep reads off the writer.
            pool = replicaReaders == nil ? readers : writers
        case (.read, .automatic):
            pool = readers
            if replicaReaders != nil, let timeout = settings.readYourWritesTimeout, let latest = commits.latest {
                replay = (latest, timeout)
            }
        case (.read, .caughtUp(let target, let timeout)):
            pool = readers
            if replicaReaders != nil {
                // A store that reads its writes waits for them on every replica route.
                let latest = settings.readYourWritesTimeout == nil ? nil : commits.latest
                replay = (max(target, latest ?? target), timeout)
            }
        }
        // A store with replicas tracks its writes' positions, for reads that must see them.
        let tracksPosition = position != nil || (kind == .write && replicaReaders != nil)
        let positionBox = tracksPosition ? position ?? PositionBox() : nil
        let log = if let logger { AccessLog(logger, settings: settings) } else { settings.log }
        try gate.enter()
        // Until the attempt that returns has left the gate itself.
        var inGate = true
        defer { if inGate { gate.leave(detaching: nil) } }
        let tracing = if let tracer = settings.tracer { AccessTracing.start(tracer, kind: kind, engineName: dialect.engineName, attempt: writeAttempt) } else { nil as AccessTracing? }
        var accessError: (any Error)?
        defer { tracing?.end(error: accessError) }
        // A pooled connection may have died while idle (a server restart): when
        // it fails before the closure ran, nothing was done, so retry once on a fresh one.
        var attempt = 0
        while true {
            attempt += 1
            // A task cancelled already takes no connection (the cancellation
            // handler below would stop it before BEGIN, but only after a
            // checkout, a hop and, on PostgreSQL, a cancel request sent for nothing).
            try Task.checkCancellation()
            let checkoutStart = metrics == nil ? nil : ContinuousClock.now
            let connection: PooledConnection
            if let idle = pool.takeIdle() {
                connection = idle
            } else {
                do {
                    connection = try await pool.acquire(timeout: settings.checkoutTimeout)
                } catch {
                    metrics?.failed(error)
                    accessError = error
                    throw error
                }
            }
            if let metrics, let checkoutStart {
                metrics.checkoutDuration.recordNanoseconds((ContinuousClock.now - checkoutStart).saturatingNanoseconds)
            }
            let cancellation = connection.cancellation
            let generation = cancellation.begin(beforeStatement: settings.beforeStatementStarts)
            gate.attach(cancellation)
            let deadline = settings.accessTimeout.map { timeout in
                let work = DispatchWorkItem { cancellation.timeOut(timeout, generation) }
                OffPool.run("depot.deadline", after: timeout, work)
                return work
            }
            let db = Database(connection: connection, dialect: dialect, settings: settings, cancellation: cancellation,
                              log: log, metrics: metrics, tracing: tracing, readRecorder: recorder,
                              observers: observers, tracksCommitPosition: tracksPosition, replayTarget: replay,
                              access: Database.Access(kind: kind, isolation: isolation, body: body.value, positionBox: positionBox))
            let outcome = if onCallingThread && connection.readsNeverWait {
                await withTaskCancellationHandler {
                    db.runAccess()
                } onCancel: {
                    cancellation.cancel(generation)
                }
            } else {
                await withTaskCancellationHandler {
                    await connection.perform(Sendable1(db))
                } onCancel: {
                    cancellation.cancel(generation)
                }
            }
            deadline?.cancel()
            let (result, bodyStarted) = (outcome.result, outcome.bodyStarted)
            let retries = if case .failure(let error as DatabaseError) = result, error.kind == .connection, !bodyStarted, attempt == 1 { true } else { false }
            // Off the running list before the connection (and its flag) can
            // serve another access. An attempt that ends the access leaves the
            // gate at the same time: a shutdown waiting for it may then close
            // the pools, and the connection given back below is closed too.
            if retries {
                gate.detach(cancellation)
            } else {
                gate.leave(detaching: cancellation)
                inGate = false
            }
            if !pool.giveBack(connection) { await pool.release(connection) }
            if retries { continue }
            if case .failure(let error) = result {
                metrics?.failed(error)
                accessError = error
            }
            if let committed = positionBox?.position { commits.note(committed) }
            return try result.get()
        }
    }
}

extension Database {
    /// The access a `Database` was made for: its transaction, its closure,
    /// and where a write's commit position goes. One object (the `Database`)
    /// is handed to the connection's queue, instead of a closure capturing a
    /// dozen values.
    struct Access {
        let kind: TransactionKind
        let isolation: IsolationLevel?
        let body: any AccessBody
        let positionBox: PositionBox?
    }

    /// The attempt's outcome, and whether the closure started (before it, a
    /// connection failure changed nothing, and the access may try again).
    struct Outcome: Sendable {
        let result: Result<Void, any Error>
        let bodyStarted: Bool
    }

    /// On the connection's queue: the transaction around the access's closure.
    func runAccess() -> Outcome {
        defer { invalidate() }
        let body = access.body
        let result = Result { try inTransaction(access.kind, isolation: access.isolation) { try body.run($0) } }
        // From here on, a deadline that fires interrupts nothing.
        cancellation.finish()
        connection.checkHealth()
        if let positionBox = access.positionBox { positionBox.position = commitPosition }
        return Outcome(result: result, bodyStarted: bodyStarted)
    }
}

/// What an access runs on its connection: the caller's closure, its value kept.
protocol AccessBody: AnyObject {
    /// Runs the closure on `db` and keeps what it returns.
    func run(_ db: Database) throws
}

/// The closure of an access with a result of type `T`, and where its value
/// goes: memory for one `T` in the object itself, written on the connection's
/// queue before the access's continuation resumes, read by the awaiting task
/// after it. One allocation per access, and no generic storage the runtime
/// must describe (an optional of `T` would be).
final class AccessResult<T>: ManagedBuffer<AccessResult<T>.Header, T>, AccessBody {
    struct Header {
        let body: @Sendable (Database) throws -> T
        var holdsValue = false
    }

    /// An empty result for `body`.
    static func make(_ body: @escaping @Sendable (Database) throws -> T) -> AccessResult<T> {
        unsafeDowncast(create(minimumCapacity: 1) { _ in Header(body: body) }, to: AccessResult<T>.self)
    }

    /// Runs the closure and keeps its value. Called at most once per access
    /// that succeeds; a retried access runs it again only when the first try
    /// never started it.
    func run(_ db: Database) throws {
        let value = try header.body(db)
        withUnsafeMutablePointers { header, slot in
            if header.pointee.holdsValue { slot.deinitialize(count: 1) }
            slot.initialize(to: value)
            header.pointee.holdsValue = true
        }
    }

    /// Moves the value out. The access succeeded, so the closure stored one;
    /// were it not so, an error rather than memory never written.
    func take() throws -> T {
        try withUnsafeMutablePointers { header, slot in
            guard header.pointee.holdsValue else { throw DatabaseError(.other, "the access finished without its closure's value") }
            header.pointee.holdsValue = false
            return slot.move()
        }
    }

    /// Destroys a value the access stored but did not return (its commit
    /// failed after the closure returned).
    deinit {
        withUnsafeMutablePointers { header, slot in
            if header.pointee.holdsValue { slot.deinitialize(count: 1) }
        }
    }
}

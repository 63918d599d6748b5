import CoreMetrics
import Foundation
import Logging
import Tracing

/// What an app holds: a database, whatever the engine, that runs your reads and writes.
///
/// ```swift
/// let store = try Store.sqlite(at: "reminders.sqlite")      // DepotSQLite
/// try await store.write { db in
///     try db.insert(RemindersList(title: "Groceries"))
/// }
/// let lists = try await store.read { db in
///     try db.fetchAll(RemindersList.self, "SELECT * FROM lists ORDER BY position, id")
/// }
/// ```
///
/// Each access runs its closure synchronously on one connection, on that
/// connection's own thread:
/// - ``write(logger:_:)`` is one transaction: it commits when the closure returns and
///   rolls back when the closure throws or the task is cancelled. Writes run one
///   at a time on SQLite.
/// - ``read(from:logger:_:)`` sees one consistent snapshot and cannot write. On SQLite in WAL
///   mode and on PostgreSQL, reads run while a write is in progress.
///
/// Caveat: do not start another access of the same store from inside a closure
/// (it would wait for a connection the closure holds); use the `db` you were given.
public final class Store: Sendable {
    /// Settings shared by every backend.
    public struct Configuration: Sendable {
        /// How records and bound values are encoded.
        public var encoder = RowEncoder()
        /// How rows are decoded.
        public var decoder = RowDecoder()
        /// Whether errors show the values a failed statement bound. Off by
        /// default: values may hold personal data that must not reach logs.
        public var showsBoundValues = false
        /// How long an access waits for a free connection before failing with a `timeout` error.
        public var checkoutTimeout: Duration = .seconds(30)
        /// Where the store logs: statements at `debug` (their SQL and duration,
        /// never their values unless ``showsBoundValues``), slow statements at
        /// `warning`, scripts such as `BEGIN` at `trace`, connections opened at
        /// `info` and broken ones at `notice`. By default a logger that drops
        /// everything; a logger whose level drops `debug` costs a statement nothing.
        ///
        /// ```swift
        /// configuration.logger = Logger(label: "reminders.db")
        /// ```
        public var logger = Logger(label: "depot", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Where the store records its metrics (connections open, in use and
        /// awaited, checkout and statement durations, errors by kind; see the
        /// labels in `StoreMetrics`): `MetricsSystem.factory` for the backend the
        /// app bootstrapped. Nil, the default, records nothing and costs nothing.
        public var metricsFactory: (any MetricsFactory)?
        /// The tracer of the store's spans: one per access (a child of the
        /// caller's span) and one per statement, with OpenTelemetry's database
        /// attributes and the SQL without its values. `InstrumentationSystem.tracer`
        /// for the one the app bootstrapped. Nil, the default, makes no span.
        public var tracer: (any Tracer)?
        /// Statements that run at least this long are logged at `warning`. Nil: none.
        public var slowStatementThreshold: Duration? = .seconds(1)
        /// Whether an access that cannot open a connection because the server is
        /// unreachable (not started yet, restarting) tries again until
        /// ``checkoutTimeout`` has passed, rather than failing at once. Off by
        /// default. On PostgreSQL it also lets the store be created while the
        /// server is down.
        ///
        /// Caveat: a wrong password or database name fails the same way as an
        /// unreachable server, so those accesses fail only after the checkout timeout.
        public var waitsForServer = false
        /// The longest an access may run, from when it has its connection: past
        /// it, the statement running is interrupted (a cancel request on
        /// PostgreSQL, `sqlite3_interrupt` on SQLite), the access fails with a
        /// `timeout` error, its transaction rolls back, and the connection is
        /// clean for the next access. Nil (the default) sets no limit.
        ///
        /// Caveat: Swift code in the closure is not interrupted; the next
        /// statement it runs fails at once. A read that first waits for a
        /// replica to catch up (``readYourWritesTimeout``,
        /// ``ReadRoute/replica(caughtUpWith:timeout:)``) spends its wait
        /// within this limit too.
        public var accessTimeout: Duration?
        /// Whether types marked ``Columns()`` are read and written through their
        /// generated, positional mapping. On by default. The mapping means what
        /// the type's `Codable` conformance means; turn it off to compare the two.
        public var usesGeneratedMapping = true
        /// On a store with replicas: how long a read routed to a replica
        /// (``ReadRoute/automatic``) first waits for the replica to apply every
        /// write this store committed, so that the store reads its own writes.
        /// Nil (the default): a replica read sees what the replica has applied,
        /// which may lag behind the primary. Past the wait, the read fails with a
        /// `timeout` error. Stores without replicas always read their own writes.
        ///
        /// Caveat: "this store's writes" are those of every task sharing the
        /// store; another process's writes are not waited for (pass their
        /// ``CommitPosition`` with ``ReadRoute/replica(caughtUpWith:timeout:)``).
        public var readYourWritesTimeout: Duration?

        /// The default configuration.
        public init() {}
    }

    /// The engine's dialect: its placeholders, quoting and column types.
    public let dialect: any SQLDialect
    /// This store's settings.
    public var configuration: Configuration { settings.configuration }
    /// The configuration, shared by reference with every access's `Database`.
    let settings: StoreSettings
    private let writers: ConnectionPool
    private let readers: ConnectionPool
    /// The replicas' readers, when the store has replicas (then `readers` is this pool).
    let replicaReaders: ConnectionPool?
    /// The newest commit position of this store's writes, when they are tracked.
    let commits = CommitTracker()
    /// The coders' options, computed once rather than per record.
    private let codingOptions: CodingOptions
    /// The accesses in flight, for ``shutdown(gracePeriod:)``.
    let gate = AccessGate()
    /// What the store measures, when it measures.
    let metrics: StoreMetrics?
    /// The driver, for another store on the same database (the conformance suite's).
    @_spi(Driver) public let driver: any DatabaseDriver
    /// The live observations, and what tells them about commits.
    let observers: ObservationCenter
    let changeMonitor: ChangeMonitor

    /// Creates a store over a backend's driver. Backends call this from their
    /// own constructors, such as `Store.sqlite(at:)`.
    public init(driver: some DatabaseDriver, configuration: Configuration = Configuration()) {
        self.dialect = driver.dialect
        self.settings = StoreSettings(configuration)
        let metrics = configuration.metricsFactory.map { StoreMetrics(factory: $0, engineName: driver.dialect.engineName) }
        self.metrics = metrics
        var encoding = configuration.encoder.options, decoding = configuration.decoder.options
        encoding.usesGeneratedMapping = configuration.usesGeneratedMapping
        decoding.usesGeneratedMapping = configuration.usesGeneratedMapping
        self.codingOptions = CodingOptions(encoding: encoding, keyStrategy: configuration.encoder.keyStrategy, decoding: decoding)
        self.driver = driver
        let monitor = ChangeMonitor(driver: driver)
        self.changeMonitor = monitor
        self.observers = ObservationCenter(onActive: { [monitor] _ in monitor.update() })
        let open: @Sendable (ConnectionRole) throws -> any DriverConnection = { try driver.openConnection($0) }
        let label = "depot.\(driver.dialect.engineName.lowercased())"
        switch driver.poolLayout {
        case .single:
            writers = ConnectionPool(role: .writer, maxConnections: 1, label: label, waitsForServer: configuration.waitsForServer, logger: configuration.logger, metrics: metrics, open: open)
            readers = writers
        case .oneWriter(let readerCount):
            writers = ConnectionPool(role: .writer, maxConnections: 1, label: label + ".writer", waitsForServer: configuration.waitsForServer, logger: configuration.logger, metrics: metrics, open: open)
            readers = ConnectionPool(role: .reader, maxConnections: readerCount, label: label + ".reader", waitsForServer: configuration.waitsForServer, logger: configuration.logger, metrics: metrics, open: open)
        case .shared(let max):
            writers = ConnectionPool(role: .writer, maxConnections: max, label: label, waitsForServer: configuration.waitsForServer, logger: configuration.logger, metrics: metrics, open: open)
            readers = writers
        case .primaryAndReplicas(let primary, let replicas):
            writers = ConnectionPool(role: .writer, maxConnections: primary, label: label + ".primary", waitsForServer: configuration.waitsForServer, logger: configuration.logger, metrics: metrics, open: open)
            readers = ConnectionPool(role: .reader, maxConnections: replicas, label: label + ".replica", waitsForServer: configuration.waitsForServer, logger: configuration.logger, metrics: metrics, open: open)
        }
        if case .primaryAndReplicas = driver.poolLayout { replicaReaders = readers } else { replicaReaders = nil }
        monitor.store = self
    }

    /// Runs a read-only transaction and returns what the closure returns.
    ///
    /// `route` says where a store with replicas runs the read: a replica by
    /// default (see ``ReadRoute``); a store without replicas ignores it.
    /// `logger`, when given, replaces the store's for this access: a request's
    /// logger, so its statements carry the request's metadata.
    ///
    /// - Throws: what the closure throws, a ``DatabaseError``, or
    ///   `CancellationError` when the task is cancelled.
    @discardableResult
    public func read<T: Sendable>(from route: ReadRoute = .automatic, logger: Logger? = nil, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await access(.read, isolation: nil, route: route, logger: logger, body)
    }

    /// Runs a write transaction: commits when the closure returns, rolls back
    /// when it throws or when the task is cancelled.
    ///
    /// ```swift
    /// let saved = try await store.write { db in try db.insert(reminder) }
    /// ```
    ///
    /// `logger`, when given, replaces the store's for this access.
    @discardableResult
    public func write<T: Sendable>(logger: Logger? = nil, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await access(.write, isolation: nil, route: .primary, logger: logger, body)
    }

    /// Runs a write transaction at an isolation level (see ``IsolationLevel``).
    ///
    /// ```swift
    /// try await store.write(isolation: .serializable) { db in ... }
    /// ```
    @discardableResult
    public func write<T: Sendable>(isolation: IsolationLevel, logger: Logger? = nil, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await access(.write, isolation: isolation, route: .primary, logger: logger, body)
    }

    /// Closes every connection. Accesses after this fail with a `connection` error.
    public func close() async {
        changeMonitor.stop()
        await writers.close()
        if readers !== writers { await readers.close() }
    }

    /// A read that records the tables its statements read, for an observation.
    /// It runs on the primary: the commits an observation hears of are the
    /// primary's, and a replica may not have applied them yet.
    func read<T: Sendable>(recording recorder: ReadRecorder, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await access(.read, isolation: nil, route: .primary, recorder: recorder, body)
    }

    /// The writer's count of other connections' commits, for SQLite's observation of other processes.
    func externalChangeCounter() async throws -> Int64? {
        let connection = try await writers.acquire(timeout: configuration.checkoutTimeout)
        let counter = await connection.run { connection in Result { try connection.writeTracking?.externalChangeCounter() } }
        await writers.release(connection)
        return try counter.get()
    }

    /// Whether the store reads and writes on one connection (an in-memory SQLite database): no one else can write.
    var isSingleConnection: Bool { writers === readers && writers.maxConnections == 1 }

    /// Runs one access and returns what `body` returns.
    ///
    /// The result type is erased here, at once: the access's machinery (the
    /// continuation, the result carried back from the connection's queue, the
    /// transaction) is then compiled for `Void`, where a generic result type
    /// made the runtime look up the metadata of each generic type it touched,
    /// on every access. `body`'s value goes into memory this call owns.
    func access<T: Sendable>(_ kind: TransactionKind, isolation: IsolationLevel?, route: ReadRoute, logger: Logger? = nil,
                             recorder: ReadRecorder? = nil, position: PositionBox? = nil,
                             _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let result = AccessResult<T>()
        defer { result.discard() }
        try await accessReturningNothing(kind, isolation: isolation, route: route, logger: logger, recorder: recorder, position: position) { db in
            result.store(try body(db))
        }
        return try result.take()
    }

    private func accessReturningNothing(_ kind: TransactionKind, isolation: IsolationLevel?, route: ReadRoute, logger: Logger?,
                                        recorder: ReadRecorder?, position: PositionBox?,
                                        _ body: @escaping @Sendable (Database) throws -> Void) async throws {
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
            if replicaReaders != nil, let timeout = configuration.readYourWritesTimeout, let latest = commits.latest {
                replay = (latest, timeout)
            }
        case (.read, .caughtUp(let target, let timeout)):
            pool = readers
            if replicaReaders != nil {
                // A store that reads its writes waits for them on every replica route.
                let latest = configuration.readYourWritesTimeout == nil ? nil : commits.latest
                replay = (max(target, latest ?? target), timeout)
            }
        }
        // A store with replicas tracks its writes' positions, for reads that must see them.
        let tracksPosition = position != nil || (kind == .write && replicaReaders != nil)
        let positionBox = tracksPosition ? position ?? PositionBox() : nil
        let log = AccessLog(logger ?? configuration.logger, configuration: configuration)
        let ticket = try gate.enter()
        defer { gate.leave(ticket) }
        let traced = AccessTracing.start(configuration.tracer, kind: kind, engineName: dialect.engineName)
        let tracing = traced?.0
        var accessError: (any Error)?
        defer {
            if let span = traced?.1 {
                if let accessError {
                    span.recordError(accessError)
                    span.setStatus(SpanStatus(code: .error))
                }
                span.end()
            }
        }
        // A pooled connection may have died while idle (a server restart): when
        // it fails before the closure ran, nothing was done, so retry once on a fresh one.
        var attempt = 0
        while true {
            attempt += 1
            try Task.checkCancellation()
            let checkoutStart = metrics == nil ? nil : ContinuousClock.now
            let connection: PooledConnection
            do {
                connection = try await pool.acquire(timeout: configuration.checkoutTimeout)
            } catch {
                metrics?.failed(error)
                accessError = error
                throw error
            }
            if let metrics, let checkoutStart {
                metrics.checkoutDuration.recordNanoseconds((ContinuousClock.now - checkoutStart).saturatingNanoseconds)
            }
            let cancellation = CancellationFlag()
            let dialect = self.dialect
            let settings = self.settings
            let codingOptions = self.codingOptions
            let observers = self.observers
            let statementTimer = metrics?.statementDuration
            let deadline = settings.configuration.accessTimeout.map { timeout in
                let work = DispatchWorkItem { cancellation.timeOut(timeout) { connection.interrupt() } }
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(timeout.saturatingNanoseconds), execute: work)
                return work
            }
            gate.attach(ticket, cancellation, connection)
            let outcome: Sendable1<(Result<Void, any Error>, bodyStarted: Bool)> = await withTaskCancellationHandler {
                await connection.run { connection in
                    let db = Database(connection: connection, dialect: dialect, settings: settings, coding: codingOptions, cancellation: cancellation, log: log, statementTimer: statementTimer, tracing: tracing)
                    db.readRecorder = recorder
                    db.observers = observers
                    db.tracksCommitPosition = tracksPosition
                    db.replayTarget = replay
                    defer { db.invalidate() }
                    let result = Result { try db.inTransaction(kind, isolation: isolation) { try body($0) } }
                    // From here on, a deadline that fires interrupts nothing.
                    cancellation.finish()
                    connection.checkHealth()
                    if let positionBox { positionBox.position = db.commitPosition }
                    return Sendable1((result, db.bodyStarted))
                }
            } onCancel: {
                cancellation.cancel()
                connection.interrupt()
            }
            deadline?.cancel()
            gate.detach(ticket)
            await pool.release(connection)
            let (result, bodyStarted) = outcome.value
            if case .failure(let error as DatabaseError) = result, error.kind == .connection, !bodyStarted, attempt == 1 {
                continue
            }
            if case .failure(let error) = result {
                metrics?.failed(error)
                accessError = error
            }
            if let committed = positionBox?.position { commits.note(committed) }
            return try result.get()
        }
    }
}

/// The encoder's and decoder's options, as the hot paths use them.
struct CodingOptions: Sendable {
    let encoding: EncodingOptions
    let keyStrategy: KeyStrategy
    let decoding: DecodingOptions
}

/// A store's configuration in one shared object: every access refers to it
/// instead of copying a struct of loggers, coders and closures.
final class StoreSettings: Sendable {
    let configuration: Store.Configuration

    init(_ configuration: Store.Configuration) {
        self.configuration = configuration
    }
}

/// Where an access's closure leaves its value: memory for one `T`, written on
/// the connection's queue before the access's continuation resumes, read by
/// the awaiting task after it. Not generic storage the runtime must describe
/// (an optional of `T` would be): a pointer, and whether it holds a value.
final class AccessResult<T>: @unchecked Sendable {
    private let slot = UnsafeMutablePointer<T>.allocate(capacity: 1)
    private var holdsValue = false

    /// Keeps the closure's value. Called at most once per access; a retried
    /// access runs its closure again only when the first try never started it.
    func store(_ value: T) {
        if holdsValue { slot.deinitialize(count: 1) }
        slot.initialize(to: value)
        holdsValue = true
    }

    /// Moves the value out. The access succeeded, so the closure stored one;
    /// were it not so, an error rather than memory never written.
    func take() throws -> T {
        guard holdsValue else { throw DatabaseError(.other, "the access finished without its closure's value") }
        holdsValue = false
        return slot.move()
    }

    /// Destroys a value the access stored but did not return (its commit
    /// failed after the closure returned), and frees the memory.
    func discard() {
        if holdsValue { slot.deinitialize(count: 1) }
        holdsValue = false
        slot.deallocate()
    }
}

/// Set when the task running an access is cancelled or its deadline passes;
/// read on the connection's queue.
final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var finished = false
    /// The access timeout that passed, if one did.
    private(set) var timedOutAfter: Duration?

    func cancel() { lock.withLock { cancelled = true } }
    var isCancelled: Bool { lock.withLock { cancelled } }
    var timeout: Duration? { lock.withLock { timedOutAfter } }

    /// Marks the deadline passed and runs `interrupt`, unless the access already
    /// finished: its connection may serve another access by now.
    func timeOut(_ timeout: Duration, _ interrupt: () -> Void) {
        lock.withLock {
            guard !finished else { return }
            timedOutAfter = timeout
            interrupt()
        }
    }

    /// The access is done with its connection's statements.
    func finish() { lock.withLock { finished = true } }

    /// Why the access must stop, read under one lock (a statement checks
    /// before it runs, so this is on every statement's path); nil to go on.
    var interruption: Interruption? {
        lock.withLock {
            if cancelled { return .cancelled }
            if let timedOutAfter { return .timedOut(timedOutAfter) }
            if stoppedByShutdown { return .stopped }
            return nil
        }
    }

    /// What stopped an access, in the order ``interruption`` reports them.
    enum Interruption {
        case cancelled
        case timedOut(Duration)
        case stopped
    }

    /// Whether the store's shutdown interrupted the access.
    private(set) var stoppedByShutdown = false
    var isStopped: Bool { lock.withLock { stoppedByShutdown } }

    /// Marks the access stopped by the store's shutdown and runs `interrupt`,
    /// unless the access already finished.
    func stop(_ interrupt: () -> Void) {
        lock.withLock {
            guard !finished else { return }
            stoppedByShutdown = true
            interrupt()
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at the bounds of `Int`.
    var saturatingNanoseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflowAgain else { return seconds < 0 ? .min : .max }
        return Int(total)
    }
}

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
        /// The store reads the level once, when it is created (a `logger:`
        /// given to one access is read when that access starts).
        ///
        /// ```swift
        /// configuration.logger = Logger(label: "reminders.db")
        /// ```
        public var logger = Logger(label: "depot", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Where the store records its metrics: `MetricsSystem.factory` for the
        /// backend the app bootstrapped. Nil, the default, records nothing and
        /// costs nothing.
        ///
        /// The metrics carry OpenTelemetry's names for database clients, with
        /// `db.system.name` (`sqlite`, `postgresql`, `mariadb`), and for a pool
        /// `db.client.connection.pool.name` (`writer`, `reader`):
        ///
        /// | label | kind | what |
        /// | --- | --- | --- |
        /// | `db.client.operation.duration` | timer | each statement, rows read included; a failed one with `error.type` |
        /// | `db.client.connection.count` | meter | connections by `db.client.connection.state`, `idle` or `used` |
        /// | `db.client.connection.max` | meter | the most connections a pool opens |
        /// | `db.client.connection.pending_requests` | meter | accesses waiting for a connection |
        /// | `db.client.connection.wait_time` | timer | how long an access waited for its connection |
        /// | `depot.errors` | counter | failed accesses by `error.type` (OpenTelemetry names none) |
        /// | `depot.write.retries` | counter | writes run again (``writeRetry``) by the `error.type` of the attempt before |
        ///
        /// Caveat: these replaced `depot.statement.duration`,
        /// `depot.checkout.duration`, `depot.connections.*` and
        /// `depot.accesses.waiting` (with `db.system`); rename them in dashboards.
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
        /// Whether and how a write that lost a conflict to another
        /// transaction (a ``DatabaseError/Kind/serialization`` error: a
        /// serialization failure, a deadlock, a Galera certification conflict)
        /// runs again, whole. Nil, the default, runs every write once.
        ///
        /// Caveat: a retried write runs its closure again; see ``WriteRetry``
        /// for which closures that is safe for.
        public var writeRetry: WriteRetry?
        /// Whether a read runs on the calling task's thread where its engine
        /// allows it: on SQLite in WAL mode or in memory, whose readers never
        /// wait for a lock (``DriverConnection/readsNeverWait``). On by
        /// default: such a read then costs what its statements cost, without
        /// the two thread hops to the connection's queue and back (a read
        /// holding one lookup by key runs two to five times as fast). Reads on a
        /// server, and every write, run on the connection's queue whatever
        /// this says.
        ///
        /// Caveat: the read's closure then holds one of Swift's cooperative
        /// threads while it runs, as any synchronous code in a task does. Turn
        /// this off when read closures run long (a report over millions of
        /// rows, on a machine with few cores) or block (wait on a semaphore,
        /// or on another task: that can deadlock the pool). Streams
        /// (``Store/rows(_:_:bufferSize:)``) always read on the connection's
        /// queue, and so does every read on a machine with one core, where
        /// the cooperative pool has a single thread.
        public var readsRunOnCallingThread = true
        /// Test hook: runs on the thread the access runs on (the connection's,
        /// or the caller's for a read there) when a statement read
        /// through `fetchOne`, `fetchAll` and the like is prepared and bound and
        /// its access's last check found nothing to stop it, just before the
        /// engine starts it (an interrupt that comes then must still stop it).
        package var beforeStatementStarts: (@Sendable (InterruptionProbe) -> Void)?

        /// The default configuration.
        public init() {}
    }

    /// The engine's dialect: its placeholders, quoting and column types.
    public let dialect: any SQLDialect
    /// This store's settings.
    public var configuration: Configuration { settings.configuration }
    /// The configuration, shared by reference with every access's `Database`.
    let settings: StoreSettings
    let writers: ConnectionPool
    let readers: ConnectionPool
    /// The replicas' readers, when the store has replicas (then `readers` is this pool).
    let replicaReaders: ConnectionPool?
    /// The newest commit position of this store's writes, when they are tracked.
    let commits = CommitTracker()
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
        self.driver = driver
        let monitor = ChangeMonitor(driver: driver)
        self.changeMonitor = monitor
        self.observers = ObservationCenter(onActive: { [monitor] _ in monitor.update() })
        let open: @Sendable (ConnectionRole) throws -> any DriverConnection = { try driver.openConnection($0) }
        let label = "depot.\(driver.dialect.engineName.lowercased())"
        switch driver.poolLayout {
        case .single:
            writers = ConnectionPool(role: .writer, maxConnections: 1, label: label, waitsForServer: configuration.waitsForServer, databaseLivesInItsConnection: driver.databaseLivesInItsConnection, logger: configuration.logger, metrics: metrics, open: open)
            readers = writers
        case .oneWriter(let readerCount):
            writers = ConnectionPool(role: .writer, maxConnections: 1, label: label + ".writer", waitsForServer: configuration.waitsForServer, databaseLivesInItsConnection: driver.databaseLivesInItsConnection, logger: configuration.logger, metrics: metrics, open: open)
            readers = ConnectionPool(role: .reader, maxConnections: readerCount, label: label + ".reader", waitsForServer: configuration.waitsForServer, databaseLivesInItsConnection: driver.databaseLivesInItsConnection, logger: configuration.logger, metrics: metrics, open: open)
        case .shared(let max):
            writers = ConnectionPool(role: .writer, maxConnections: max, label: label, waitsForServer: configuration.waitsForServer, databaseLivesInItsConnection: driver.databaseLivesInItsConnection, logger: configuration.logger, metrics: metrics, open: open)
            readers = writers
        case .primaryAndReplicas(let primary, let replicas):
            writers = ConnectionPool(role: .writer, maxConnections: primary, label: label + ".primary", waitsForServer: configuration.waitsForServer, databaseLivesInItsConnection: driver.databaseLivesInItsConnection, logger: configuration.logger, metrics: metrics, open: open)
            readers = ConnectionPool(role: .reader, maxConnections: replicas, label: label + ".replica", waitsForServer: configuration.waitsForServer, databaseLivesInItsConnection: driver.databaseLivesInItsConnection, logger: configuration.logger, metrics: metrics, open: open)
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
    /// On SQLite (in WAL mode or in memory) the closure runs on the calling
    /// task's thread, with no hop to the connection's queue; see
    /// ``Configuration/readsRunOnCallingThread`` for when to turn that off.
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
    ///
    /// A write that fails with a ``DatabaseError/Kind/serialization`` error
    /// runs again when the configuration has a ``Configuration/writeRetry`` policy.
    @discardableResult
    public func write<T: Sendable>(logger: Logger? = nil, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard let retry = settings.writeRetry else {
            return try await access(.write, isolation: nil, route: .primary, logger: logger, body)
        }
        return try await write(retry: retry, isolation: nil, logger: logger, body)
    }

    /// Runs a write transaction at an isolation level (see ``IsolationLevel``).
    ///
    /// ```swift
    /// try await store.write(isolation: .serializable) { db in ... }
    /// ```
    @discardableResult
    public func write<T: Sendable>(isolation: IsolationLevel, logger: Logger? = nil, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await write(retry: settings.writeRetry, isolation: isolation, logger: logger, body)
    }

    /// Runs a write transaction with its own retry policy, in place of the
    /// configuration's ``Configuration/writeRetry``: nil runs it once.
    ///
    /// ```swift
    /// // Sends a message: must not run twice.
    /// try await store.write(retry: nil) { db in try db.insert(order); try mailer.confirm(order) }
    /// ```
    ///
    /// See ``WriteRetry`` for what is retried and what is not.
    ///
    /// - Throws: the last attempt's error when every attempt failed; a
    ///   `misuse` error when `retry` allows fewer than one attempt;
    ///   `CancellationError` when the task is cancelled, between attempts too.
    @discardableResult
    public func write<T: Sendable>(retry: WriteRetry?, isolation: IsolationLevel? = nil, logger: Logger? = nil,
                                   _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await retrying(retry, logger: logger) { attempt in
            try await self.access(.write, isolation: isolation, route: .primary, logger: logger, attempt: attempt, body)
        }
    }

    /// Runs `attempt` (given its number, from 1) until it succeeds, fails with
    /// an error ``WriteRetry`` does not retry, or has run `retry.attempts` times.
    func retrying<T>(_ retry: WriteRetry?, logger: Logger?, _ run: (Int) async throws -> T) async throws -> T {
        guard let retry else { return try await run(1) }
        guard retry.attempts >= 1 else {
            throw DatabaseError(.misuse, "a write retry policy must allow at least 1 attempt (attempts: \(retry.attempts))")
        }
        var attempt = 1
        while true {
            do {
                return try await run(attempt)
            } catch where attempt < retry.attempts && WriteRetry.retries(error) {
                attempt += 1
                let wait = retry.backoff(before: attempt)
                noteRetry(after: error, attempt: attempt, of: retry.attempts, wait: wait, logger: logger)
                if wait > .zero { try await Task.sleep(for: wait) } else { try Task.checkCancellation() }
            }
        }
    }

    /// Logs and counts a retry of a write.
    private func noteRetry(after error: any Error, attempt: Int, of attempts: Int, wait: Duration, logger: Logger?) {
        let kind = StoreMetrics.kind(of: error)
        metrics?.retried(kind)
        var metadata: Logger.Metadata = [
            "depot.write.attempt": .stringConvertible(attempt),
            "depot.write.attempts": .stringConvertible(attempts),
            "depot.write.backoff_ms": .stringConvertible(AccessLog.milliseconds(wait)),
            "db.error": .string(kind),
        ]
        if let code = (error as? DatabaseError)?.engineCode { metadata["db.error_code"] = .string(code) }
        (logger ?? settings.configuration.logger).notice("write retried", metadata: metadata)
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
        let connection = try await writers.acquire(timeout: settings.checkoutTimeout)
        let counter = await connection.run { connection in Result { try connection.writeTracking?.externalChangeCounter() } }
        await writers.release(connection)
        return try counter.get()
    }

    /// Whether the store reads and writes on one connection (an in-memory SQLite database): no one else can write.
    var isSingleConnection: Bool { writers === readers && writers.maxConnections == 1 }
}

/// The encoder's and decoder's options, as the hot paths use them: one object
/// each access refers to, never a copy of its closures.
final class CodingOptions: Sendable {
    let encoding: EncodingOptions
    let keyStrategy: KeyStrategy
    let decoding: DecodingOptions

    init(encoding: EncodingOptions, keyStrategy: KeyStrategy, decoding: DecodingOptions) {
        self.encoding = encoding
        self.keyStrategy = keyStrategy
        self.decoding = decoding
    }
}

/// A store's configuration in one shared object, with what every access reads
/// taken out of it once: an access refers to it instead of copying a struct of
/// loggers, coders and closures to read one field.
final class StoreSettings: Sendable {
    let configuration: Store.Configuration
    let coding: CodingOptions
    /// What an access with the store's logger logs, decided once: the
    /// logger's level is read when the store is created.
    let log: AccessLog?
    let tracer: (any Tracer)?
    let checkoutTimeout: Duration
    let accessTimeout: Duration?
    let readYourWritesTimeout: Duration?
    let slowStatementThreshold: Duration?
    let showsBoundValues: Bool
    let beforeStatementStarts: (@Sendable (InterruptionProbe) -> Void)?
    let writeRetry: WriteRetry?
    let readsRunOnCallingThread: Bool

    init(_ configuration: Store.Configuration) {
        self.configuration = configuration
        var encoding = configuration.encoder.options, decoding = configuration.decoder.options
        encoding.usesGeneratedMapping = configuration.usesGeneratedMapping
        decoding.usesGeneratedMapping = configuration.usesGeneratedMapping
        coding = CodingOptions(encoding: encoding, keyStrategy: configuration.encoder.keyStrategy, decoding: decoding)
        slowStatementThreshold = configuration.slowStatementThreshold
        showsBoundValues = configuration.showsBoundValues
        log = AccessLog(configuration.logger, slowStatementThreshold: slowStatementThreshold, showsBoundValues: showsBoundValues)
        tracer = configuration.tracer
        checkoutTimeout = configuration.checkoutTimeout
        accessTimeout = configuration.accessTimeout
        readYourWritesTimeout = configuration.readYourWritesTimeout
        beforeStatementStarts = configuration.beforeStatementStarts
        writeRetry = configuration.writeRetry
        // On one core Swift's cooperative pool has one thread: a read holding
        // it would stop every other task, the one that would cancel it too.
        readsRunOnCallingThread = configuration.readsRunOnCallingThread && ProcessInfo.processInfo.activeProcessorCount > 1
    }
}

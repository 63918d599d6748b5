import Dispatch
import Foundation
import Logging

/// Hands out connections of one role, opening them lazily up to a maximum.
///
/// A caller that finds none free waits in line; it fails with a `timeout`
/// ``DatabaseError`` when the wait exceeds the store's checkout timeout, and with
/// `CancellationError` when its task is cancelled. A connection that comes back
/// broken is closed and its slot freed, so the next caller gets a fresh one.
///
/// A lock, not an actor: taking an idle connection and giving it back are a few
/// instructions under the lock, with no hop to another executor, which every
/// access would pay twice.
final class ConnectionPool: WaiterOwner, @unchecked Sendable {
    // Unchecked: its mutable state is read and written under `lock`; WaitersTests
    // pin the hand-over and the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
    private let role: ConnectionRole
    let maxConnections: Int
    private let open: @Sendable (ConnectionRole) throws -> any DriverConnection
    private let label: String
    private let lock = NSLock()
    var waiterLock: NSLock { lock }
    /// A connection handed to a waiter, as the thread sanitizer sees it.
    private let fence = SanitizerFence()
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, a read
    // access holding one lookup, @Columns: 53.29M instructions with the checks of CancellationFlag,
    // AccessGate and ConnectionPool, 52.20M without.
    // Guarded by `lock`.
    @exclusivity(unchecked) private var idle: [PooledConnection] = []
    @exclusivity(unchecked) private var openCount = 0
    @exclusivity(unchecked) private var opened = 0
    /// Callers waiting in line, each handed a connection, a free slot to open one in, or an error.
    @exclusivity(unchecked) var waiters = Waiters<HandOver>()
    @exclusivity(unchecked) private var isClosed = false
    /// Set when the connection a database lived in broke: every checkout fails with it.
    @exclusivity(unchecked) private var lostDatabase: DatabaseError?
    /// Whether the database lives in the pool's one connection (``DatabaseDriver/databaseLivesInItsConnection``).
    private let databaseLivesInItsConnection: Bool
    /// Whether opening a connection that fails with a `connection` error is
    /// tried again until the checkout timeout (``Store/Configuration/waitsForServer``).
    private let waitsForServer: Bool
    private let logger: Logger
    private let metrics: PoolMetrics?

    init(role: ConnectionRole, maxConnections: Int, label: String, waitsForServer: Bool = false,
         databaseLivesInItsConnection: Bool = false,
         logger: Logger = Logger(label: "depot", factory: { _ in SwiftLogNoOpLogHandler() }),
         metrics: StoreMetrics? = nil,
         open: @escaping @Sendable (ConnectionRole) throws -> any DriverConnection) {
        self.waitsForServer = waitsForServer
        self.databaseLivesInItsConnection = databaseLivesInItsConnection
        self.logger = logger
        self.role = role
        self.maxConnections = max(1, maxConnections)
        self.metrics = metrics?.pool(role, maxConnections: self.maxConnections)
        self.label = label
        self.open = open
    }

    /// What a waiting caller is handed.
    enum HandOver: Sendable {
        case connection(PooledConnection)
        /// A slot came free with no connection to hand over: the caller opens one in it.
        case freeSlot
        case failure(any Error)
    }

    private enum Checkout {
        case ready(PooledConnection)
        case open
        case wait
        case closed
        case lost(DatabaseError)
    }

    /// How many callers wait in line now (for tests).
    var waiterCount: Int { lock.withLock { waiters.count } }

    /// Sets the meters to the pool's counts.
    private func publish() {
        guard let metrics else { return }
        let (open, idleCount) = lock.withLock { (openCount, idle.count) }
        metrics.used.set(open - idleCount)
        metrics.idle.set(idleCount)
    }

    /// An idle connection for the caller's exclusive use until it is given
    /// back, if one is idle now: the common case, without suspending.
    /// Nil when none is, or the pool is closed: then ``acquire(timeout:)``.
    func takeIdle() -> PooledConnection? {
        let connection = lock.withLock { isClosed ? nil : idle.popLast() }
        if connection != nil, metrics != nil { publish() }
        return connection
    }

    /// Gives a healthy connection back without suspending: to the first
    /// waiter, or to the idle ones. False when the connection is broken or
    /// retired or the pool closed, which only ``release(_:)`` handles.
    func giveBack(_ connection: PooledConnection) -> Bool {
        if connection.isBroken || connection.isRetired { return false }
        let (taken, waiter) = lock.withLock { () -> (Bool, CheckedContinuation<HandOver, Never>?) in
            if isClosed { return (false, nil) }
            if let waiter = waiters.removeFirst() { return (true, waiter) }
            idle.append(connection)
            return (true, nil)
        }
        if let waiter {
            fence.publish()
            waiter.resume(returning: .connection(connection))
        }
        if taken, metrics != nil { publish() }
        return taken
    }

    /// A connection for the caller's exclusive use until ``release(_:)``.
    func acquire(timeout: Duration) async throws -> PooledConnection {
        defer { publish() }
        let checkout = lock.withLock { () -> Checkout in
            if isClosed { return .closed }
            if let lostDatabase { return .lost(lostDatabase) }
            if let connection = idle.popLast() { return .ready(connection) }
            if openCount < maxConnections {
                openCount += 1
                return .open
            }
            return .wait
        }
        switch checkout {
        case .ready(let connection):
            return connection
        case .closed:
            throw DatabaseError(.connection, "the store is closed")
        case .lost(let error):
            throw error
        case .open:
            return try await openInReservedSlot(timeout: timeout)
        case .wait:
            return try await waitForConnection(timeout: timeout)
        }
    }

    /// Opens a connection in a slot this caller reserved (`openCount` counts
    /// it); when that fails, the slot is freed for the first caller in line.
    private func openInReservedSlot(timeout: Duration) async throws -> PooledConnection {
        do {
            return try await openWaitingForServer(timeout: timeout)
        } catch {
            lock.withLock { openCount -= 1 }
            // Callers that came while this one was opening wait in line for a slot
            // that is free again: the first of them gets to open one, rather than
            // waiting out its whole checkout timeout for a connection no one holds.
            offerFreedSlot()
            throw error
        }
    }

    /// Opens a connection; when the store waits for its server, an unreachable
    /// server is tried again, more slowly each time, until `timeout` has passed.
    private func openWaitingForServer(timeout: Duration) async throws -> PooledConnection {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(25)
        while true {
            do {
                return try await openConnection()
            } catch let error as DatabaseError where waitsForServer && error.kind == .connection && ContinuousClock.now + pause < deadline {
                logger.notice("server unreachable; trying again", metadata: ["db.pool": .string(label), "db.error": .string(error.message)])
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(1))
                if lock.withLock({ isClosed }) { throw DatabaseError(.connection, "the store is closed") }
            }
        }
    }

    private func waitForConnection(timeout: Duration) async throws -> PooledConnection {
        metrics?.waiting.increment()
        defer { metrics?.waiting.decrement() }
        let role = role, maxConnections = maxConnections
        let handOver = await wait(timeout: timeout, timedOut: {
            .failure(DatabaseError(.timeout, "no \(role == .writer ? "writer" : "reader") connection became free within \(timeout) "
                + "(pool of \(maxConnections)); an access may be waiting on another access it holds"))
        }, cancelled: .failure(CancellationError())) { () -> HandOver? in
            // Since the first look a connection may have come back, a slot come
            // free (one broke, or an open failed), or the pool closed.
            if isClosed { return .failure(DatabaseError(.connection, "the store is closed")) }
            if let lostDatabase { return .failure(lostDatabase) }
            if let connection = idle.popLast() { return .connection(connection) }
            if openCount < maxConnections {
                openCount += 1
                return .freeSlot
            }
            return nil
        }
        fence.observe()
        switch handOver {
        case .connection(let connection): return connection
        case .freeSlot: return try await openInReservedSlot(timeout: timeout)
        case .failure(let error): throw error
        }
    }

    private func openConnection() async throws -> PooledConnection {
        let open = self.open
        let role = self.role
        // Opening may block (a server handshake): do it off the cooperative pool.
        // The fence shows the thread sanitizer the hand-over: the task reads
        // what opening wrote (a SQLite connection's journal mode, for one).
        let fence = SanitizerFence()
        let driver = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Sendable1<any DriverConnection>, any Error>) in
            OffPool.run("depot.open") {
                let opened = Result { Sendable1(try open(role)) }
                fence.publish()
                continuation.resume(with: opened)
            }
        }.value
        fence.observe()
        let (number, openNow) = lock.withLock { () -> (Int, Int) in
            opened += 1
            return (opened, openCount)
        }
        var metadata: Logger.Metadata = ["db.pool": .string(label), "db.connection": .stringConvertible(number), "db.connections_open": .stringConvertible(openNow)]
        if let server = driver.serverDescription { metadata["db.server"] = .string(server) }
        logger.info("connection opened", metadata: metadata)
        return PooledConnection(role: role, connection: driver, label: "\(label).\(number)")
    }

    /// Returns a connection. A broken one is closed, and a waiter gets a new one.
    func release(_ connection: PooledConnection) async {
        defer { publish() }
        if connection.isBroken || connection.isRetired || lock.withLock({ isClosed }) {
            if connection.isBroken {
                logger.notice("connection broken; closed, and replaced when next needed",
                              metadata: ["db.pool": .string(label), "db.reason": .string(connection.brokenBecause ?? "unknown")])
            } else if connection.isRetired {
                logger.info("connection retired by its driver; replaced when next needed", metadata: ["db.pool": .string(label)])
            }
            await connection.run { $0.close() }
            if databaseLivesInItsConnection, !lock.withLock({ isClosed }) {
                loseDatabase(because: connection.brokenBecause ?? "it was retired")
                return
            }
            lock.withLock { openCount -= 1 }
            offerFreedSlot()
            return
        }
        let waiter = lock.withLock { () -> CheckedContinuation<HandOver, Never>? in
            if let waiter = waiters.removeFirst() { return waiter }
            idle.append(connection)
            return nil
        }
        fence.publish()
        waiter?.resume(returning: .connection(connection))
    }

    /// The connection the database lived in is gone, and the data with it:
    /// no empty database is opened in its place; every waiter and every later
    /// checkout fails, saying so.
    private func loseDatabase(because reason: String) {
        let error = DatabaseError(.connection, "the database lived in its one connection, which broke (\(reason)): its data is gone; "
            + "the store opens no empty database in its place (open a new store)")
        logger.error("connection broken; the database lived in it and is gone", metadata: ["db.pool": .string(label)])
        let waiting = lock.withLock { () -> [CheckedContinuation<HandOver, Never>] in
            lostDatabase = error
            return waiters.removeAll()
        }
        for waiter in waiting { waiter.resume(returning: .failure(error)) }
    }

    /// A slot came free without a connection to hand over (one broke, or
    /// opening one failed): the first caller in line is handed the slot and
    /// opens a connection in it, within its own checkout timeout. When that
    /// fails, the slot goes to the next one.
    private func offerFreedSlot() {
        let waiter = lock.withLock { () -> CheckedContinuation<HandOver, Never>? in
            guard !isClosed, openCount < maxConnections, let waiter = waiters.removeFirst() else { return nil }
            openCount += 1
            return waiter
        }
        waiter?.resume(returning: .freeSlot)
    }

    /// Closes idle connections now and busy ones as they come back.
    func close() async {
        defer { publish() }
        let (waiting, closing) = lock.withLock { () -> ([CheckedContinuation<HandOver, Never>], [PooledConnection]) in
            isClosed = true
            let waiting = waiters.removeAll()
            let closing = idle
            idle.removeAll()
            return (waiting, closing)
        }
        for waiter in waiting {
            waiter.resume(returning: .failure(DatabaseError(.connection, "the store is closed")))
        }
        for connection in closing {
            await connection.run { $0.close() }
            lock.withLock { openCount -= 1 }
        }
    }
}

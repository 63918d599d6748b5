import Dispatch
import Foundation

/// Hands out connections of one role, opening them lazily up to a maximum.
///
/// A caller that finds none free waits in line; it fails with a `timeout`
/// ``DatabaseError`` when the wait exceeds the store's checkout timeout, and with
/// `CancellationError` when its task is cancelled. A connection that comes back
/// broken is closed and its slot freed, so the next caller gets a fresh one.
actor ConnectionPool {
    private let role: ConnectionRole
    private let maxConnections: Int
    private let open: @Sendable (ConnectionRole) throws -> any DriverConnection
    private let label: String
    private var idle: [PooledConnection] = []
    private var openCount = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<PooledConnection, any Error>)] = []
    private var nextWaiterID: UInt64 = 0
    private var isClosed = false

    init(role: ConnectionRole, maxConnections: Int, label: String, open: @escaping @Sendable (ConnectionRole) throws -> any DriverConnection) {
        self.role = role
        self.maxConnections = max(1, maxConnections)
        self.label = label
        self.open = open
    }

    /// A connection for the caller's exclusive use until ``release(_:)``.
    func acquire(timeout: Duration) async throws -> PooledConnection {
        guard !isClosed else { throw DatabaseError(.connection, "the store is closed") }
        if let connection = idle.popLast() { return connection }
        if openCount < maxConnections {
            openCount += 1
            do {
                return try await openConnection()
            } catch {
                openCount -= 1
                throw error
            }
        }
        nextWaiterID += 1
        let id = nextWaiterID
        let timeoutTask = Task { [weak self] in
            try await Task.sleep(for: timeout)
            await self?.expire(id, after: timeout)
        }
        defer { timeoutTask.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func openConnection() async throws -> PooledConnection {
        let open = self.open
        let role = self.role
        // Opening may block (a server handshake): do it off the cooperative pool.
        let driver = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Sendable1<any DriverConnection>, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { Sendable1(try open(role)) })
            }
        }.value
        return PooledConnection(role: role, connection: driver, label: "\(label).\(openCount)")
    }

    private func expire(_ id: UInt64, after timeout: Duration) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiters.remove(at: index)
        waiter.continuation.resume(throwing: DatabaseError(.timeout,
            "no \(role == .writer ? "writer" : "reader") connection became free within \(timeout) (pool of \(maxConnections)); an access may be waiting on another access it holds"))
    }

    private func cancelWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    /// Returns a connection. A broken one is closed, and a waiter gets a new one.
    func release(_ connection: PooledConnection) async {
        if connection.isBroken || isClosed {
            await connection.run { $0.close() }
            openCount -= 1
            if !waiters.isEmpty, !isClosed {
                let waiter = waiters.removeFirst()
                openCount += 1
                do {
                    waiter.continuation.resume(returning: try await openConnection())
                } catch {
                    openCount -= 1
                    waiter.continuation.resume(throwing: error)
                }
            }
            return
        }
        if !waiters.isEmpty {
            waiters.removeFirst().continuation.resume(returning: connection)
        } else {
            idle.append(connection)
        }
    }

    /// Closes idle connections now and busy ones as they come back.
    func close() async {
        isClosed = true
        for waiter in waiters {
            waiter.continuation.resume(throwing: DatabaseError(.connection, "the store is closed"))
        }
        waiters.removeAll()
        let closing = idle
        idle.removeAll()
        for connection in closing {
            await connection.run { $0.close() }
            openCount -= 1
        }
    }
}

/// When a write that failed because another transaction won a conflict is
/// run again, whole: the closure, its transaction and its COMMIT.
///
/// Engines that run transactions side by side refuse one of two that
/// conflict, and say it may succeed if tried again: PostgreSQL's
/// serialization failures (SQLSTATE 40001) and deadlocks (40P01), MariaDB's
/// deadlocks (1213), and on a Galera cluster a COMMIT whose write set another
/// node's transaction certified first (1213 at COMMIT). Each is a
/// ``DatabaseError`` of kind ``DatabaseError/Kind/serialization``, and the
/// refused transaction was rolled back, so nothing of it holds. Without a
/// retry policy that error reaches the caller, and every caller writes the
/// same loop; with one, the store writes it once:
///
/// ```swift
/// var configuration = Store.Configuration()
/// configuration.writeRetry = WriteRetry(attempts: 5)
/// let store = try await Store.mariadb(url: "mariadb://app:secret@db1,db2,db3/reminders", configuration)
/// ```
///
/// or for one write:
///
/// ```swift
/// try await store.write(retry: WriteRetry()) { db in try db.update(account) }
/// ```
///
/// Before attempt *n* (from the second) the store waits a random time from
/// zero to `min(maximumBackoff, initialBackoff × 2^(n−2))` ("full jitter"),
/// holding no connection, so that writers that collided do not collide again
/// in step. A task cancelled while it waits stops with `CancellationError`.
///
/// Each retry is logged at `notice` on the store's logger ("write retried"
/// with the attempt, the error's kind and engine code), counted in the
/// `depot.write.retries` metric (with `db.system.name` and `error.type`), and
/// its access's span carries `depot.write.attempt`.
///
/// Caveat: a retry runs the closure again. It is safe only for a closure
/// whose effects are all in the transaction: one that sends an email, calls
/// another service or changes memory outside itself does so once per
/// attempt. Give such a write no policy (``Store/write(retry:isolation:logger:_:)``
/// with nil), or move the effect after the write returns.
///
/// A write is never retried when its COMMIT's outcome is unknown (the
/// connection was lost after COMMIT was sent,
/// ``DatabaseError/commitOutcomeUnknown``): it may have committed, and a
/// second run could apply it twice. Only ``DatabaseError/Kind/serialization``
/// errors are retried; a `busy` error (a lock wait that ran out) is not.
public struct WriteRetry: Sendable, Equatable {
    /// How many times the write runs at most, the first included: 1 never
    /// retries. Default: 5. A policy with fewer than 1 makes every write fail
    /// with a `misuse` error.
    public var attempts: Int
    /// The longest wait before the second attempt; each later one may wait
    /// twice as long as the one before it. Default: 5 ms.
    public var initialBackoff: Duration
    /// The most any wait may be. Default: 500 ms.
    public var maximumBackoff: Duration

    /// A policy: at most `attempts` runs, waiting a random time that grows
    /// from up to `initialBackoff` to up to `maximumBackoff` between them.
    public init(attempts: Int = 5, initialBackoff: Duration = .milliseconds(5), maximumBackoff: Duration = .milliseconds(500)) {
        self.attempts = attempts
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Whether an attempt that failed with `error` is run again.
    static func retries(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.kind == .serialization && !error.commitOutcomeUnknown
    }

    /// The longest wait before `attempt` (2 or more): the initial backoff
    /// doubled `attempt - 2` times, never past the maximum (nor negative).
    func backoffCap(before attempt: Int) -> Duration {
        let maximum = max(maximumBackoff, .zero)
        var cap = max(initialBackoff, .zero)
        var doubling = 2
        while doubling < attempt, cap < maximum {
            cap = cap > maximum / 2 ? maximum : cap * 2
            doubling += 1
        }
        return min(cap, maximum)
    }

    /// A random wait from zero to ``backoffCap(before:)``.
    func backoff(before attempt: Int) -> Duration {
        let cap = backoffCap(before: attempt).saturatingNanoseconds
        guard cap > 0 else { return .zero }
        return .nanoseconds(Int.random(in: 0...cap))
    }
}

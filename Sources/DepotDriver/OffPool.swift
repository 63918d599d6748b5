import Dispatch

/// Where a store and its backend run what must neither wait for nor hold a
/// thread of Swift's task pool: opening a connection, an access's deadline,
/// an interrupt, a probe of the server when a store is made.
///
/// Each call gets a serial queue of its own, which Dispatch serves even when
/// every thread of its global pool is busy. On the global queue an access's
/// deadline waited for one of those threads: tasks that kept every core busy
/// held its timer back until they stopped, minutes later under the thread
/// sanitizer (the conformance check "an access's timeout fires while every
/// thread of Swift's task pool is busy").
///
/// ```swift
/// let version = try await OffPool.value("myengine.probe") {
///     let connection = try MyConnection.open(configuration)   // blocks
///     defer { connection.close() }
///     return try connection.serverVersion()
/// }
/// ```
///
/// Caveat: each call may start a thread. It is for work that blocks, a few
/// times per store or access, not for a statement's every row.
public enum OffPool {
    /// Runs `work` on a thread of its own.
    public static func run(_ label: String, _ work: @escaping @Sendable () -> Void) {
        DispatchQueue(label: label).async(execute: work)
    }

    /// Runs `work` on a thread of its own once `delay` has passed, unless it is cancelled first.
    public static func run(_ label: String, after delay: Duration, _ work: DispatchWorkItem) {
        DispatchQueue(label: label).asyncAfter(deadline: .now() + .nanoseconds(delay.saturatingNanoseconds), execute: work)
    }

    /// Runs `work`, which may block its thread, on a thread of its own and
    /// returns what it returns; the calling task waits without holding a
    /// thread of the task pool.
    public static func value<T: Sendable>(_ label: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            run(label) { continuation.resume(with: Result { try work() }) }
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at the bounds of `Int`.
    package var saturatingNanoseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflowAgain else { return seconds < 0 ? .min : .max }
        return Int(total)
    }
}

import Dispatch

/// Where the core runs what must neither wait for nor hold a thread of
/// Swift's task pool: opening connections, access deadlines, interrupts.
///
/// Each call gets a serial queue of its own, which Dispatch serves even when
/// every thread of its global pool is busy. On the global queue an access's
/// deadline waited for one of those threads: tasks that kept every core busy
/// held its timer back until they stopped, minutes later under the thread
/// sanitizer (the conformance check "an access's timeout fires while every
/// thread of Swift's task pool is busy").
enum OffPool {
    /// Runs `work` on a thread of its own.
    static func run(_ label: String, _ work: @escaping @Sendable () -> Void) {
        DispatchQueue(label: label).async(execute: work)
    }

    /// Runs `work` on a thread of its own once `delay` has passed, unless it is cancelled first.
    static func run(_ label: String, after delay: Duration, _ work: DispatchWorkItem) {
        DispatchQueue(label: label).asyncAfter(deadline: .now() + .nanoseconds(delay.saturatingNanoseconds), execute: work)
    }
}

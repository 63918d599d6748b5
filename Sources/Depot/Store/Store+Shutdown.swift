import Foundation

extension Store {
    /// Shuts the store down gracefully: new accesses fail at once with a
    /// `connection` error, accesses in flight may finish within `gracePeriod`,
    /// then those still running are interrupted (they fail with an
    /// `interrupted` error and roll back), and every connection is closed.
    ///
    /// ```swift
    /// await store.shutdown(gracePeriod: .seconds(10))   // on SIGTERM
    /// ```
    ///
    /// Cancelling the task that shuts down ends the grace period at once: what
    /// still runs is interrupted (a service manager cancels a shutdown that
    /// takes too long).
    ///
    /// Caveat: an access whose closure is busy in Swift code, not in a statement,
    /// is not interrupted; it fails at its next statement.
    public func shutdown(gracePeriod: Duration) async {
        gate.close()
        if await !gate.waitUntilEmpty(for: gracePeriod, endsOnCancel: true) {
            gate.interruptAll()
            // Interrupted statements end within a round trip; Swift code in a closure may take longer.
            _ = await gate.waitUntilEmpty(for: .seconds(30), endsOnCancel: false)
        }
        await close()
    }
}

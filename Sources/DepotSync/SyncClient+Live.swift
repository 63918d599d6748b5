import Depot
import Foundation

extension SyncClient {
    /// How ``syncContinuously(options:onSync:)`` waits and retries.
    public struct LiveOptions: Sendable {
        /// How long one wait for the server is held (a long poll); the server
        /// holds it at most ``SyncServer/longestWait``.
        public var waitTimeout: Duration = .seconds(25)
        /// How often to sync when the transport or its server cannot wait
        /// (``SyncTransport/wait(_:)`` returns nil).
        public var pollInterval: Duration = .seconds(30)
        /// The first pause after a failed sync or wait; each failure in a row
        /// doubles it, up to ``longestBackoff``.
        public var firstBackoff: Duration = .milliseconds(500)
        /// The longest pause after failures.
        public var longestBackoff: Duration = .seconds(60)

        /// The defaults: waits of 25 s, a poll every 30 s, back-off from 0.5 s to a minute.
        public init() {}

        /// The pause after `failures` failures in a row.
        func backoff(after failures: Int) -> Duration {
            var pause = firstBackoff
            for _ in 1..<max(1, min(failures, 32)) where pause < longestBackoff { pause *= 2 }
            return min(pause, longestBackoff)
        }
    }

    /// What one round of ``syncContinuously(options:onSync:)`` did.
    public enum LiveEvent: Sendable {
        /// A sync completed, with its report.
        case synced(SyncReport)
        /// A sync failed; the next one comes after `retryIn`.
        case failed(any Error, retryIn: Duration)
    }

    /// Syncs while the app runs: at once, then whenever this device has
    /// changes to push (an observation of its outbox) or the server has
    /// changes (a long poll, ``SyncTransport/wait(_:)``, which wakes within
    /// moments of a commit on any server instance), until the task is
    /// cancelled.
    ///
    /// ```swift
    /// let syncing = Task {
    ///     try await client.syncContinuously { event in
    ///         if case .failed(let error, let retryIn) = event { print("sync failed (\(error)); again in \(retryIn)") }
    ///     }
    /// }
    /// // ... when the app goes to the background:
    /// syncing.cancel()
    /// ```
    ///
    /// Nothing is lost when the connection drops: a wake is only a hint,
    /// and each round is a whole ``sync()``, which goes on where a cut one
    /// stopped. A failed round is tried again after a pause that doubles with
    /// each failure in a row (``LiveOptions``); so is a failed wait. Where the
    /// transport cannot wait, the client syncs every ``LiveOptions/pollInterval``.
    ///
    /// - Throws: `CancellationError` when the task is cancelled; any error of
    ///   the replica itself (not a failure to reach the server) ends it too.
    public func syncContinuously(options: LiveOptions = LiveOptions(),
                                 onSync: (@Sendable (LiveEvent) -> Void)? = nil) async throws {
        // The outbox is observed (a replica installed before this existed was not made observable).
        try await store.write { db in try db.enableObservation(of: [SyncTables.outbox]) }
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let server = Task { await watchServer(options, wake) }
        let outbox = Task {
            do {
                for try await pending in store.observe({ db in try db.pendingSyncChangeCount() }) where pending > 0 { wake.yield() }
            } catch {
                // The outbox cannot be observed: this device's changes go at each poll instead.
                guard !Task.isCancelled else { return }
                onSync?(.failed(error, retryIn: options.pollInterval))
                while !Task.isCancelled {
                    try? await Task.sleep(for: options.pollInterval)
                    wake.yield()
                }
            }
        }
        defer {
            server.cancel()
            outbox.cancel()
            wake.finish()
        }
        wake.yield()
        var failures = 0
        for await _ in wakes {
            try Task.checkCancellation()
            do {
                let report = try await sync()
                failures = 0
                onSync?(.synced(report))
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as DatabaseError where error.kind == .misuse {
                // The replica itself (no replica, a schema that does not fit): retrying changes nothing.
                throw error
            } catch {
                failures += 1
                let pause = options.backoff(after: failures)
                onSync?(.failed(error, retryIn: pause))
                try await Task.sleep(for: pause)
                wake.yield()
            }
        }
        throw CancellationError()
    }

    /// Wakes the loop each time the server's version passes what this
    /// device last heard of, by long polls (or by polling, where the
    /// transport cannot wait), until cancelled.
    private func watchServer(_ options: LiveOptions, _ wake: AsyncStream<Void>.Continuation) async {
        var heard: Int64 = 0
        var failures = 0
        while !Task.isCancelled {
            do {
                let cursor = try await store.read { db in try Self.state(db).cursor_version }
                let after = max(cursor, heard)
                let seconds = Int(min(max(options.waitTimeout.components.seconds, 1), 60))
                guard let answer = try await transport.wait(SyncWait(after: after, timeout: seconds)) else {
                    try await Task.sleep(for: options.pollInterval)
                    wake.yield()
                    continue
                }
                failures = 0
                if answer.head > after {
                    heard = answer.head
                    wake.yield()
                }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                try? await Task.sleep(for: options.backoff(after: failures))
            }
        }
    }
}

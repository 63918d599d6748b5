import DepotSync
import Logging
import ServiceLifecycle

/// Keeps a sync server's log bounded: compacts it when the server starts and
/// then once a period (``SyncServer/compact(olderThan:now:)``), until the
/// service group shuts down. A compaction that fails is logged and tried
/// again at the next period: it never stops the server.
struct SyncCompactionService: Service {
    let server: SyncServer
    /// How long a deleted row is remembered: the longest a device may stay offline and still sync without starting over.
    let keep: Duration
    /// The time between two compactions.
    let period: Duration
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let done = try await server.compact(olderThan: keep)
                    logger.info("sync log compacted", metadata: [
                        "horizon": "\(done.horizon)", "tombstones": "\(done.tombstones)", "notes": "\(done.notes)",
                    ])
                } catch {
                    logger.error("sync log compaction failed", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: period)
            }
        }
    }
}

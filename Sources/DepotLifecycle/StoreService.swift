import Depot
import ServiceLifecycle

/// A store as a service of a swift-service-lifecycle `ServiceGroup`: when the
/// group shuts down gracefully (SIGTERM, say), the store refuses new accesses,
/// lets those in flight finish within `gracePeriod`, interrupts the rest and
/// closes every connection.
///
/// ```swift
/// let store = try await Store.postgres(configuration)
/// let group = ServiceGroup(configuration: .init(
///     services: [StoreService(store), httpServer],   // shut down in reverse: the server first
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger))
/// try await group.run()
/// ```
///
/// List the store before the services that use it: a group shuts its services
/// down in reverse order, so requests stop before the store does.
public struct StoreService: Service {
    /// The store this service shuts down.
    public let store: Store
    /// How long accesses in flight may run once shutdown starts.
    public let gracePeriod: Duration

    /// The service of `store`.
    public init(_ store: Store, gracePeriod: Duration = .seconds(10)) {
        self.store = store
        self.gracePeriod = gracePeriod
    }

    /// Waits for the group's graceful shutdown (or cancellation), then shuts the store down.
    public func run() async throws {
        // Throws only when the task is cancelled: shut down then as well.
        try? await gracefulShutdown()
        await store.shutdown(gracePeriod: gracePeriod)
    }
}

import Foundation

extension Store {
    /// A store over a server's driver, with the server checked now: one
    /// writer connection is opened and closed, so an unreachable server or a
    /// wrong password fails here rather than at the first access.
    ///
    /// A backend's store factory is this one call:
    ///
    /// ```swift
    /// public static func myEngine(_ configuration: MyEngineConfiguration) async throws -> Store {
    ///     try await Store.connecting(MyEngineDriver(configuration), configuration: configuration.store)
    /// }
    /// ```
    ///
    /// With ``Configuration/waitsForServer`` set, nothing is opened now: a
    /// server that boots after the app is fine, and accesses wait for it up
    /// to the checkout timeout.
    ///
    /// Caveat: the connection opens on a thread of its own, since opening
    /// blocks; the caller's task waits without holding a thread of the
    /// cooperative pool.
    ///
    /// - Throws: the driver's error from opening the connection.
    public static func connecting(_ driver: some DatabaseDriver, configuration: Configuration) async throws -> Store {
        if configuration.waitsForServer {
            return Store(driver: driver, configuration: configuration)
        }
        try await OffPool.value("depot.open") { try driver.openConnection(.writer).close() }
        return Store(driver: driver, configuration: configuration)
    }
}

import Depot
import DepotMariaDB
import Foundation

/// Fresh, empty databases on a MariaDB server, one per store, dropped when
/// you are done: for tests and conformance runs. The server's user must be
/// allowed to create and drop the databases `depot_*`.
///
/// ```swift
/// let scratch = MariaDBScratchDatabases(base: try MariaDBConfiguration(url: url))
/// let store = try await scratch.makeStore()
/// // ...
/// await store.close()
/// await scratch.dropAll()
/// ```
public final class MariaDBScratchDatabases: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    /// The server and credentials; each store gets its own database on it.
    public let base: MariaDBConfiguration

    /// Scratch databases on the server `base` names.
    public init(base: MariaDBConfiguration) { self.base = base }

    /// A store on a new database `depot_<random>` in `utf8mb4_nopad_bin`.
    public func makeStore(_ configuration: Store.Configuration = Store.Configuration(), maxConnections: Int? = nil) async throws -> Store {
        let name = try await makeDatabase()
        var fresh = base.with(database: name)
        fresh.store = configuration
        if let maxConnections { fresh.maxConnections = maxConnections }
        return try await Store.mariadb(fresh)
    }

    /// A new, empty database `depot_<random>` in `utf8mb4_nopad_bin`: its name.
    public func makeDatabase() async throws -> String {
        let name = "depot_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try await Store.mariadb(base)
        do {
            try await admin.write { db in
                try db.execute("CREATE DATABASE \(ident: name) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin")
            }
        } catch {
            await admin.close()
            throw error
        }
        await admin.close()
        lock.withLock { names.append(name) }
        // On a cluster, another node applies the CREATE DATABASE a moment
        // later, and a store connecting to it before then meets "Unknown
        // database" (1049). A read through each node waits (wsrep_sync_wait)
        // for everything the cluster committed before it, this included.
        if base.nodes.count > 1 {
            for node in base.nodes {
                var one = base
                one.nodes = [node]
                one.maxConnections = 1
                let store = try await Store.mariadb(one)
                do {
                    _ = try await store.read { db in
                        try db.fetchOne(Int.self, "SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = \(name)")
                    }
                } catch {
                    await store.close()
                    throw error
                }
                await store.close()
            }
        }
        return name
    }

    /// Drops every database made so far (close their stores first).
    public func dropAll() async {
        let names = lock.withLock {
            defer { self.names = [] }
            return self.names
        }
        guard !names.isEmpty, let admin = try? await Store.mariadb(base) else { return }
        for name in names {
            _ = try? await admin.write { db in try db.execute("DROP DATABASE IF EXISTS \(ident: name)") }
        }
        await admin.close()
    }
}

import Depot
import DepotConformance
import DepotPostgres
import DepotSQLite
import Foundation

// depot-conformance: runs Depot's conformance suite against a database you name,
// so you can check a server (a managed PostgreSQL, a newer version) or a file
// system before you rely on it.

let usage = """
    usage: depot-conformance DATABASE [--filter TEXT]

      DATABASE   an SQLite path (each check uses fresh files in a temporary folder beside it),
                 :memory: for in-memory SQLite, or a postgres://user:password@host:port/db URL
                 (each check uses a fresh schema, dropped afterwards; the role needs CREATE on the database).
                 A primary and its standbys, postgres://user@primary:5432,standby:5432/db, run every
                 check's reads on a standby; ?pgbouncer=true&listener=host:port goes through PgBouncer
                 in transaction mode (LISTEN, for observations, at the server itself)
      --filter   run only the checks whose name contains TEXT

    Prints one line per check and a summary; exits 1 when a check fails, 2 when the database cannot be used.
    """

func fail(_ message: String) -> Never { ConformanceRunnerArguments.fail("depot-conformance", message) }

let arguments = ConformanceRunnerArguments.parse(command: "depot-conformance", usage: usage)
let (target, filter) = (arguments.target, arguments.filter)

/// Makes fresh stores on the target and removes what they left behind.
final class Target: @unchecked Sendable {
    let name: String
    private let lock = NSLock()
    private var schemas: [String] = []
    private var folders: [URL] = []
    private let postgres: PostgresConfiguration?
    private let sqliteFolder: URL?

    init(_ target: String) throws {
        if PostgresConfiguration.isURL(target) {
            let configuration = try PostgresConfiguration(url: target)
            postgres = configuration
            sqliteFolder = nil
            name = "PostgreSQL \(configuration)"
        } else if target == ":memory:" {
            postgres = nil
            sqliteFolder = nil
            name = "SQLite \(Store.sqliteVersion), in memory"
        } else {
            postgres = nil
            let parent = URL(fileURLWithPath: target).deletingLastPathComponent()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: parent.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw DatabaseError(.connection, "the folder \(parent.path) does not exist")
            }
            sqliteFolder = parent
            name = "SQLite \(Store.sqliteVersion), files in \(parent.path)"
        }
    }

    func makeStore(_ configuration: Store.Configuration) async throws -> Store {
        if var postgres {
            let schema = "depot_conformance_" + UUID().uuidString.prefix(8).lowercased()
            postgres.searchPath = schema
            postgres.store = configuration
            // With standbys, each store reads its own writes there: the answers must be the primary's.
            if postgres.hosts.count > 1, postgres.store.readYourWritesTimeout == nil {
                postgres.store.readYourWritesTimeout = .seconds(10)
            }
            let store = try await Store.postgres(postgres)
            // Made through the store itself, so its reads on a standby wait for the schema too.
            do {
                try await store.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
            } catch {
                await store.close()
                throw error
            }
            lock.withLock { schemas.append(schema) }
            return store
        }
        var sqlite = SQLiteConfiguration()
        sqlite.store = configuration
        guard let sqliteFolder else { return Store.sqliteInMemory(sqlite) }
        let folder = sqliteFolder.appendingPathComponent(".depot-conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        lock.withLock { folders.append(folder) }
        return try Store.sqlite(at: folder.appendingPathComponent("check.sqlite").path, sqlite)
    }

    func cleanUp() async {
        let (schemas, folders) = lock.withLock { (self.schemas, self.folders) }
        lock.withLock { self.schemas = []; self.folders = [] }
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
        guard let postgres, !schemas.isEmpty, let admin = try? await Store.postgres(postgres) else { return }
        for schema in schemas {
            _ = try? await admin.write { db in try db.execute("DROP SCHEMA \(ident: schema) CASCADE") }
        }
        await admin.close()
    }
}

/// Where a PostgreSQL store's reads run, and whether that server is a standby.
func readServer(_ configuration: PostgresConfiguration) async throws -> (standby: Bool, server: String) {
    let store = try await Store.postgres(configuration)
    let answer = await Result(catching: {
        try await store.read { db in
            let standby = try db.fetchOne(Bool.self, "SELECT pg_is_in_recovery()") ?? false
            let server = try db.fetchOne(String.self, "SELECT coalesce(host(inet_server_addr()) || ':' || inet_server_port(), 'a Unix socket')") ?? "?"
            return (standby, server)
        }
    })
    await store.close()
    return try answer.get()
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

let runner: Target
var notes: [String] = []
do {
    runner = try Target(target)
    if PostgresConfiguration.isURL(target) {
        let configuration = try PostgresConfiguration(url: target)
        let (standby, server) = try await readServer(configuration)
        if standby, configuration.hosts.count == 1 {
            fail("""
                \(server) is a read-only hot standby: every check writes its own tables first, so none can run against a standby alone. \
                Name its primary first (postgres://user@primary:port,standby:port/db) to run every check with its reads on the standby.
                """)
        }
        if configuration.hosts.count > 1 {
            notes.append(standby
                ? "reads run on the hot standby at \(server), each store waiting there for its own writes; writes and observations run on the primary"
                : "no standby answered: reads run on the primary at \(server)")
        }
        if configuration.transactionPooling {
            notes.append("through a pooler in transaction mode: no named prepared statements, session settings in every transaction"
                + (configuration.listenerHosts == nil ? "; the observation checks need listener=host:port (the server itself) and fail without it" : ""))
        }
    }
    // Fail early, with one line, when the database cannot be reached at all.
    await runner.cleanUp()
    let probe = try await runner.makeStore(Store.Configuration())
    await probe.close()
    await runner.cleanUp()
} catch {
    fail("\(error)")
}

let failed = await ConformanceSuite.runPrinting(against: runner.name, notes: notes, filter: filter,
                                                makeStore: { try await runner.makeStore($0) }, cleanUp: { await runner.cleanUp() })
exit(failed == 0 ? 0 : 1)

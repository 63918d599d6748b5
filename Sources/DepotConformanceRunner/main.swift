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
                 (each check uses a fresh schema, dropped afterwards; the role needs CREATE on the database)
      --filter   run only the checks whose name contains TEXT

    Prints one line per check and a summary; exits 1 when a check fails, 2 when the database cannot be used.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("depot-conformance: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var filter: String?
if let index = arguments.firstIndex(of: "--filter") {
    guard index + 1 < arguments.count else { fail("--filter needs a text\n\n\(usage)") }
    filter = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
}
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
guard arguments.count == 1, let target = arguments.first else { fail("name one database\n\n\(usage)") }

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
            let admin = try await Store.postgres(postgres)
            try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
            await admin.close()
            lock.withLock { schemas.append(schema) }
            postgres.searchPath = schema
            postgres.store = configuration
            return try await Store.postgres(postgres)
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

let runner: Target
do {
    runner = try Target(target)
    // Fail early, with one line, when the database cannot be reached at all.
    await runner.cleanUp()
    let probe = try await runner.makeStore(Store.Configuration())
    await probe.close()
    await runner.cleanUp()
} catch {
    fail("\(error)")
}

let checks = ConformanceSuite.checks.filter { check in filter.map { check.name.contains($0) } ?? true }
print("Depot conformance: \(checks.count) checks against \(runner.name)")
var passed = 0
var failed = 0
for check in checks {
    let started = Date()
    do {
        try await check.run(using: { try await runner.makeStore($0) })
        passed += 1
        print("PASS  \(check.name)  (\(Int(Date().timeIntervalSince(started) * 1000)) ms)")
    } catch {
        failed += 1
        let reason = "\(error)".replacingOccurrences(of: "\(check.name): ", with: "")
        print("FAIL  \(check.name)\n      \(reason)")
    }
    await runner.cleanUp()
}
print("\(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)

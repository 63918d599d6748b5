import Depot
import DepotConformance
import DepotMariaDB
import DepotMariaDBTesting
import Foundation

// depot-conformance-mariadb: Depot's conformance suite against a MariaDB server
// you name, as depot-conformance runs it against SQLite and PostgreSQL.

let usage = """
    usage: depot-conformance-mariadb URL [--filter TEXT]

      URL        mariadb://user:password@host:port/db: each check uses fresh databases depot_<random>,
                 dropped afterwards (the user needs CREATE and DROP on them)
      --filter   run only the checks whose name contains TEXT

    Prints one line per check and a summary; exits 1 when a check fails, 2 when the server cannot be used.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("depot-conformance-mariadb: \(message)\n".utf8))
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
guard arguments.count == 1, let url = arguments.first else { fail("name one server\n\n\(usage)") }

let scratch: MariaDBScratchDatabases
do {
    scratch = MariaDBScratchDatabases(base: try MariaDBConfiguration(url: url))
    // Fail early, with one line, when the server cannot be used at all.
    let probe = try await scratch.makeStore()
    await probe.close()
    await scratch.dropAll()
} catch {
    fail("\(error)")
}
let failed = await ConformanceSuite.runPrinting(against: "MariaDB \(scratch.base)", filter: filter,
                                                makeStore: { try await scratch.makeStore($0) }, cleanUp: { await scratch.dropAll() })
exit(failed == 0 ? 0 : 1)

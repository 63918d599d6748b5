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

let arguments = ConformanceRunnerArguments.parse(command: "depot-conformance-mariadb", usage: usage)

let scratch: MariaDBScratchDatabases
do {
    scratch = MariaDBScratchDatabases(base: try MariaDBConfiguration(url: arguments.target))
    // Fail early, with one line, when the server cannot be used at all.
    let probe = try await scratch.makeStore()
    await probe.close()
    await scratch.dropAll()
} catch {
    ConformanceRunnerArguments.fail("depot-conformance-mariadb", "\(error)")
}
let failed = await ConformanceSuite.runPrinting(against: "MariaDB \(scratch.base)", filter: arguments.filter,
                                                makeStore: { try await scratch.makeStore($0) }, cleanUp: { await scratch.dropAll() })
exit(failed == 0 ? 0 : 1)

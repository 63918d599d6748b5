import DepotDifferential
import Foundation
import Testing

/// Every differential check of `DepotDifferential` (the query fuzzer, the
/// property checks, the reminders scenario) with SQLite as the reference and
/// PostgreSQL under test. One at a time: each fills both engines.
@Suite(.serialized, .enabled(if: Engines.canRun, Engines.missingServer))
struct DifferentialTests {
    /// Every check, or those whose name contains `DEPOT_DIFFERENTIAL_CHECK` (to replay one with its seed).
    static var checks: [DifferentialCheck] {
        guard let only = ProcessInfo.processInfo.environment["DEPOT_DIFFERENTIAL_CHECK"] else { return DifferentialCheck.all }
        return DifferentialCheck.all.filter { $0.name.contains(only) }
    }

    @Test(arguments: checks)
    func postgresAgreesWithSQLiteAndTheModel(_ check: DifferentialCheck) async throws {
        for failure in try await check.run(using: Engines.make) {
            Issue.record(Comment(rawValue: failure))
        }
    }
}

import DepotDifferential
import Testing

/// Every differential check of `DepotDifferential` (the query fuzzer, the
/// property checks, the reminders scenario) with SQLite as the reference and
/// PostgreSQL under test. One at a time: each fills both engines.
@Suite(.serialized, .enabled(if: Engines.canRun, Engines.missingServer))
struct DifferentialTests {
    @Test(arguments: DifferentialCheck.all)
    func postgresAgreesWithSQLiteAndTheModel(_ check: DifferentialCheck) async throws {
        for failure in try await check.run(using: Engines.make) {
            Issue.record(Comment(rawValue: failure))
        }
    }
}

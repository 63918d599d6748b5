import Depot
import Foundation

/// One engine of a differential check: its name, for failures, and a fresh store.
public struct DifferentialEngine: Sendable {
    /// How failures name the engine, such as `SQLite` or `MariaDB`.
    public var name: String
    /// A fresh, empty store on the engine.
    public var store: Store

    /// An engine named `name` with the fresh, empty `store`.
    public init(name: String, store: Store) {
        self.name = name
        self.store = store
    }
}

/// The two engines a differential check compares: a reference (SQLite, say)
/// and the engine under test, each on a fresh, empty store.
///
/// The check calls ``close()`` when it is done with them; that closes both
/// stores and runs the `cleanUp` the factory gave (dropping a scratch
/// database, removing a folder).
public struct DifferentialEngines: Sendable {
    /// The engine whose answers are taken as known: usually embedded SQLite.
    public let reference: DifferentialEngine
    /// The engine under test.
    public let subject: DifferentialEngine
    private let cleanUp: @Sendable () async -> Void

    /// Two engines; `cleanUp` runs after both stores are closed.
    public init(reference: DifferentialEngine, subject: DifferentialEngine, cleanUp: @escaping @Sendable () async -> Void = {}) {
        self.reference = reference
        self.subject = subject
        self.cleanUp = cleanUp
    }

    /// Both engines, the reference first.
    var both: [(name: String, store: Store)] { [(reference.name, reference.store), (subject.name, subject.store)] }

    /// Closes both stores, then cleans up.
    public func close() async {
        await reference.store.close()
        await subject.store.close()
        await cleanUp()
    }
}

/// Makes the two engines of one check, on fresh, empty stores with the given
/// settings. A backend's tests provide one: SQLite beside the engine under test.
public typealias DifferentialEngineFactory = @Sendable (Store.Configuration) async throws -> DifferentialEngines

/// One named differential check: random queries, values or a scenario run on
/// two engines and, where there is one, against a model of their meaning in
/// Swift. The `sync:` checks run a `SyncServer` on the engine under test
/// with devices on SQLite files. Every answer must agree, or both engines must refuse alike with the
/// typed error the model names.
///
/// A backend's tests run every check with SQLite as the reference:
///
/// ```swift
/// @Test(arguments: DifferentialCheck.all)
/// func agreesWithSQLite(_ check: DifferentialCheck) async throws {
///     for failure in try await check.run(using: Engines.make) {
///         Issue.record(Comment(rawValue: failure))
///     }
/// }
/// ```
///
/// Each random check prints its seed; the variable it names (`DEPOT_FUZZ_SEED`,
/// `DEPOT_PROPERTY_SEED`) replays it.
public struct DifferentialCheck: Sendable, CustomStringConvertible {
    /// A unique name that says what the check pins.
    public let name: String
    let body: @Sendable (DifferentialRun) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (DifferentialRun) async throws -> Void) {
        self.name = name
        self.body = body
    }

    public var description: String { name }

    /// Runs the check on engines from `makeEngines` and returns what disagreed,
    /// one message per difference (empty when the engines and the model agree).
    ///
    /// - Throws: an error that stopped the check itself (a server that went
    ///   away, a table that could not be created).
    public func run(using makeEngines: @escaping DifferentialEngineFactory) async throws -> [String] {
        let run = DifferentialRun(makeEngines: makeEngines)
        try await body(run)
        return run.failures
    }

    /// Every differential check, in the order they run.
    public static let all: [DifferentialCheck] = [
        DifferentialCheck("random queries give the same rows on both engines and in the model", QueryFuzz.randomQueries),
        DifferentialCheck("random keyset pages walk the same rows on both engines and in the model, forward, back and while rows change", QueryFuzz.randomKeysetPages),
        DifferentialCheck("random joins give the same pairs on both engines and in the model", QueryFuzz.randomJoins),
        DifferentialCheck("random three-table joins give the same triples on both engines and in the model", QueryFuzz.randomThreeTableJoins),
        DifferentialCheck("random aggregates over joins give the same groups on both engines and in the model", QueryFuzz.randomAggregatesOverJoins),
        DifferentialCheck("random aggregates give the same groups and values on both engines and in the model", QueryFuzz.randomAggregates),
        DifferentialCheck("random computed expressions give the same values on both engines and in the model", QueryFuzz.randomComputedExpressions),
        DifferentialCheck("random related-record loading gives the same records on both engines and in the model", QueryFuzz.randomIncluding),
        DifferentialCheck("random JSON paths read the same scalars on both engines and in the model", QueryFuzz.randomJSONPaths),
        DifferentialCheck("random searches find and rank the same records on both engines and in the model", QueryFuzz.randomSearches),
        DifferentialCheck("every cell decodes into every type the same on both engines", CellDecodingProperties.everyCellDecodesIntoEveryType),
        DifferentialCheck("every record round-trips exactly or is refused alike on both engines", RecordRoundTripProperties.everyRecordRoundTrips),
        DifferentialCheck("every operation under every strategy agrees on both engines", StrategyOperationProperties.everyOperationUnderEveryStrategy),
        DifferentialCheck("the reminders scenario gives the same answers on both engines", RemindersScenario.sameAnswersOnBothEngines),
        DifferentialCheck("sync: random histories with the server on this engine converge, lose nothing and resurrect nothing", SyncHistory.serverOnTheSubject),
        DifferentialCheck("sync: an account never reads nor writes another account's rows, and a refused push changes nothing the server keeps", SyncScenarios.accountsStayApart),
        DifferentialCheck("sync: a shared folder reaches the other account whole; unshared, it leaves that account's devices and their late edits are dropped", SyncScenarios.unsharedRowsLeave),
        DifferentialCheck("sync: an item moved out of a shared folder leaves the devices that no longer see it, its label with it", SyncScenarios.movedRowsLeave),
        DifferentialCheck("sync: through a transport that loses, repeats and delays, every acknowledged push is applied exactly once and every device converges", SyncScenarios.pushesApplyOnce),
        DifferentialCheck("sync: devices syncing continuously hear each other's edits without asking, woken by the server's commits", SyncScenarios.liveDevicesHearEachOther),
        DifferentialCheck("sync: the server's own edits for an account reach its devices, win over what they replace, keep a concurrent edit of another column and keep to the account's rights", SyncScenarios.serverEditsReachDevices),
    ]

    /// The check named `name`, if there is one.
    public static func named(_ name: String) -> DifferentialCheck? {
        all.first { $0.name == name }
    }
}

/// One run of a check: where it gets its engines and records what disagreed.
final class DifferentialRun: Sendable {
    private let makeEnginesBody: DifferentialEngineFactory
    private let recorded = Recorded()

    init(makeEngines: @escaping DifferentialEngineFactory) {
        self.makeEnginesBody = makeEngines
    }

    /// Two fresh engines with `configuration`; the check closes them.
    func makeEngines(_ configuration: Store.Configuration = Store.Configuration()) async throws -> DifferentialEngines {
        try await makeEnginesBody(configuration)
    }

    /// Records a difference; the run goes on.
    func record(_ message: String) {
        recorded.append(message)
    }

    /// Records `message` unless `condition` holds.
    func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { record(message()) }
    }

    var failures: [String] { recorded.all }

    /// The messages, behind a lock: a check may record from inside an access.
    private final class Recorded: @unchecked Sendable {
        // Unchecked: every member is read and written under `lock`.
        private let lock = NSLock()
        private var messages: [String] = []

        func append(_ message: String) {
            lock.lock()
            messages.append(message)
            lock.unlock()
        }

        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return messages
        }
    }
}

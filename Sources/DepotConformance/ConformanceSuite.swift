import Depot
import Foundation

/// Makes a fresh, empty store with the given settings. A backend's tests provide one.
public typealias StoreFactory = @Sendable (Store.Configuration) async throws -> Store

/// One named check of the contract between Depot's core and a backend.
public struct ConformanceCheck: Sendable, CustomStringConvertible {
    /// A unique name that says what the check pins, such as `constraints: unique violation is .unique`.
    public let name: String
    /// The capability the check needs, if any: a store without it skips the check.
    public let requirement: Capabilities.Requirement?
    /// Whether the check measures the whole process (its resident memory).
    ///
    /// Run such a check when no other test of the process runs: beside others,
    /// their allocations count as its own and it fails for what they do. Swift
    /// Testing runs suites in parallel, so give these checks a test function of
    /// their own and run it in a second `swift test --filter` (as `scripts/test`
    /// does with the functions named `…ProcessAlone`).
    public let needsTheProcessAlone: Bool
    let body: @Sendable (ConformanceContext) async throws -> Void

    init(_ name: String, requires requirement: Capabilities.Requirement? = nil, needsTheProcessAlone: Bool = false,
         _ body: @escaping @Sendable (ConformanceContext) async throws -> Void) {
        self.name = name
        self.requirement = requirement
        self.needsTheProcessAlone = needsTheProcessAlone
        self.body = body
    }

    public var description: String { name }

    /// Runs the check against stores from `makeStore`, each check on fresh ones.
    ///
    /// - Throws: a ``ConformanceFailure`` that says what differed from the contract;
    ///   an unexpected error is reported as a failure too.
    ///
    /// A check whose ``requirement`` the store's dialect does not meet throws
    /// ``ConformanceSkipped`` without running: report it as skipped, never as passed.
    public func run(using makeStore: @escaping StoreFactory) async throws {
        let context = ConformanceContext(makeStore: makeStore)
        if let requirement {
            let probe = try await context.makeStore()
            let capabilities = probe.dialect.capabilities
            await context.closeAll()
            guard requirement.isMet(by: capabilities) else { throw ConformanceSkipped(check: name, capability: requirement.name) }
        }
        do {
            try await body(context)
            await context.closeAll()
        } catch let failure as ConformanceFailure {
            await context.closeAll()
            throw ConformanceFailure("\(name): \(failure.message)")
        } catch {
            await context.closeAll()
            throw ConformanceFailure("\(name): unexpected error: \(error)")
        }
    }
}

/// A check that did not hold, with what differed.
public struct ConformanceFailure: Error, CustomStringConvertible, Sendable {
    /// What differed from the contract.
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A check that did not run: the store lacks the capability it needs.
public struct ConformanceSkipped: Error, CustomStringConvertible, Sendable {
    /// The check's name.
    public let check: String
    /// The capability the store declared missing.
    public let capability: String
    public var description: String { "\(check): skipped, the store declares no \(capability)" }
}

/// The outcome of one check, for runners that report rather than throw.
public struct ConformanceResult: Sendable {
    /// The check's name.
    public let name: String
    /// Nil when the check passed or was skipped; what differed when it failed.
    public let failure: String?
    /// The missing capability, when the check was skipped.
    public var skippedFor: String? = nil
    /// Whether the check ran and passed.
    public var passed: Bool { failure == nil && skippedFor == nil }
}

/// The shared conformance suite: every check a backend must pass.
///
/// Run it from a backend's tests, one test per check, the checks that measure
/// the whole process in a second function that runs alone:
///
/// ```swift
/// @Test(arguments: ConformanceSuite.names(for: MyEngine.capabilities, alone: false))
/// func conformance(_ name: String) async throws {
///     try await ConformanceSuite.check(named: name)?.run { configuration in
///         try await MyEngine.freshStore(configuration)
///     }
/// }
///
/// @Test(arguments: ConformanceSuite.names(for: MyEngine.capabilities, alone: true))
/// func conformanceProcessAlone(_ name: String) async throws {
///     try await conformance(name)
/// }
/// ```
///
/// Where engines truly differ, a check reads the store's `Capabilities` and
/// pins the documented behaviour for each. A check that needs a capability a
/// store declares missing (``ConformanceCheck/requirement``) is skipped by
/// capability, never by engine name, and reported as skipped with the capability.
public enum ConformanceSuite {
    /// Every check, in a stable order.
    public static let checks: [ConformanceCheck] =
        RoundTripChecks.all + DecodingErrorChecks.all + StrategyChecks.all + SQLChecks.all
        + ConstraintChecks.all + RecordChecks.all + VersionChecks.all + FindChecks.all + TransactionChecks.all + MigrationChecks.all + SchemaChecks.all
        + ConcurrencyChecks.all + StreamingChecks.all + ExactValueChecks.all + MappingChecks.all + StreamingChecks.inserts + StreamingChecks.exports + QueryChecks.all + QueryChecks.pages + QueryChecks.expressions + QueryChecks.including + QueryChecks.statements + QueryChecks.json + QueryChecks.search + QueryChecks.declared + QueryChecks.joins + LoggingChecks.all + MetricsChecks.all + TracingChecks.all + WriteRetryChecks.all + ObservationChecks.all + LiveQueryChecks.all + ReplicaChecks.all + StatementPathChecks.all + KeyChecks.all + BoundValueChecks.all + UpsertStatementChecks.all + InsertRowsChecks.all

    /// The checks a store with these capabilities can run: those whose
    /// ``ConformanceCheck/requirement`` it meets. List the others (and the
    /// capability each needs) where you document your backend.
    ///
    /// ```swift
    /// @Test(arguments: ConformanceSuite.checks(for: MyEngine.capabilities).map(\.name))
    /// ```
    public static func checks(for capabilities: Capabilities) -> [ConformanceCheck] {
        checks.filter { $0.requirement?.isMet(by: capabilities) ?? true }
    }

    /// The names of the checks a store with these capabilities can run (every
    /// check when `capabilities` is nil) that may run beside other tests of the
    /// process (`alone: false`), or that must have the process to themselves
    /// (`alone: true`, ``ConformanceCheck/needsTheProcessAlone``): give each list
    /// a `@Test` function of its own.
    public static func names(for capabilities: Capabilities? = nil, alone: Bool) -> [String] {
        let checks = capabilities.map { Self.checks(for: $0) } ?? Self.checks
        return checks.filter { $0.needsTheProcessAlone == alone }.map(\.name)
    }

    /// The check with this name.
    public static func check(named name: String) -> ConformanceCheck? {
        checks.first { $0.name == name }
    }

    /// Runs every check in turn and reports each outcome.
    public static func runAll(using makeStore: @escaping StoreFactory, progress: (ConformanceResult) -> Void = { _ in }) async -> [ConformanceResult] {
        var results: [ConformanceResult] = []
        for check in checks {
            let result: ConformanceResult
            do {
                try await check.run(using: makeStore)
                result = ConformanceResult(name: check.name, failure: nil)
            } catch let skipped as ConformanceSkipped {
                result = ConformanceResult(name: check.name, failure: nil, skippedFor: skipped.capability)
            } catch {
                result = ConformanceResult(name: check.name, failure: "\(error)")
            }
            progress(result)
            results.append(result)
        }
        return results
    }
}

/// What a check receives: fresh stores, closed when the check ends.
final class ConformanceContext: @unchecked Sendable {
    private let factory: StoreFactory
    private let lock = NSLock()
    private var stores: [Store] = []

    init(makeStore: @escaping StoreFactory) {
        self.factory = makeStore
    }

    /// How long a check's access waits for a connection when the check sets
    /// no checkout timeout of its own: the checkout timeout guards against an
    /// access waiting on one it holds, and a check never does, so it is long
    /// enough that a busy machine (a shared CI runner, a CPU hog on every
    /// core) is not taken for one. The default, 30 s, was: 32 reads queued on
    /// one connection took longer than that beside two hogs and a build.
    static let checkoutTimeout: Duration = .seconds(600)

    /// A fresh, empty store.
    func makeStore(_ configuration: Store.Configuration = Store.Configuration()) async throws -> Store {
        var configuration = configuration
        if configuration.checkoutTimeout == Store.Configuration().checkoutTimeout {
            configuration.checkoutTimeout = Self.checkoutTimeout
        }
        let store = try await factory(configuration)
        lock.withLock { stores.append(store) }
        return store
    }

    func closeAll() async {
        let open = lock.withLock { stores }
        for store in open { await store.close() }
    }
}

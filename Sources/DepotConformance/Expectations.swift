import Depot
import Foundation

/// Fails the check with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw ConformanceFailure(message()) }
}

/// Fails the check unless `actual == expected`, saying what was expected and what came.
func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
    if actual != expected {
        throw ConformanceFailure("\(what): expected \(expected), got \(actual)")
    }
}

/// Runs `body`, which must fail with a ``DatabaseError`` of `kind`; returns that error.
@discardableResult
func expectError<T>(_ kind: DatabaseError.Kind, _ what: String, _ body: () async throws -> T) async throws -> DatabaseError {
    do {
        let value = try await body()
        throw ConformanceFailure("\(what): expected a \(kind) error, but it succeeded with \(value)")
    } catch let error as DatabaseError {
        if error.kind != kind {
            throw ConformanceFailure("\(what): expected a \(kind) error, got \(error.kind): \(error)")
        }
        return error
    }
}

/// Fails unless `text` contains every one of `parts`.
func expectMentions(_ text: String, _ parts: [String], _ what: String) throws {
    for part in parts where !text.contains(part) {
        throw ConformanceFailure("\(what): expected the message to mention \"\(part)\", got: \(text)")
    }
}

/// Creates a table with portable column types on any engine.
func createTable(_ db: Database, _ name: String, _ columns: [(String, ColumnType, String)]) throws {
    let definitions = columns.map { column, type, constraints -> SQL in
        // A text primary key takes the engine's key text type.
        let typeName: SQL = type == .text && constraints.contains("PRIMARY KEY") ? "\(unsafeRaw: db.dialect.keyTextTypeName)" : "\(type: type)"
        return "\(ident: column) \(typeName)\(unsafeRaw: constraints.isEmpty ? "" : " " + constraints)"
    }
    try db.execute("CREATE TABLE \(ident: name) (\(SQL.join(definitions, separator: ", ")))")
}

/// A bound against a hang that works when Swift's cooperative pool does not:
/// after `seconds` it runs `action` (cancel the tasks under test, which ends
/// what they block on) on a thread of its own, and says so in ``fired``. A
/// check that finishes first disarms it. Not a timing bound: a check fails on
/// it only when what it waits for never happens.
final class Watchdog {
    private let state = State()

    init(after seconds: Int, _ action: @escaping @Sendable () -> Void) {
        let state = self.state
        OffPool.run("depot.conformance.watchdog", after: .seconds(seconds), DispatchWorkItem {
            if state.fire() { action() }
        })
    }

    /// A bound on a stall, not on the whole work: it fires when `progress`
    /// (a count the work raises as it goes) has not moved for `seconds`.
    /// Work that is slow (the thread sanitizer, a busy machine) but moves
    /// never trips it; work that hangs does, `seconds` after it stopped.
    init(stalledFor seconds: Int, progress: @escaping @Sendable () -> Int, _ action: @escaping @Sendable () -> Void) {
        let state = self.state
        @Sendable func look(after last: Int) {
            OffPool.run("depot.conformance.watchdog", after: .seconds(seconds), DispatchWorkItem {
                let now = progress()
                if now != last {
                    if !state.isDisarmed { look(after: now) }
                } else if state.fire() {
                    action()
                }
            })
        }
        look(after: progress())
    }

    /// Whether the bound passed and `action` ran.
    var fired: Bool { state.hasFired }

    /// Stops it firing.
    func disarm() { state.disarm() }

    private final class State: @unchecked Sendable {
        // Unchecked: both flags are read and written under `lock`.
        private let lock = NSLock()
        private var armed = true
        private var fired = false
        func fire() -> Bool {
            lock.withLock {
                if armed { fired = true }
                return armed
            }
        }
        func disarm() { lock.withLock { armed = false } }
        var isDisarmed: Bool { lock.withLock { !armed } }
        var hasFired: Bool { lock.withLock { fired } }
    }
}

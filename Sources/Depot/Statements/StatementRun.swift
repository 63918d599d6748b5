import Foundation
import Tracing

/// One run of one statement: the single path every statement of an access
/// takes, whether it is read whole (`fetchAll`, records, the query builder),
/// row by row (`cursor`, `forEach`, `rows`), or bound again and again (batch
/// inserts).
///
/// Starting a run checks that the access is usable, prepares the statement (or
/// reuses the connection's cached one), marks it busy, binds its values, and
/// starts its clock and span. Finishing it logs it, records its duration, ends
/// its span, resets and frees the statement, and, inside an observation's read,
/// records the tables it read. A failure is noted (an engine failure leaves the
/// transaction failed) and named with the SQL, and the values when the store
/// shows them.
struct StatementRun {
    let statement: any DriverStatement
    let text: String
    /// The bound values, kept only when something may need them after the
    /// bind: an error that shows them, a log line, an observation's read.
    private(set) var values: [Value]
    /// The connection's cache entry when the statement is the cached one, marked free when done.
    private let cached: CachedStatement?
    private var record: StatementRecord?

    // A run keeps five stored properties (80 bytes) and is inlined: with one
    // more (a flag for the bulk export), the compiler copied each run through
    // its value witnesses, and a lookup cost 4% more (Benchmarks/instructions,
    // lookup, @Columns: 23.04M against 22.22M instructions).
    /// Prepares (or reuses) the statement for `text`, binds `values`, and starts the run.
    /// With `copyingOut`, `text` is a SELECT read through the connection's bulk
    /// export path (``CopyingOutConnection``), prepared afresh.
    @inline(__always)
    init(_ db: Database, text: String, values: [Value], streaming: Bool = false, copyingOut: Bool = false) throws {
        try self.init(db, preparing: text, copyingOut: copyingOut)
        do {
            // The log, the duration metric and the span name a bulk export
            // (read through ``CopyingOutConnection``) `copy out: SELECT ...`.
            try begin(db, values: values, logged: copyingOut ? "copy out: " + text : text)
            if streaming { try statement.prepareForStreaming() }
        } catch {
            throw finish(db, failure: error)
        }
        db.cancellation.statementStarts()
    }

    /// Prepares (or reuses) the statement for `text` without running it: a
    /// batch insert's full-size statement, run once per group of rows with
    /// ``runAgain(_:values:)`` and released with ``release(_:)``.
    @inline(__always)
    init(_ db: Database, preparing text: String, copyingOut: Bool = false) throws {
        try db.checkUsable()
        if copyingOut {
            statement = try db.prepareCopyOut(text)
            cached = nil
        } else {
            (statement, cached) = try db.prepare(text)
            cached?.isBusy = true
        }
        self.text = text
        self.values = []
    }

    @inline(__always)
    private mutating func begin(_ db: Database, values: [Value], logged: String) throws {
        if db.keepsValues { self.values = values }
        record = StatementRecord.start(db, text: logged)
        try statement.bind(values)
    }

    /// Runs the prepared statement once more with `values`, its rows read and
    /// dropped; recorded as one statement. The statement stays prepared and busy.
    mutating func runAgain(_ db: Database, values: [Value]) throws {
        do {
            try begin(db, values: values, logged: text)
            while try statement.step() {}
        } catch {
            statement.reset()
            throw recordFailure(db, error, values: values)
        }
        record?.end(db, values: self.values, changes: statement.changes, error: nil)
        record = nil
        statement.reset()
    }

    /// Ends a run whose statement did all it was asked: logged, timed, traced;
    /// the statement reset and freed; the tables it read recorded for an observation.
    func finish(_ db: Database) throws {
        record?.end(db, values: values, changes: statement.changes, error: nil)
        release(db)
        guard let recorder = db.readRecorder else { return }
        do {
            recorder.record(try db.connection.readTracking?.tablesRead(bySQL: text, values: values) ?? nil)
        } catch let error as DatabaseError {
            throw error.with(sql: text, values: nil)
        }
    }

    /// Ends a run that failed: logged, timed and traced as failed, the statement
    /// reset and freed. Returns the error to throw, named with the SQL.
    func finish(_ db: Database, failure error: any Error) -> any Error {
        let named = recordFailure(db, error, values: values)
        release(db)
        return named
    }

    /// Notes the failure, names it with the SQL (and the values when shown),
    /// and records it. Returns the error to throw.
    private func recordFailure(_ db: Database, _ error: any Error, values: [Value]) -> any Error {
        let shown = db.settings.showsBoundValues ? values : nil
        let named: any Error
        switch error {
        case let error as DatabaseError:
            if error.isEngineFailure { db.noteEngineFailure() }
            named = error.with(sql: text, values: shown)
        case let error as DecodingError:
            named = DatabaseError(decoding: error, sql: text, values: shown)
        default:
            named = error
        }
        record?.end(db, values: values, changes: nil, error: named)
        return named
    }

    /// Ends a run that stopped early without failing (a cursor closed before its
    /// last row): as ``finish(_:)``, but a failure to tell the tables read makes
    /// an observation depend on every table instead of throwing.
    func finishQuietly(_ db: Database) {
        do {
            try finish(db)
        } catch {
            db.readRecorder?.record(nil)
        }
    }

    /// Resets the statement and gives it back to the connection's cache.
    func release(_ db: Database) {
        statement.reset()
        cached?.isBusy = false
    }
}

/// What is recorded of every statement, and of every bulk insert: a log line,
/// a duration metric and a span. Made only when the access logs, times or
/// traces statements: otherwise a statement carries a nil reference and pays
/// nothing else.
final class StatementRecord {
    private let start: ContinuousClock.Instant?
    private let span: (any Span)?
    /// How the log names the statement.
    private let text: String

    /// A record for a statement of `db`, or nil when the access records nothing.
    @inline(__always)
    static func start(_ db: Database, text: String) -> StatementRecord? {
        guard db.recordsStatements else { return nil }
        return StatementRecord(db, text: text)
    }

    private init(_ db: Database, text: String) {
        start = db.log != nil || db.metrics != nil ? .now : nil
        span = db.tracing.map { $0.startStatement(text) }
        self.text = text
    }

    /// Logs the statement, records its duration and ends its span.
    func end(_ db: Database, values: [Value], changes: Int?, error: (any Error)?) {
        if let start {
            let duration = ContinuousClock.now - start
            db.metrics?.statement(nanoseconds: duration.saturatingNanoseconds, error: error)
            db.log?.statement(text, values: values, duration: duration, changes: changes, error: error)
        }
        if let span { AccessTracing.end(span, error: error) }
    }
}

extension Database {
    /// Prepares (or reuses) the statement for `sql`, binds its values and gives it to `body`.
    func withStatement<T>(_ sql: SQL, _ body: (any DriverStatement, _ text: String) throws -> T) throws -> T {
        try checkUsable()
        let (text, values) = try sql.rendered(for: dialect)
        return try withStatement(text: text, values: values, body)
    }

    /// Runs one statement through ``StatementRun``: `body` steps through its rows.
    func withStatement<T>(text: String, values: [Value], streaming: Bool = false, copyingOut: Bool = false,
                          _ body: (any DriverStatement, _ text: String) throws -> T) throws -> T {
        let run = try StatementRun(self, text: text, values: values, streaming: streaming, copyingOut: copyingOut)
        let result: T
        do {
            result = try body(run.statement, text)
        } catch {
            throw run.finish(self, failure: error)
        }
        try run.finish(self)
        return result
    }
}

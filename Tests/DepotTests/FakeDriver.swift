@testable import Depot
import Foundation

/// A deliberately odd dialect: `:p1` placeholders, `[bracket]` quoting, made-up
/// type names and a made-up BEGIN. Any SQL that bypasses the dialect shows up in
/// the recorded statements.
struct OddDialect: SQLDialect {
    var engineName: String { "Odd" }
    func placeholder(_ index: Int) -> String { ":p\(index)" }
    func quote(identifier: String) -> String { "[" + identifier.replacingOccurrences(of: "]", with: "]]") + "]" }
    func typeName(_ type: ColumnType) -> String { "ODD_" + type.rawValue.uppercased() }
    var maxBoundValues: Int { 10 }
    var capabilities: Capabilities { Capabilities(concurrentReadsDuringWrite: false) }
    var batchInsertRows: Int { 3 }
}

/// The query builder's meanings, spelled oddly: without FILTER, IS DISTINCT
/// FROM, NULLS FIRST/LAST, TRUE/FALSE or LIKE ... ESCAPE, as an engine that has
/// none of them would (MariaDB lacks most).
extension OddDialect: QueryDialect {
    func binaryCollated(_ text: SQL, ordering: Bool) -> SQL { "BYTES(\(text))" }
    func asciiLowercased(_ text: SQL) -> SQL { "LOWER_AZ(\(text))" }
    func position(of needle: SQL, in text: SQL) -> SQL { "FIND(\(needle), \(text))" }
    func suffix(of text: SQL, count: SQL) -> SQL { "TAIL(\(text), \(count))" }
    func offsetWithoutLimit(_ offset: SQL) -> SQL { "SKIP \(offset)" }
    func integerSum(_ expression: SQL) -> SQL { "EXACT_SUM(\(expression))" }
    func integerArithmetic(_ op: ArithmeticOperator, _ lhs: SQL, _ rhs: SQL) -> SQL { "CHECKED(\(lhs) \(unsafeRaw: op.rawValue) \(rhs))" }
    func average(_ expression: SQL) -> SQL { "MEAN(\(expression))" }
    func jsonPath(_ path: [JSONPathComponent]) -> Value { .text("\(path)") }
    func jsonScalar(_ kind: JSONScalarKind, in document: SQL, at path: SQL) -> SQL { "JSON_\(unsafeRaw: "\(kind)")(\(document), \(path))" }
    func booleanExtreme(_ expression: SQL, max: Bool) -> SQL { (max ? "ANY_TRUE(" : "ALL_TRUE(") + expression + ")" }
    func booleanLiteral(_ value: Bool) -> String { value ? "1=1" : "1=0" }
    func isNotDistinct(_ lhs: SQL, _ rhs: SQL, negated: Bool) -> SQL { (negated ? "NOT " : "") + "\(lhs) <=> \(rhs)" }
    func like(_ subject: SQL, pattern: SQL, escape: SQL) -> SQL { "MATCHES(\(subject), \(pattern), \(escape))" }
    var hasAggregateFilter: Bool { false }
    func ordering(_ expression: SQL, descending: Bool, nullsFirst: Bool) -> SQL {
        "(\(expression) IS NULL) \(unsafeRaw: nullsFirst ? "DESC" : "ASC"), \(expression) \(unsafeRaw: descending ? "DESC" : "ASC")"
    }
}

/// What the fake engine was asked to do, shared by its connections.
final class FakeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    /// Rows the next query returns, by SQL prefix.
    var responses: [(prefix: String, columns: [String], rows: [[Value]])] = []
    /// SQL prefixes that fail with this error.
    var failures: [(prefix: String, error: DatabaseError)] = []
    /// A statement that starts with this fails and ends the whole transaction,
    /// as SQLite does on an interrupt (its savepoints go with it).
    var endsTransaction: String? {
        get { lock.withLock { transactionEnder } }
        set { lock.withLock { transactionEnder = newValue } }
    }
    private var transactionEnder: String?
    private var transactionEndedFlag = false
    /// Whether a statement ended the transaction; cleared by the next BEGIN.
    var transactionEnded: Bool {
        get { lock.withLock { transactionEndedFlag } }
        set { lock.withLock { transactionEndedFlag = newValue } }
    }
    /// Runs as a COMMIT is sent, on the connection's thread: it may block, or throw what the engine would.
    var onCommit: (@Sendable () throws -> Void)? {
        get { lock.withLock { commitHook } }
        set { lock.withLock { commitHook = newValue } }
    }
    private var commitHook: (@Sendable () throws -> Void)?
    /// Runs when the core interrupts the connection, on the caller's thread: it
    /// may block, as a cancel request over the network does.
    var onInterrupt: (@Sendable () -> Void)? {
        get { lock.withLock { interruptHook } }
        set { lock.withLock { interruptHook = newValue } }
    }
    private var interruptHook: (@Sendable () -> Void)?

    private var openings = 0
    /// How many connections the driver opened.
    var opened: Int { lock.withLock { openings } }
    func recordOpening() { lock.withLock { openings += 1 } }

    func record(_ entry: String) { lock.withLock { entries.append(entry) } }
    var all: [String] { lock.withLock { entries } }
    func clear() { lock.withLock { entries.removeAll() } }
}

struct FakeDriver: DatabaseDriver {
    let log: FakeLog
    var databaseLivesInItsConnection = false
    var dialect: any SQLDialect { OddDialect() }
    var poolLayout: PoolLayout { .single }
    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection {
        log.recordOpening()
        return FakeConnection(log: log)
    }
}

final class FakeConnection: DriverConnection {
    let log: FakeLog
    var depth = 0
    init(log: FakeLog) { self.log = log }

    func prepare(_ sql: String) throws -> any DriverStatement { FakeStatement(sql: sql, log: log) }

    func execute(script: String) throws {
        log.record(script)
        if let failure = log.failures.first(where: { script.hasPrefix($0.prefix) }) { throw failure.error }
    }

    // An odd BEGIN of its own; the other transaction statements are the SPI's standard defaults.
    func beginTransaction(_ transaction: TransactionOptions) throws {
        try execute(script: (transaction.isReadOnly ? "ODD BEGIN READ" : "ODD BEGIN WRITE") + (transaction.isolation.map { " " + $0.rawValue } ?? ""))
        depth = 1
        log.transactionEnded = false
    }

    func commitTransaction() throws {
        try execute(script: "COMMIT")
        try log.onCommit?()
        depth = 0
    }

    func rollbackTransaction() throws {
        try execute(script: "ROLLBACK")
        depth = 0
    }

    var isInTransaction: Bool { depth > 0 && !log.transactionEnded }

    func rollbackToSavepoint(named name: String) throws {
        try execute(script: "ROLLBACK TO SAVEPOINT " + name)
        if log.transactionEnded { throw DatabaseError(.syntax, "no such savepoint: " + name) }
    }
    var isUsable: Bool { true }
    func interrupt() {
        log.record("INTERRUPT")
        log.onInterrupt?()
    }
    func close() {}
}

final class FakeStatement: DriverStatement {
    let sql: String
    let log: FakeLog
    var columns: ColumnSet
    var rows: [[Value]] = []
    var position = -1
    var values: [Value] = []

    init(sql: String, log: FakeLog) {
        self.sql = sql
        self.log = log
        let response = log.responses.first { sql.hasPrefix($0.prefix) }
        columns = ColumnSet(response?.columns ?? [])
    }

    func bind(_ values: [Value]) throws {
        self.values = values
        position = -1
        rows = log.responses.first { sql.hasPrefix($0.prefix) }?.rows ?? []
    }

    func step() throws -> Bool {
        if position == -1 {
            log.record(sql + (values.isEmpty ? "" : " <- " + values.map(\.description).joined(separator: ", ")))
            if let failure = log.failures.first(where: { sql.hasPrefix($0.prefix) }) { throw failure.error }
            if let ender = log.endsTransaction, sql.hasPrefix(ender) {
                log.transactionEnded = true
                throw DatabaseError(.interrupted, "interrupted")
            }
        }
        position += 1
        return position < rows.count
    }

    func reset() { position = -1 }

    /// The fake engine's word for a schema change: its statement begins with one.
    var changedSchema: Bool { ["CREATE", "DROP", "ALTER"].contains { sql.uppercased().hasPrefix($0) } }
    var changes: Int { 1 }
    func value(at index: Int) throws -> Value { rows[position][index] }
}

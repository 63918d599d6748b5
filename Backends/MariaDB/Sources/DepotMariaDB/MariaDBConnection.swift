import CMariaDB
import Depot
import Foundation

/// One Connector/C connection. Its session runs in UTC, compares text by code
/// point, and reads `"x"` as an identifier and `||` as concatenation (§1 of
/// the MariaDB notes), so SQL written for the other engines means the same here.
///
/// Reconnect is off: a silent reconnect would drop the transaction, the
/// session settings, prepared statements and named locks. A connection lost
/// while idle is opened again only when the send that failed was the access's
/// first, its `START TRANSACTION`: nothing of the access had reached the server.
final class MariaDBConnection: DriverConnection {
    private(set) var mysql: UnsafeMutablePointer<MYSQL>
    let configuration: MariaDBConfiguration
    /// Whether errors may quote the values the server reports (``Store/Configuration/showsBoundValues``).
    let showsValues: Bool
    /// Bumped by every reconnect: statements prepared before it are gone from the server.
    private(set) var generation = 0
    private(set) var isClosed = false
    private var isBroken = false
    /// Whether `START TRANSACTION` was sent and neither COMMIT nor ROLLBACK since.
    private var transactionOpen = false
    /// Whether this session holds a `GET_LOCK` lock, released after the transaction.
    var holdsNamedLock = false
    /// The migration lock row this session holds on a Galera cluster, deleted after the transaction.
    var heldLockRow: (key: Int64, holder: String, renewal: MariaDBLockRenewal)?
    /// The statement whose rows stream from the server, which holds the connection until drained.
    weak var streaming: MariaDBStatement?

    /// The tables each statement's plan reads, for observations.
    var explainedReads: [String: Set<String>] = [:]
    /// Tables known to carry Depot's triggers.
    var observableTables: Set<String> = []

    /// For ``interrupt()``, which comes from another thread.
    private let interruptLock = NSLock()
    private var serverThreadID: UInt = 0
    private var statementInFlight = false

    /// The node this session is on.
    private(set) var node: MariaDBConfiguration.Node
    /// Whether the node is a Galera cluster's.
    private(set) var isGalera: Bool
    /// Where the store's next connection starts, shared with the store's others.
    let cursor: MariaDBNodeCursor

    init(configuration: MariaDBConfiguration, cursor: MariaDBNodeCursor) throws {
        self.configuration = configuration
        self.cursor = cursor
        self.showsValues = configuration.store.showsBoundValues
        let session = try Self.connect(configuration, cursor: cursor)
        self.mysql = session.mysql
        self.node = session.node
        self.isGalera = session.isGalera
        do {
            try setUpSession()
        } catch {
            mysql_close(mysql)
            isClosed = true
            throw error
        }
    }

    /// The session settings every connection runs with. `innodb_snapshot_isolation`
    /// makes a write–write conflict at REPEATABLE READ fail (1020) instead of
    /// losing an update.
    private func setUpSession() throws {
        let wait = max(1, configuration.lockWaitTimeout)
        try run("""
            SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin;
            SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,\
            NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO,NO_BACKSLASH_ESCAPES,ANSI_QUOTES,PIPES_AS_CONCAT,\
            SIMULTANEOUS_ASSIGNMENT',
                time_zone = '+00:00', innodb_snapshot_isolation = ON,
                innodb_lock_wait_timeout = \(wait), lock_wait_timeout = \(wait),
                max_recursive_iterations = 4294967295
            """)
        if isGalera {
            // Every statement (reads, UPDATE and DELETE, INSERT and REPLACE,
            // SHOW: 1 + 2 + 4 + 8) first waits until this node has applied
            // every write the cluster committed before it: a write made on one
            // node is read, and is met by a duplicate key or a foreign key, on
            // any other, as on one server.
            try run("SET SESSION wsrep_sync_wait = 15")
        }
        interruptLock.withLock { serverThreadID = mysql_thread_id(mysql) }
    }

    /// Opens the session again after the server dropped it while idle.
    private func reconnect() throws {
        let fresh = try Self.connect(configuration, cursor: cursor)
        mysql_close(mysql)
        mysql = fresh.mysql
        node = fresh.node
        isGalera = fresh.isGalera
        generation += 1
        isBroken = false
        streaming = nil
        holdsNamedLock = false
        try setUpSession()
    }

    func prepare(_ sql: String) throws -> any DriverStatement {
        try finishStreaming()
        return try MariaDBStatement(connection: self, sql: sql)
    }

    func execute(script: String) throws {
        do {
            try run(script)
        } catch let error as DatabaseError {
            try afterStatement(failedWith: error)
            throw error
        }
        try afterStatement(failedWith: nil)
    }

    // MARK: Schema changes commit

    /// The open access's transaction, to begin again after a schema change committed it.
    private var transactionOptions: TransactionOptions?
    /// Bumped each time a statement committed the transaction by itself.
    private var implicitCommits = 0
    /// The ``implicitCommits`` count when each savepoint was made.
    private var savepoints: [String: Int] = [:]

    /// MariaDB commits before and after DDL (`CREATE`, `ALTER`, `DROP`…), even
    /// one that fails. When a statement left the access's transaction
    /// committed, a new one begins at once, so the rest of the access stays one
    /// transaction; savepoints made before are gone with the old one.
    ///
    /// - Returns: whether the statement committed the transaction by itself:
    ///   the server's word that it changed the schema (or, rarely, was another
    ///   statement that commits, such as `LOCK TABLES`: forgetting then costs a re-prepare).
    @discardableResult
    func afterStatement(failedWith error: DatabaseError?) throws -> Bool {
        guard let options = transactionOptions, !isBroken,
              mysql.pointee.server_status & UInt32(SERVER_STATUS_IN_TRANS) == 0 else { return false }
        // A deadlock or a snapshot conflict rolled the transaction back: the core rolls back too.
        if let error, error.kind == .serialization || error.kind == .connection { return false }
        implicitCommits += 1
        try run(MariaDBDialect.begin(options))
        return true
    }

    /// Whether an access's transaction is open on this connection (the core began one).
    var inAccessTransaction: Bool { transactionOptions != nil }

    func createSavepoint(named name: String) throws {
        try execute(script: "SAVEPOINT " + name)
        savepoints[name] = implicitCommits
    }

    /// Keeps the work since the savepoint: nothing to do when a schema change
    /// already committed it.
    func releaseSavepoint(named name: String) throws {
        let madeIn = savepoints.removeValue(forKey: name)
        guard madeIn == nil || madeIn == implicitCommits else { return }
        try execute(script: "RELEASE SAVEPOINT " + name)
    }

    /// Fails with `misuse` when a schema change committed the work since the savepoint.
    func rollbackToSavepoint(named name: String) throws {
        if let madeIn = savepoints[name], madeIn != implicitCommits {
            throw DatabaseError(.misuse, "cannot roll back to savepoint \(name): a schema change since committed the transaction (MariaDB commits DDL at once)")
        }
        try execute(script: "ROLLBACK TO SAVEPOINT " + name)
    }

    // MARK: Transactions

    /// The access's first send: retried once on a new session when the
    /// connection turns out to be lost, since nothing of the access was there.
    func beginTransaction(_ transaction: TransactionOptions) throws {
        guard !transactionOpen else { throw DatabaseError(.misuse, "a transaction is already open on this connection") }
        let begin = MariaDBDialect.begin(transaction)
        do {
            try run(begin)
        } catch let error as DatabaseError where error.kind == .connection {
            try reconnect()
            try run(begin)
        }
        transactionOpen = true
        transactionOptions = transaction
        savepoints = [:]
    }

    func commitTransaction() throws {
        defer { transactionOpen = false; transactionOptions = nil }
        try run("COMMIT")
        try releaseNamedLocks()
    }

    func rollbackTransaction() throws {
        defer { transactionOpen = false; transactionOptions = nil }
        do {
            try run("ROLLBACK")
        } catch let error as DatabaseError where error.kind == .interrupted {
            // An interrupt meant for the statement before landed on the ROLLBACK.
            try run("ROLLBACK")
        }
        try releaseNamedLocks()
    }

    /// `GET_LOCK` on a name of this database, waiting up to
    /// ``MariaDBDialect/migrationLockSeconds``: held by the session until
    /// ``releaseNamedLocks()`` after the transaction ends (COMMIT does not
    /// release it).
    ///
    /// - Throws: `busy` when the lock was not granted (GET_LOCK answered 0:
    ///   another migrator held it all that time; or NULL).
    func lockForMigration(key: Int64) throws {
        if isGalera { return try lockRowForMigration(key: key) }
        let sql = "SELECT GET_LOCK(CONCAT('depot:', DATABASE(), ':', ?), \(MariaDBDialect.migrationLockSeconds))"
        let statement = try MariaDBStatement(connection: self, sql: sql)
        // Released after the transaction even if the answer is lost on the way.
        holdsNamedLock = true
        try statement.bind([.text(String(key))])
        let granted = try statement.step() ? try statement.value(at: 0) : nil
        statement.reset()
        guard case .integer(1)? = granted else {
            throw DatabaseError(.busy, "another migrator held the migration lock for \(MariaDBDialect.migrationLockSeconds) seconds (GET_LOCK did not return 1)",
                                engineCode: "GET_LOCK", sql: sql)
        }
    }

    /// `GET_LOCK` locks outlive COMMIT: the migrator's is released here, and
    /// on Galera its lock row (``deleteLockRow(key:holder:)``).
    private func releaseNamedLocks() throws {
        if let row = heldLockRow {
            heldLockRow = nil
            row.renewal.stop()
            try deleteLockRow(key: row.key, holder: row.holder)
        }
        guard holdsNamedLock else { return }
        holdsNamedLock = false
        try run("DO RELEASE_ALL_LOCKS()")
    }

    var isInTransaction: Bool {
        transactionOpen || (!isBroken && mysql.pointee.server_status & UInt32(SERVER_STATUS_IN_TRANS) != 0)
    }

    var isUsable: Bool { !isClosed && !isBroken }

    /// Whether the connection was found lost.
    var isBrokenNow: Bool { isBroken }

    var serverDescription: String? {
        "\(node)\(isGalera ? " (Galera)" : ""), MariaDB \(String(cString: mysql_get_server_info(mysql)))"
    }

    // MARK: Running

    /// Runs statements that bind nothing and checks each result.
    func run(_ script: String) throws {
        try finishStreaming()
        let failed = inFlight { script.withCString { mysql_real_query(mysql, $0, UInt(strlen($0))) } }
        if failed != 0 { throw error(sql: script) }
        while true {
            if let result = mysql_store_result(mysql) {
                mysql_free_result(result)
            } else if mysql_field_count(mysql) != 0 {
                throw error(sql: script)
            }
            let next = inFlight { mysql_next_result(mysql) }
            if next > 0 { throw error(sql: script) }
            if next < 0 { return }
        }
    }

    /// The connection's last error, noting a lost connection.
    func error(sql: String?) -> DatabaseError {
        let error = MariaDBError.make(mysql, sql: sql, showsValues: showsValues)
        if error.kind == .connection { isBroken = true }
        return error
    }

    /// A statement's last error, noting a lost connection.
    func error(statement: UnsafeMutablePointer<MYSQL_STMT>, sql: String?) -> DatabaseError {
        var error = MariaDBError.make(statement: statement, sql: sql, showsValues: showsValues)
        if error.kind == .connection { isBroken = true }
        if error.kind == .unique, let key = error.constraint, key != "PRIMARY" { error.table = table(ofIndex: key) }
        return error
    }

    /// The one table of this database with an index of this name, for a
    /// unique error: MariaDB names the key but not its table.
    private func table(ofIndex name: String) -> String? {
        guard let statement = try? MariaDBStatement(connection: self, sql: """
            SELECT DISTINCT TABLE_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME = ?
            """) else { return nil }
        defer { statement.reset() }
        guard (try? statement.bind([.text(name)])) != nil, (try? statement.step()) == true,
              case .text(let table)? = try? statement.value(at: 0), (try? statement.step()) == false else { return nil }
        return table
    }

    /// Runs a call that waits for the server, which ``interrupt()`` may stop.
    @inline(__always)
    func inFlight<T>(_ body: () -> T) -> T {
        interruptLock.withLock { statementInFlight = true }
        defer { interruptLock.withLock { statementInFlight = false } }
        return body()
    }

    /// Reads the rest of a streaming result into memory, so another statement can run.
    func finishStreaming() throws {
        guard let statement = streaming else { return }
        streaming = nil
        try statement.bufferRemainingRows()
    }

    /// Sends `KILL QUERY` for this session's statement from a connection of its
    /// own: the statement fails with 1317 (`interrupted`) and the transaction
    /// stays open. Only while a statement is in flight.
    func interrupt() {
        let threadID: UInt? = interruptLock.withLock { statementInFlight ? serverThreadID : nil }
        // On this session's own node: a thread id means nothing on another.
        guard let threadID, let side = try? Self.connect(configuration, node: node) else { return }
        defer { mysql_close(side) }
        // Checked again: the statement may have ended while the side connection opened.
        guard interruptLock.withLock({ statementInFlight }) else { return }
        _ = "KILL QUERY \(threadID)".withCString { mysql_real_query(side, $0, UInt(strlen($0))) }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        // A lock row still held (a connection closed in its migration): its lease runs out.
        heldLockRow?.renewal.stop()
        mysql_close(mysql)
    }

    deinit { close() }
}

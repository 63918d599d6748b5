import CLibPQ
import Depot
import Foundation

/// One libpq connection. Its session runs in UTC with UTF-8 text, so nothing
/// depends on the server's or the machine's zone.
///
/// Round trips: an access's `BEGIN` is not sent alone but with the access's
/// first statement, in one pipeline; an access that runs nothing sends nothing;
/// and a read-only access's `COMMIT` is sent without waiting, its answer read
/// by the connection's next use: when that is the next access's first
/// statement, from the same pipeline. A one-statement read costs one round
/// trip, as the same query in autocommit does.
final class PostgresConnection: DriverConnection {
    let handle: OpaquePointer
    private let cancelLock = NSLock()
    private var cancelHandle: OpaquePointer?
    /// The session set-up, run again after a reconnect.
    private let setup: String
    /// Bumped by every reconnect: statements prepared before it are gone from the server.
    private(set) var generation = 0
    /// The access's `BEGIN`, not sent yet: it goes with the first statement.
    var pendingBegin: String?
    /// Whether the open transaction is a plain read, whose `COMMIT` cannot fail and need not be waited for.
    var commitNeedNotWait = false
    /// A `COMMIT` sent without waiting, whose answer is read before anything else.
    private var awaitingCommit = false
    private var statementCount = 0
    private(set) var isClosed = false
    /// Whether errors may quote the values the server reports (``Store/Configuration/showsBoundValues``).
    let showsValues: Bool
    /// The statement whose rows are being streamed, which holds the connection until drained.
    weak var streaming: PostgresStatement?
    /// The COPY whose rows are being read, which holds the connection until drained.
    weak var copyingOut: PostgresCopyOutStatement?
    /// The tables each statement's plan reads, for observations.
    var explainedReads: [String: Set<String>] = [:]
    /// Tables known to carry Depot's notify trigger.
    var observableTables: Set<String> = []

    /// Whether statements are prepared once and run by name; false through a
    /// pooler in transaction mode, where each runs unnamed, parsed with its execution.
    let preparesStatements: Bool
    /// What runs after every BEGIN: the session settings, through a pooler in
    /// transaction mode (where a session's settings would reach other clients).
    let settingsPerTransaction: [String]
    /// `host:port` of the server this connection reached, for messages.
    let server: String
    /// Whether observations cannot hear commits: through a pooler in
    /// transaction mode, with no ``PostgresConfiguration/listenerHosts``.
    let cannotListen: Bool
    /// Whether libpq looked for the primary among several hosts
    /// (`target_session_attrs=read-write`): such a connection is of no use
    /// once its server stops taking writes.
    let looksForPrimary: Bool

    /// A connection to these hosts (the configuration's by default), looking
    /// for this kind of server. A password the server refuses is asked of the
    /// ``PostgresConfiguration/passwordProvider`` once more: it may have rotated
    /// between the two.
    convenience init(configuration: PostgresConfiguration, hosts: [PostgresConfiguration.Host]? = nil, target: String? = nil) throws {
        let hosts = hosts ?? configuration.hosts
        do {
            try self.init(configuration: configuration, parameters: try configuration.connectionParameters(hosts: hosts, target: target))
        } catch let error as DatabaseError where error.kind == .authentication && configuration.passwordProvider != nil {
            try self.init(configuration: configuration, parameters: try configuration.connectionParameters(hosts: hosts, target: target))
        }
    }

    init(configuration: PostgresConfiguration, parameters: [(String, String)]) throws {
        showsValues = configuration.store.showsBoundValues
        preparesStatements = !configuration.transactionPooling
        cannotListen = configuration.transactionPooling && configuration.listenerHosts == nil
        looksForPrimary = parameters.contains { $0.0 == "target_session_attrs" && $0.1 == "read-write" }
        var connection = Self.connect(parameters)
        if let failed = connection, PQstatus(failed) != CONNECTION_OK, Self.closedDuringLogin(failed) {
            // A pooler closes connections during their login when it restarts,
            // reloads, or its own server login failed; opening is idempotent,
            // so it is tried once more.
            PQfinish(failed)
            Thread.sleep(forTimeInterval: 0.05)
            connection = Self.connect(parameters)
        }
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let hosts = configuration.hosts.map(\.description).joined(separator: ",")
            let target = parameters.first { $0.0 == "target_session_attrs" }.map { $0.1 == "read-write" ? " (looking for the primary)" : "" } ?? ""
            let error = PostgresError.connection(connection, "cannot connect to PostgreSQL at \(hosts)/\(configuration.database) as \(configuration.user)\(target)",
                                                 neverConnected: true)
            PQfinish(connection)
            throw error
        }
        // PostgreSQL 14 and later notice a client gone while a statement runs.
        var checkInterval: String?
        if let interval = configuration.clientConnectionCheckInterval, PQserverVersion(connection) >= 140000 {
            guard let setting = PostgresConfiguration.checkIntervalSetting(interval) else {
                PQfinish(connection)
                throw DatabaseError(.misuse, "clientConnectionCheckInterval must be from 1 millisecond to 24 days (PostgreSQL's range), or nil")
            }
            checkInterval = setting
        }
        server = (PQhost(connection).map { String(cString: $0) } ?? configuration.host) + ":" + (PQport(connection).map { String(cString: $0) } ?? String(configuration.port))
        handle = connection
        retireAt = configuration.connectionLifetime.map { ContinuousClock.now + $0 }
        cancelHandle = PQgetCancel(connection)
        // libpq prints server notices ("relation already exists, skipping") to stderr
        // by default; a library must stay quiet.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        var settings = ["TIME ZONE 'UTC'"]
        if let checkInterval { settings.append("client_connection_check_interval = '\(checkInterval)'") }
        if let path = configuration.searchPath {
            settings.append("search_path TO " + path.split(separator: ",").map {
                "\"" + $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "\"\"") + "\""
            }.joined(separator: ", "))
        }
        if configuration.transactionPooling {
            setup = ""
            settingsPerTransaction = settings.map { "SET LOCAL " + $0 }
        } else {
            setup = settings.map { "SET " + $0 }.joined(separator: "; ")
            settingsPerTransaction = []
        }
        do {
            if !setup.isEmpty { try run(setup) }
        } catch {
            close()
            throw error
        }
    }

    /// The pending BEGIN and the settings that follow it, as one script.
    func beginScript(_ begin: String) -> String {
        settingsPerTransaction.isEmpty ? begin : ([begin] + settingsPerTransaction).joined(separator: "; ")
    }

    /// Whether a failed connection was closed by the server side after it was
    /// made (libpq's own words), rather than refused, timed out or denied.
    static func closedDuringLogin(_ connection: OpaquePointer) -> Bool {
        String(cString: PQerrorMessage(connection)).contains("server closed the connection unexpectedly")
    }

    /// `PQconnectdbParams` with these keywords and values; check its status.
    static func connect(_ pairs: [(String, String)]) -> OpaquePointer? {
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        return PQconnectdbParams(keywords.map { UnsafePointer($0) } + [nil], values.map { UnsafePointer($0) } + [nil], 0)
    }

    /// Opens the connection again with the same parameters, after the server
    /// dropped it while it was idle: nothing of the current access had reached
    /// the server, so nothing is lost. Statements prepared before are forgotten.
    func reconnect() throws {
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError.connection(handle, "cannot reconnect to PostgreSQL")
        }
        generation += 1
        noteServerKind()
        streaming = nil
        awaitingCommit = false
        cancelLock.withLock {
            if let cancelHandle { PQfreeCancel(cancelHandle) }
            cancelHandle = PQgetCancel(handle)
        }
        if !setup.isEmpty { try run(setup) }
    }

    func nextStatementName() -> String {
        statementCount += 1
        return "depot_\(statementCount)"
    }

    func prepare(_ sql: String) throws -> any DriverStatement {
        PostgresStatement(connection: self, sql: sql)
    }

    func execute(script: String) throws {
        settle()
        try runInAccess(script)
    }

    /// `pg_advisory_xact_lock(key)`: held until the transaction ends; write
    /// transactions at READ COMMITTED see what the previous holder committed.
    func lockForMigration(key: Int64) throws {
        try execute(script: "SELECT pg_advisory_xact_lock(\(key))")
    }

    /// Runs a script of the open access: with the pending BEGIN in one message
    /// when the access has sent nothing yet.
    private func runInAccess(_ script: String) throws {
        if let begin = pendingBegin {
            // One message: the simple protocol runs both in order.
            try sendingBegin { try run(beginScript(begin) + "; " + script) }
        } else {
            try sending { try run(script) }
        }
    }

    // MARK: Transactions

    /// Keeps BEGIN to send with the first statement, or never if the access runs none.
    ///
    /// A read's `COMMIT` still in flight is not waited for here: the access's
    /// first statement reads its answer, from the same pipeline.
    func beginTransaction(_ transaction: TransactionOptions) throws {
        // UNKNOWN: the connection is broken; the first send reconnects, since
        // nothing of this access was sent. With a COMMIT in flight the
        // connection is idle once the server reads it: nothing else can be open.
        let status = awaitingCommit ? PQTRANS_IDLE : PQtransactionStatus(handle)
        guard pendingBegin == nil, status == PQTRANS_IDLE || status == PQTRANS_UNKNOWN else {
            throw DatabaseError(.misuse, "a transaction is already open on this connection")
        }
        let begin = PostgresDialect.begin(transaction)
        pendingBegin = begin
        accessReachedServer = false
        commitNeedNotWait = transaction.kind == .read && transaction.isolation == nil
    }

    func commitTransaction() throws {
        settle()
        if pendingBegin != nil {
            // Nothing reached the server: nothing to commit.
            pendingBegin = nil
            return
        }
        if commitNeedNotWait, streaming == nil, PQtransactionStatus(handle) == PQTRANS_INTRANS {
            // A read-only REPEATABLE READ transaction cannot fail to commit, and the
            // server ends it (and frees its locks) when the message arrives.
            commitNeedNotWait = false
            try sendCommitWithoutWaiting()
            return
        }
        commitNeedNotWait = false
        try finishStreaming()
        let result = PQexec(handle, "COMMIT")
        defer { PQclear(result) }
        try Self.checkCommit(result, handle, showsValues: showsValues)
    }

    /// Throws the error a COMMIT's result holds, or the one it means: an aborted
    /// transaction answers COMMIT with the tag ROLLBACK and no error.
    static func checkCommit(_ result: OpaquePointer?, _ handle: OpaquePointer, showsValues: Bool) throws {
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw PostgresError.make(result, handle, showsValues: showsValues)
        }
        if let tag = PQcmdStatus(result), String(cString: tag) == "ROLLBACK" {
            throw DatabaseError(.other, "the server rolled the transaction back instead of committing it", engineCode: "ROLLBACK")
        }
    }

    func rollbackTransaction() throws {
        settle()
        commitNeedNotWait = false
        if pendingBegin != nil {
            pendingBegin = nil
            return
        }
        try run("ROLLBACK")
    }

    // Savepoints take the SPI's defaults: standard SQL through execute(script:),
    // which sends a pending BEGIN with them.

    /// Sends a read's `COMMIT` in a pipeline of its own and returns: its answer
    /// is read by the connection's next use, which, when it is the next access's
    /// first statement, goes out in the same pipeline behind it. A read then
    /// costs one round trip, as a query in autocommit does, where waiting for
    /// the answer here (or before the next access sends) would cost two.
    private func sendCommitWithoutWaiting() throws {
        guard PQenterPipelineMode(handle) == 1 else {
            throw PostgresError.connection(handle, "cannot start a pipeline for COMMIT")
        }
        guard PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 0) == 1 else {
            let error = PostgresError.connection(handle, "cannot send COMMIT")
            _ = PQexitPipelineMode(handle)
            throw error
        }
        // From here the COMMIT is queued: `settle` reads what comes of it.
        awaitingCommit = true
        guard PQpipelineSync(handle) == 1 else {
            // Only a broken connection fails to flush; the pool replaces it.
            throw PostgresError.connection(handle, "cannot send COMMIT")
        }
    }

    /// Reads the answer of a COMMIT sent without waiting, and leaves its
    /// pipeline. Its only possible failure is a broken connection, which the
    /// next use finds out.
    func settle() {
        guard awaitingCommit else { return }
        awaitingCommit = false
        let answered = takeCommitAnswer()
        guard PQexitPipelineMode(handle) != 1 || !answered else { return }
        // The answer never came whole (the backend was killed around it): the
        // session is gone or out of step, and libpq refuses every statement while
        // its pipeline waits. Nothing of the next access has been sent, and the
        // read changed nothing: a new session, or a broken connection the next
        // send reports as lost.
        try? reconnect()
    }

    /// For a pipeline sent behind a COMMIT still in flight: reads that
    /// COMMIT's answer first, staying in the pipeline. Does nothing when no
    /// COMMIT is in flight; throws when the connection broke before the answer came.
    func takeCommitAnswerAhead() throws {
        guard awaitingCommit else { return }
        guard takeCommitAnswer() else { throw PostgresError.connection(handle, "the server closed the connection") }
        awaitingCommit = false
    }

    /// Reads a pipelined COMMIT's result and its sync point, staying in the pipeline.
    /// Returns false when the connection broke before the answer came.
    private func takeCommitAnswer() -> Bool {
        while let result = PQgetResult(handle) { PQclear(result) } // COMMIT's result, then NULL
        return readThroughSync()
    }

    /// Reads and clears a pipeline's results up to its sync point; false
    /// when the sync point will not come (the connection broke first).
    ///
    /// A NULL ends one query's results, not the pipeline: a backend killed
    /// after its last result sends an error and closes, and libpq answers
    /// that error, then NULL, before it reads the end of the connection.
    /// Stopping at that NULL would leave the pipeline waiting for a sync that
    /// never comes, and the connection, to libpq, still open: every statement
    /// after it refused as "not allowed in pipeline mode", an error that
    /// does not say the connection is lost.
    func readThroughSync() -> Bool {
        var nulls = 0
        while PQstatus(handle) == CONNECTION_OK {
            guard let result = PQgetResult(handle) else {
                // Two in a row: nothing more is coming.
                nulls += 1
                if nulls > 1 { return false }
                continue
            }
            nulls = 0
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { return true }
        }
        return false
    }

    // MARK: The retry rule

    /// Whether anything of the current access has been sent to the server. Until
    /// then a lost connection lost nothing of it; from then on the server may
    /// hold (uncommitted) work of the access that a new session would not have.
    private(set) var accessReachedServer = false

    /// Runs `body`, which sends the pending BEGIN with what follows it.
    ///
    /// The one place that decides whether a send may be retried on a new
    /// session: only when the connection was lost while this send was the
    /// access's first (the server dropped the idle connection, so nothing of
    /// the access was there). Every other send goes through ``sending(_:)``.
    func sendingBegin<T>(_ body: () throws -> T) throws -> T {
        let isFirstSend = !accessReachedServer && pendingBegin != nil
        pendingBegin = nil
        accessReachedServer = true
        do {
            return try body()
        } catch let error as DatabaseError where error.kind == .connection && isFirstSend {
            try reconnect()
            return try body()
        }
    }

    /// Runs `body`, which sends part of the access after its BEGIN went out:
    /// never retried, since the server may hold what the access sent before.
    @inline(__always)
    func sending<T>(_ body: () throws -> T) throws -> T {
        accessReachedServer = true
        return try body()
    }

    /// Sends the pending BEGIN on its own, for what cannot go in one pipeline with it.
    func sendPendingBegin() throws {
        settle()
        guard let begin = pendingBegin else { return }
        try sendingBegin { try run(beginScript(begin)) }
    }

    /// Runs a script and waits for its answer.
    func run(_ script: String) throws {
        try finishStreaming()
        let result = PQexec(handle, script)
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            break
        default:
            throw PostgresError.make(result, handle, showsValues: showsValues)
        }
    }

    /// Reads the rest of a streaming result (or COPY) into memory, so another statement can run.
    func finishStreaming() throws {
        if let copy = copyingOut {
            copyingOut = nil
            try copy.bufferRemainingRows()
        }
        guard let statement = streaming else { return }
        streaming = nil
        try statement.bufferRemainingRows()
    }

    var isInTransaction: Bool {
        settle()
        return pendingBegin != nil || PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// Whether the connection can still serve: libpq's connection is up and,
    /// for a writer that looked for the primary, its server still takes
    /// writes. A failover manager may turn the server it just promoted
    /// read-only for a few seconds (pg_auto_failover's keeper does, until it
    /// knows the old primary is fenced), and a primary may come back as a
    /// standby: a new connection looks for the primary again.
    var isUsable: Bool {
        !isClosed && PQstatus(handle) == CONNECTION_OK && !(looksForPrimary && PostgresError.refusesWrites(handle))
    }

    /// Whether the server is a hot standby, as it reported when the connection opened.
    var isOnStandby: Bool {
        PQparameterStatus(handle, "in_hot_standby").map { String(cString: $0) == "on" } ?? false
    }

    /// For a reader that prefers a standby: how long it may serve reads from
    /// the primary (no standby answered when it connected) before it makes way
    /// for a connection that looks for a standby again.
    var standbyRetryInterval: Duration? {
        didSet { noteServerKind() }
    }

    /// `host:port, standby` or `host:port, primary` when the server says which it is.
    var serverDescription: String? {
        // Servers before PostgreSQL 14 do not say.
        guard PQparameterStatus(handle, "in_hot_standby") != nil else { return server }
        return server + (isOnStandby ? ", standby" : ", primary")
    }

    /// When a reader on the primary should make way for one that looks for a standby again.
    private var replaceAfter: ContinuousClock.Instant?

    /// Sets ``replaceAfter`` for the server the connection reached, after a (re)connect.
    private func noteServerKind() {
        replaceAfter = standbyRetryInterval.flatMap { isOnStandby ? nil : ContinuousClock.now + $0 }
    }

    /// When the connection has served its ``PostgresConfiguration/connectionLifetime``.
    private let retireAt: ContinuousClock.Instant?

    var wantsReplacement: Bool {
        guard replaceAfter != nil || retireAt != nil else { return false }
        let now = ContinuousClock.now
        return replaceAfter.map { now >= $0 } ?? false || retireAt.map { now >= $0 } ?? false
    }

    func interrupt() {
        cancelLock.withLock {
            guard let cancelHandle else { return }
            var buffer = [CChar](repeating: 0, count: 256)
            _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        cancelLock.withLock {
            if let cancelHandle { PQfreeCancel(cancelHandle) }
            cancelHandle = nil
        }
        PQfinish(handle)
    }

    deinit { close() }
}

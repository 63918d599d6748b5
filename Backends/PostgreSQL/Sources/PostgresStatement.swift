import CLibPQ
import Depot
import Foundation

/// A statement run with libpq's extended protocol: prepared once per set of
/// parameter types, parameters sent typed (binary where fixed-width), results
/// read in binary. A cursor streams it in single-row mode.
///
/// Its state is touched by one thread at a time (the driver contract).
final class PostgresStatement: DriverStatement {
    private let connection: PostgresConnection
    private let sql: String
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions,
    // PostgreSQL, one insert per row (pginsert), client side: 461.2M instructions with the checks of
    // PostgresStatement and PostgresValues, 444.6M without.
    /// Server-side prepared statements, by the parameter types they were prepared for.
    @exclusivity(unchecked) private var prepared: [[Oid]: String] = [:]
    private let parameters = PostgresParameters()
    /// The last parameter types and the statement prepared for them: most
    /// executions repeat them, and need not hash the types to find the name.
    @exclusivity(unchecked) private var lastPrepared: (types: [Oid], name: String)?
    /// The connection's generation the prepared statements belong to: a reconnect forgets them.
    @exclusivity(unchecked) private var preparedGeneration = 0
    @exclusivity(unchecked) private var wantsStreaming = false

    private enum State {
        case idle
        case bound
        /// A whole result in memory, positioned on `row`.
        case buffered(result: OpaquePointer, row: Int32, rows: Int32)
        /// Single-row results: `current` is the row being read.
        case streaming(current: OpaquePointer?)
        case done
    }
    @exclusivity(unchecked) private var state = State.idle
    /// Rows of a stream read ahead because another statement needed the connection.
    @exclusivity(unchecked) private var queued: [OpaquePointer] = []
    @exclusivity(unchecked) private var streamIsLive = false

    @exclusivity(unchecked) private(set) var columns = ColumnSet([])
    @exclusivity(unchecked) private var columnTypes: [Oid] = [] {
        didSet { columnReadAhead = columnTypes.map(PostgresCell.ReadAhead.init) }
    }
    /// How each column's cells are read ahead, from `columnTypes`.
    @exclusivity(unchecked) private var columnReadAhead: [PostgresCell.ReadAhead] = []
    /// Whether ``columns`` and `columnTypes` describe the result being read.
    @exclusivity(unchecked) private var columnsAreCurrent = false
    @exclusivity(unchecked) private(set) var changes = 0
    /// Whether the command just run made, altered or dropped a schema object,
    /// as its command tag says (`CREATE TABLE`, `ALTER TABLE`, `DROP INDEX`…).
    @exclusivity(unchecked) private(set) var changedSchema = false

    init(connection: PostgresConnection, sql: String) {
        self.connection = connection
        self.sql = sql
    }

    deinit {
        reset()
        if !connection.isClosed, connection.isUsable, preparedGeneration == connection.generation {
            connection.settle()
            for name in prepared.values {
                PQclear(PQexec(connection.handle, "DEALLOCATE \(name)"))
            }
        }
    }

    func bind(_ values: [Value]) throws {
        reset()
        changedSchema = false
        try parameters.bind(values)
        wantsStreaming = false
        state = .bound
    }

    func prepareForStreaming() throws {
        wantsStreaming = true
    }

    func step() throws -> Bool {
        switch state {
        case .idle, .done:
            return false
        case .bound:
            try execute()
            return try step()
        case .buffered(let result, let row, let rows):
            let next = row + 1
            if next < rows {
                state = .buffered(result: result, row: next, rows: rows)
                return true
            }
            PQclear(result)
            state = .done
            return false
        case .streaming(let current):
            if let current { PQclear(current) }
            return try nextStreamedRow()
        }
    }

    func reset() {
        switch state {
        case .buffered(let result, _, _): PQclear(result)
        case .streaming(let current):
            if let current { PQclear(current) }
            if streamIsLive {
                // Drain the stream so the connection is free again.
                while let result = PQgetResult(connection.handle) { PQclear(result) }
                streamIsLive = false
                if connection.streaming === self { connection.streaming = nil }
            }
        default: break
        }
        queued.forEach { PQclear($0) }
        queued.removeAll()
        state = .idle
    }

    /// The result holding the current row and the row's number in it; nil
    /// when no row is current.
    @inline(__always)
    private var currentRow: (result: OpaquePointer, row: Int32)? {
        switch state {
        case .buffered(let result, let row, _): (result, row)
        case .streaming(let current?): (current, 0)
        default: nil
        }
    }

    /// The current row's cell, when it is not NULL: its type and bytes.
    @inline(__always)
    private func cell(_ index: Int) -> (type: Oid, bytes: UnsafeRawBufferPointer)? {
        guard let (result, row) = currentRow else { return nil }
        let column = Int32(index)
        guard index < columnTypes.count else { return nil }
        // The length first: only an empty cell may be NULL, so only then is libpq asked.
        let length = PQgetlength(result, row, column)
        guard length > 0 || PQgetisnull(result, row, column) == 0, let pointer = PQgetvalue(result, row, column) else { return nil }
        return (columnTypes[index], UnsafeRawBufferPointer(start: pointer, count: Int(length)))
    }

    /// The buffered result's row count; nil while streaming.
    var rowCountHint: Int? {
        if case .buffered(_, _, let rows) = state { return Int(rows) }
        return nil
    }

    func isNull(at index: Int) -> Bool {
        guard let (result, row) = currentRow else { return false }
        return PQgetisnull(result, row, Int32(index)) == 1
    }

    // The fast paths answer exactly as `value(at:)` would for their kind of cell, and nil otherwise.

    /// The row's cells in one pass over the result, each classified as the fast paths would.
    func readCells(at columns: UnsafeBufferPointer<Int>, into cells: UnsafeMutablePointer<RowCell>) -> Bool {
        guard let (result, row) = currentRow else { return false }
        columnReadAhead.withUnsafeBufferPointer { kinds in
            for offset in 0..<columns.count {
                let index = columns[offset]
                guard index >= 0, index < kinds.count else {
                    cells[offset] = .other
                    continue
                }
                let column = Int32(truncatingIfNeeded: index)
                // The length first: only an empty cell may be NULL, so only then is libpq asked.
                let length = PQgetlength(result, row, column)
                if length == 0, PQgetisnull(result, row, column) != 0 {
                    cells[offset] = .null
                } else if let pointer = PQgetvalue(result, row, column) {
                    cells[offset] = PostgresCell.readAhead(kinds[index], pointer, count: Int(length))
                } else {
                    cells[offset] = .other
                }
            }
        }
        return true
    }

    func integer(at index: Int) -> Int64? { cell(index).flatMap(PostgresCell.integer) }
    func double(at index: Int) -> Double? { cell(index).flatMap(PostgresCell.double) }
    func bool(at index: Int) -> Bool? { cell(index).flatMap(PostgresCell.bool) }
    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? { cell(index).flatMap(PostgresCell.textBytes) }
    func date(at index: Int) -> Date? { cell(index).flatMap(PostgresCell.date) }

    func value(at index: Int) throws -> Value {
        guard let (result, row) = currentRow else { throw DatabaseError(.misuse, "no current row", sql: sql) }
        let column = Int32(index)
        if PQgetisnull(result, row, column) == 1 { return .null }
        let length = Int(PQgetlength(result, row, column))
        guard let pointer = PQgetvalue(result, row, column) else { return .null }
        do {
            return try PostgresBinary.value(type: columnTypes[index], bytes: UnsafeRawBufferPointer(start: pointer, count: length))
        } catch let error as PostgresBinary.Unsupported {
            throw DatabaseError(.decoding, error.message, column: columns.names[index], columnIndex: index, sql: sql)
        }
    }

    // MARK: Running

    /// The name of the server-side statement for the bound parameter types, and
    /// whether it still has to be prepared.
    private func statementName() -> (name: String, isPrepared: Bool) {
        if preparedGeneration != connection.generation {
            prepared.removeAll()
            lastPrepared = nil
            preparedGeneration = connection.generation
        }
        let types = parameters.types
        if let last = lastPrepared, fits(last.types) { return (last.name, true) }
        if let name = prepared[types] {
            lastPrepared = (types, name)
            return (name, true)
        }
        return (connection.nextStatementName(), false)
    }

    /// Whether the bound values can run in a statement prepared for
    /// `prepared`: the same types, where a NULL fits a parameter of any type
    /// (untyped text does not: the server read that parameter as text). Rows
    /// whose optional properties are nil now and then share one prepared
    /// statement most of the time.
    @inline(__always)
    private func fits(_ prepared: [Oid]) -> Bool {
        let types = parameters.types
        guard types.count == prepared.count else { return false }
        for index in 0..<types.count where types[index] != prepared[index] && !parameters.isNull(at: index) {
            return false
        }
        return true
    }

    private func notePrepared(_ name: String) {
        prepared[parameters.types] = name
        lastPrepared = (parameters.types, name)
    }

    private func prepare(_ name: String) throws {
        let types = parameters.types
        let result = PQprepare(connection.handle, name, sql, Int32(types.count), types)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw PostgresError.make(result, connection.handle, sql: sql, showsValues: connection.showsValues)
        }
        notePrepared(name)
    }

    private func execute() throws {
        columnsAreCurrent = false
        // A first statement that goes out in a pipeline reads the last read's
        // COMMIT from the same pipeline (one round trip); anything else waits for it first.
        if wantsStreaming || connection.pendingBegin == nil { connection.settle() }
        try connection.finishStreaming()
        if wantsStreaming {
            // Single-row mode does not mix with a pipeline: BEGIN goes first, on its own.
            try connection.sendPendingBegin()
            try connection.sending { try sendStreaming() }
            return
        }
        let result: OpaquePointer?
        if let begin = connection.pendingBegin {
            result = try connection.sendingBegin { try executePipelined(after: begin) }
        } else {
            result = try connection.sending { try executeAlone() }
        }
        try take(result)
    }

    /// Sends the statement in single-row mode; its rows are read one at a time.
    private func sendStreaming() throws {
        let sent: Int32
        let count = Int32(parameters.count)
        if connection.preparesStatements {
            let (name, isPrepared) = statementName()
            if !isPrepared { try prepare(name) }
            sent = parameters.withArrays { values, lengths, formats in
                PQsendQueryPrepared(connection.handle, name, count, values, lengths, formats, 1)
            }
        } else {
            let types = parameters.types
            sent = parameters.withArrays { values, lengths, formats in
                PQsendQueryParams(connection.handle, sql, count, types, values, lengths, formats, 1)
            }
        }
        guard sent == 1 else { throw PostgresError.connection(connection.handle, "cannot send the query") }
        PQsetSingleRowMode(connection.handle)
        streamIsLive = true
        connection.streaming = self
        state = .streaming(current: nil)
    }

    /// Runs the statement in a transaction whose BEGIN already went out, and waits for its result.
    private func executeAlone() throws -> OpaquePointer? {
        if connection.preparesStatements {
            let (name, isPrepared) = statementName()
            if !isPrepared { try prepare(name) }
            let count = Int32(parameters.count)
            return parameters.withArrays { values, lengths, formats in
                PQexecPrepared(connection.handle, name, count, values, lengths, formats, 1)
            }
        }
        // Unnamed: parsed and run in one message, nothing left on the server.
        let count = Int32(parameters.count)
        let types = parameters.types
        return parameters.withArrays { values, lengths, formats in
            PQexecParams(connection.handle, sql, count, types, values, lengths, formats, 1)
        }
    }

    /// Reads a whole result, or throws the error it holds.
    private func take(_ result: OpaquePointer?) throws {
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            guard let result else { throw PostgresError.connection(connection.handle, "no result") }
            readColumns(result)
            changes = Self.changes(of: result)
            changedSchema = Self.changesSchema(result)
            state = .buffered(result: result, row: -1, rows: PQntuples(result))
        default:
            let error = PostgresError.make(result, connection.handle, sql: sql, showsValues: connection.showsValues)
            PQclear(result)
            state = .done
            forgetPlanIfStale(error)
            throw error
        }
    }

    /// The rows the command changed: the count its tag carries, but 0 for a
    /// query, whose tag counts the rows it returned (`SELECT 3`).
    static func changes(of result: OpaquePointer) -> Int {
        if let tag = PQcmdStatus(result), strncmp(tag, "SELECT", 6) == 0 { return 0 }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Whether the result's command tag names a schema change: the engine's
    /// own word for what ran (a tag, never the statement's text).
    static func changesSchema(_ result: OpaquePointer) -> Bool {
        guard let tag = PQcmdStatus(result) else { return false }
        return strncmp(tag, "CREATE ", 7) == 0 || strncmp(tag, "ALTER ", 6) == 0 || strncmp(tag, "DROP ", 5) == 0
    }

    /// After "cached plan must not change result type" (SQLSTATE 0A000: another
    /// session changed a table this statement reads), the statement is prepared
    /// anew at its next run, so only the access that met the change fails.
    private func forgetPlanIfStale(_ error: DatabaseError) {
        guard error.engineCode == "0A000" else { return }
        prepared.removeAll()
        lastPrepared = nil
    }

    /// Sends BEGIN, the PREPARE when the statement needs one, and the execution
    /// in one pipeline, and waits once. Returns the execution's result.
    private func executePipelined(after begin: String) throws -> OpaquePointer? {
        let handle = connection.handle
        let prepares = connection.preparesStatements
        // Unnamed statements count as prepared: nothing to send before the execution.
        let (name, isPrepared) = prepares ? statementName() : ("", true)
        guard PQenterPipelineMode(handle) == 1 else { throw PostgresError.connection(handle, "cannot start a pipeline") }
        var sent = PQsendQueryParams(handle, begin, 0, nil, nil, nil, nil, 0) == 1
        for setting in connection.settingsPerTransaction where sent {
            sent = PQsendQueryParams(handle, setting, 0, nil, nil, nil, nil, 0) == 1
        }
        if sent, !isPrepared {
            let types = parameters.types
            sent = PQsendPrepare(handle, name, sql, Int32(types.count), types) == 1
        }
        if sent {
            let count = Int32(parameters.count)
            let types = parameters.types
            sent = parameters.withArrays { values, lengths, formats in
                prepares ? PQsendQueryPrepared(handle, name, count, values, lengths, formats, 1)
                    : PQsendQueryParams(handle, sql, count, types, values, lengths, formats, 1)
            } == 1
        }
        if sent { sent = PQpipelineSync(handle) == 1 }
        guard sent else {
            let error = PostgresError.connection(handle, "cannot send the query")
            _ = PQexitPipelineMode(handle)
            throw error
        }
        // The last read's COMMIT, sent without waiting, answers first.
        try connection.takeCommitAnswerAhead()
        // One result per query, each followed by NULL, then the sync point.
        var results: [OpaquePointer?] = []
        let queries = (isPrepared ? 2 : 3) + connection.settingsPerTransaction.count
        while results.count < queries, PQstatus(handle) == CONNECTION_OK {
            let result = PQgetResult(handle)
            results.append(result)
            if result != nil { while let extra = PQgetResult(handle) { PQclear(extra) } }
        }
        let synced = connection.readThroughSync()
        // A pipeline left open (its sync point never came) makes libpq refuse
        // every later statement: the connection counts as lost, and the retry
        // rule opens a new session for this first send.
        let exited = PQexitPipelineMode(handle) == 1
        guard results.count == queries, synced, exited else {
            let error = PostgresError.connection(handle, "the server closed the connection")
            results.forEach { PQclear($0) }
            throw error
        }
        let last = results.removeLast()
        defer { results.forEach { PQclear($0) } }
        // The first failure explains the rest, which the server skipped.
        for result in results where PQresultStatus(result) != PGRES_COMMAND_OK {
            PQclear(last)
            let error = PostgresError.make(result, handle, sql: sql, showsValues: connection.showsValues)
            forgetPlanIfStale(error)
            throw error
        }
        if !isPrepared { notePrepared(name) }
        return last
    }

    private func nextStreamedRow() throws -> Bool {
        let result: OpaquePointer?
        if !queued.isEmpty {
            result = queued.removeFirst()
        } else if streamIsLive {
            result = PQgetResult(connection.handle)
        } else {
            result = nil
        }
        guard let result else {
            finishStream()
            return false
        }
        switch PQresultStatus(result) {
        case PGRES_SINGLE_TUPLE:
            readColumns(result)
            state = .streaming(current: result)
            return true
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            // The end of the rows; libpq then returns NULL.
            changes = Self.changes(of: result)
            PQclear(result)
            return try nextStreamedRow()
        default:
            let error = PostgresError.make(result, connection.handle, sql: sql, showsValues: connection.showsValues)
            PQclear(result)
            finishStream()
            throw error
        }
    }

    private func finishStream() {
        if streamIsLive {
            while let result = PQgetResult(connection.handle) { PQclear(result) }
            streamIsLive = false
        }
        if connection.streaming === self { connection.streaming = nil }
        state = .done
    }

    /// Reads the rest of the stream ahead, so the connection is free for another statement.
    func bufferRemainingRows() throws {
        guard streamIsLive else { return }
        while let result = PQgetResult(connection.handle) {
            queued.append(result)
        }
        streamIsLive = false
    }

    /// Reads the columns and their types from the first result of each execution.
    ///
    /// The same SQL text runs as several prepared statements (one per set of
    /// parameter types), and each may return other column types
    /// (`SELECT $1` is a bigint for one, a float8 for another): metadata kept from
    /// an earlier execution would misread the bytes.
    private func readColumns(_ result: OpaquePointer) {
        guard !columnsAreCurrent else { return }
        columnsAreCurrent = true
        let count = PQnfields(result)
        // The common case, the same columns as last time, compares in place and allocates nothing.
        if Int(count) == columnTypes.count, Int(count) == columns.count, (0..<count).allSatisfy({ index in
            PQftype(result, index) == columnTypes[Int(index)]
                && columns.names[Int(index)].withCString { strcmp($0, PQfname(result, index)) == 0 }
        }) { return }
        columnTypes = (0..<count).map { PQftype(result, $0) }
        let names = (0..<count).map { String(cString: PQfname(result, $0)) }
        if names != columns.names { columns = ColumnSet(names) }
    }
}

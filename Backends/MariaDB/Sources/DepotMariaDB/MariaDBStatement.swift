import CMariaDB
import Depot
import Foundation

/// A server-side prepared statement (`mysql_stmt_*`) with binary binds and
/// results. Results are read whole into the client (`mysql_stmt_store_result`)
/// unless the core streams them; a streaming result is read into memory
/// before the connection runs anything else.
final class MariaDBStatement: DriverStatement {
    private let connection: MariaDBConnection
    /// The statement's text, its `?` markers in the order of the values they bind.
    private let sql: String
    /// How many `?` markers the server found when it prepared the statement.
    private var parameterCount = 0
    private var handle: UnsafeMutablePointer<MYSQL_STMT>?
    private var generation: Int
    private(set) var columns: ColumnSet
    private var results: MariaDBResultBuffers?
    private var values: [Value] = []
    private var needsExecute = false
    private var hasResult = false
    private var isStreaming = false
    private var wantsStreaming = false
    /// Rows read ahead of the core, when another statement needed the connection.
    private var bufferedRows: [[Value]]?
    private var currentRow: [Value]?
    private var rowsSeen = 0
    /// Whether the statement failed in the middle of a result and is prepared again before it runs.
    private var mustPrepareAgain = false
    private(set) var changes = 0
    /// Whether the statement just run changed the schema, as far as the server tells (see `execute`).
    private(set) var changedSchema = false

    init(connection: MariaDBConnection, sql: String) throws {
        self.connection = connection
        self.sql = sql
        generation = connection.generation
        columns = ColumnSet([])
        try prepareOnServer()
    }

    deinit {
        if let handle { mysql_stmt_close(handle) }
    }

    private func prepareOnServer() throws {
        if let handle { mysql_stmt_close(handle) }
        handle = nil
        guard let statement = mysql_stmt_init(connection.mysql) else {
            throw connection.error(sql: sql)
        }
        var updateMaxLength: my_bool = 1
        mysql_stmt_attr_set(statement, STMT_ATTR_UPDATE_MAX_LENGTH, &updateMaxLength)
        let failed = connection.inFlight {
            sql.withCString { mysql_stmt_prepare(statement, $0, UInt(sql.utf8.count)) }
        }
        if failed != 0 {
            let error = connection.error(statement: statement, sql: sql)
            mysql_stmt_close(statement)
            throw error
        }
        handle = statement
        generation = connection.generation
        parameterCount = Int(mysql_stmt_param_count(statement))
        readColumns()
    }

    /// The result's columns as the server describes them now (after a
    /// prepare, and again after each execution: `SELECT ?` takes its type from the value).
    private func readColumns() {
        guard let handle, let metadata = mysql_stmt_result_metadata(handle) else {
            columns = ColumnSet([])
            results = nil
            return
        }
        defer { mysql_free_result(metadata) }
        let count = Int(mysql_num_fields(metadata))
        // Metadata with fields always has them; none reads as a result without columns.
        guard let fields = mysql_fetch_fields(metadata) else {
            columns = ColumnSet([])
            results = nil
            return
        }
        var names: [String] = []
        var kinds: [MariaDBColumnKind] = []
        for index in 0..<count {
            let field = fields[index]
            names.append(String(cString: field.name))
            kinds.append(MariaDBColumnKind(field))
        }
        if names != columns.names { columns = ColumnSet(names) }
        results = MariaDBResultBuffers(kinds: kinds)
    }

    func bind(_ values: [Value]) throws {
        reset()
        guard values.count == parameterCount else {
            throw DatabaseError(.misuse, "the statement has \(parameterCount) placeholders, but \(values.count) values were bound", sql: sql)
        }
        self.values = values
        needsExecute = true
        changedSchema = false
    }

    func prepareForStreaming() throws {
        wantsStreaming = true
    }

    func step() throws -> Bool {
        if needsExecute {
            needsExecute = false
            try execute()
        }
        if var rows = bufferedRows {
            guard !rows.isEmpty else { currentRow = nil; return false }
            currentRow = rows.removeFirst()
            bufferedRows = rows
            return true
        }
        guard hasResult, let handle, let results else { return false }
        let code = connection.inFlight { mysql_stmt_fetch(handle) }
        switch code {
        case 0:
            break
        case Int32(MYSQL_DATA_TRUNCATED):
            if results.refetchTruncated(handle) { mysql_stmt_bind_result(handle, results.binds) }
        case Int32(MYSQL_NO_DATA):
            finishResult()
            return false
        default:
            let error = connection.error(statement: handle, sql: sql)
            abandonResult()
            throw error
        }
        rowsSeen += 1
        return true
    }

    private func execute() throws {
        try connection.finishStreaming()
        if generation != connection.generation || mustPrepareAgain {
            mustPrepareAgain = false
            try prepareOnServer()
        }
        guard let handle else { throw DatabaseError(.misuse, "the statement was closed", sql: sql) }
        let parameters = MariaDBParameters(count: values.count)
        for (index, value) in values.enumerated() {
            try parameters.set(index, value, position: index + 1, sql: sql)
        }
        if !values.isEmpty, mysql_stmt_bind_param(handle, parameters.binds) != 0 {
            throw connection.error(statement: handle, sql: sql)
        }
        let failed = connection.inFlight { mysql_stmt_execute(handle) }
        if failed != 0 {
            let error = connection.error(statement: handle, sql: sql)
            try connection.afterStatement(failedWith: error)
            throw error
        }
        // MariaDB reports no statement kind; a statement that committed the
        // access's transaction by itself was a schema change. Outside a
        // transaction nothing tells, so any statement without rows may have been one.
        let committed = try connection.afterStatement(failedWith: nil)
        changedSchema = committed || (!connection.inAccessTransaction && mysql_stmt_field_count(handle) == 0)
        rowsSeen = 0
        if mysql_stmt_field_count(handle) > 0 {
            readColumns()
            guard let results else { return }
            if mysql_stmt_bind_result(handle, results.binds) != 0 { throw connection.error(statement: handle, sql: sql) }
            hasResult = true
            if wantsStreaming {
                isStreaming = true
                connection.streaming = self
            } else {
                let stored = connection.inFlight { mysql_stmt_store_result(handle) }
                if stored != 0 {
                    let error = connection.error(statement: handle, sql: sql)
                    abandonResult()
                    throw error
                }
            }
            changes = 0
        } else {
            let affected = mysql_stmt_affected_rows(handle)
            changes = affected == UInt64.max ? 0 : Int(affected)
        }
    }

    /// Reads the rest of a streaming result into memory, so the connection can run another statement.
    func bufferRemainingRows() throws {
        guard isStreaming, hasResult else { return }
        var rows: [[Value]] = []
        while try step() {
            guard let results else { break }
            rows.append(try results.row())
        }
        bufferedRows = rows
    }

    /// After an error in the middle of a result (an overflow raised while rows
    /// were sent): the error packet ended the result, but Connector/C would
    /// wait for the rest of it on the next use, forever. The connection is
    /// marked ready and the statement prepared again before its next run.
    private func abandonResult() {
        hasResult = false
        if isStreaming, connection.streaming === self { connection.streaming = nil }
        isStreaming = false
        if let handle, !connection.isBrokenNow {
            connection.mysql.pointee.status = MYSQL_STATUS_READY
            handle.pointee.state = MYSQL_STMT_PREPARED
            mustPrepareAgain = true
        }
    }

    private func finishResult() {
        if let handle, hasResult { mysql_stmt_free_result(handle) }
        hasResult = false
        if isStreaming, connection.streaming === self { connection.streaming = nil }
        isStreaming = false
    }

    func reset() {
        if hasResult, let handle {
            if isStreaming, connection.streaming === self { connection.streaming = nil }
            mysql_stmt_free_result(handle)
        }
        hasResult = false
        isStreaming = false
        wantsStreaming = false
        bufferedRows = nil
        currentRow = nil
        needsExecute = false
    }

    func value(at index: Int) throws -> Value {
        if let currentRow { return currentRow[index] }
        guard let results else { throw DatabaseError(.misuse, "the statement has no row", sql: sql) }
        do {
            return try results.value(at: index)
        } catch var error as DatabaseError {
            error.column = columns.names[index]
            error.sql = sql
            throw error
        }
    }

    func isNull(at index: Int) -> Bool {
        if let currentRow { return currentRow[index].isNull }
        return results?.isNull(at: index) ?? true
    }

    func integer(at index: Int) -> Int64? {
        if let currentRow { if case .integer(let i) = currentRow[index] { return i } else { return nil } }
        return results?.integer(at: index)
    }

    func double(at index: Int) -> Double? {
        if let currentRow { if case .double(let d) = currentRow[index] { return d } else { return nil } }
        return results?.double(at: index)
    }

    /// True: a `BOOLEAN` is a `TINYINT` 0 or 1, so a Bool is read as an integer first.
    var storesBooleansAsIntegers: Bool { true }
}

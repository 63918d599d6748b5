import CLibPQ
import Depot
import Foundation

/// One libpq connection. Its session runs in UTC with UTF-8 text, so nothing
/// depends on the server's or the machine's zone.
final class PostgresConnection: DriverConnection {
    let handle: OpaquePointer
    private let cancelHandle: OpaquePointer?
    private var statementCount = 0
    private(set) var isClosed = false
    /// Whether errors may quote the values the server reports (``Store/Configuration/showsBoundValues``).
    let showsValues: Bool
    /// The statement whose rows are being streamed, which holds the connection until drained.
    weak var streaming: PostgresStatement?

    init(configuration: PostgresConfiguration) throws {
        showsValues = configuration.store.showsBoundValues
        let pairs = configuration.libpqParameters
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordPointers = keywords.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        let connection = PQconnectdbParams(keywordPointers, valuePointers, 0)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let error = PostgresError.connection(connection, "cannot connect to PostgreSQL at \(configuration.host):\(configuration.port)/\(configuration.database) as \(configuration.user)")
            PQfinish(connection)
            throw error
        }
        handle = connection
        cancelHandle = PQgetCancel(connection)
        // libpq prints server notices ("relation already exists, skipping") to stderr
        // by default; a library must stay quiet.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        var setup = "SET TIME ZONE 'UTC'"
        if let path = configuration.searchPath {
            setup += "; SET search_path TO " + path.split(separator: ",").map {
                "\"" + $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\"", with: "\"\"") + "\""
            }.joined(separator: ", ")
        }
        do {
            try execute(script: setup)
        } catch {
            close()
            throw error
        }
    }

    func nextStatementName() -> String {
        statementCount += 1
        return "depot_\(statementCount)"
    }

    func prepare(_ sql: String) throws -> any DriverStatement {
        PostgresStatement(connection: self, sql: sql)
    }

    func execute(script: String) throws {
        try finishStreaming()
        let result = PQexec(handle, script)
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            // An aborted transaction answers COMMIT with ROLLBACK and no error: make it one.
            if script == "COMMIT", let tag = PQcmdStatus(result), String(cString: tag) == "ROLLBACK" {
                throw DatabaseError(.other, "the server rolled the transaction back instead of committing it", engineCode: "ROLLBACK")
            }
        default:
            throw PostgresError.make(result, handle, showsValues: showsValues)
        }
    }

    /// Reads the rest of a streaming result into memory, so another statement can run.
    func finishStreaming() throws {
        guard let statement = streaming else { return }
        streaming = nil
        try statement.bufferRemainingRows()
    }

    var isInTransaction: Bool {
        PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    var isUsable: Bool { !isClosed && PQstatus(handle) == CONNECTION_OK }

    func interrupt() {
        guard let cancelHandle else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = PQcancel(cancelHandle, &buffer, Int32(buffer.count))
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let cancelHandle { PQfreeCancel(cancelHandle) }
        PQfinish(handle)
    }

    deinit { close() }
}

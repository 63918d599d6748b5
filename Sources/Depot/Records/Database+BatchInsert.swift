import Foundation

/// Groups the rows of a batch insert into multi-row statements. The statement
/// for a full group is prepared once and kept for the whole batch.
///
/// Not generic over the record type: a generic type's metadata would be looked
/// up on every row, since the batch runs in Depot's module, unspecialized.
struct BatchInsert {
    let db: Database
    /// The records' type, whose INSERT text is cached; nil for rows of values.
    let type: (any Record.Type)?
    /// The table the rows go into.
    let table: String
    var names: [String] = []
    var pending: [Value] = []
    var pendingRows = 0
    var rowsPerStatement = 1
    var statementsRun = 0
    /// The full-size statement, prepared once for the batch.
    var full: StatementRun?
    /// The engine's bulk path (PostgreSQL's COPY), when it has one.
    var bulk: (any BulkInsertWriter)?
    /// The bulk insert's log line, metric and span; its rows.
    var bulkRecord: StatementRecord?
    var bulkRows = 0

    /// The connection's bulk path, looked up once per batch.
    let bulking: (any BulkInsertingConnection)?

    init(db: Database, type: any Record.Type) {
        self.db = db
        self.type = type
        table = type.tableName
        bulking = db.connection.driver as? any BulkInsertingConnection
    }

    /// A batch of rows of values into `table`.
    init(db: Database, table: String) {
        self.db = db
        type = nil
        self.table = table
        bulking = db.connection.driver as? any BulkInsertingConnection
    }

    /// The INSERT of `rows` rows of the batch's columns.
    private func insertSQL(rows: Int) -> String {
        if let type { return db.insertSQL(type, names, rows: rows) }
        return db.renderInsert(into: table, names, rows: rows)
    }

    /// Adds a row. `row` is the caller's to reuse afterwards: its values are
    /// bound or copied before this returns.
    mutating func add(_ row: inout EncodedColumns) throws {
        if row.names != names {
            // New names: checked for duplicates once, then every row that matches them is fine.
            row.removeDuplicateNames()
        }
        if let bulking, !row.names.isEmpty {
            try addInBulk(row, bulking)
            return
        }
        if row.names != names {
            try flush()
            release()
            names = row.names
            let byLimit = names.isEmpty ? 1 : db.dialect.maxBoundValues / names.count
            rowsPerStatement = max(1, min(db.dialect.batchInsertRows, byLimit))
            pending.reserveCapacity(rowsPerStatement * names.count)
        }
        if rowsPerStatement == 1 {
            // One row a statement (SQLite): bound straight from the row, not copied into a group.
            try runFull(values: row.values)
            return
        }
        pending.append(contentsOf: row.values)
        pendingRows += 1
        if pendingRows == rowsPerStatement { try flush() }
    }

    private mutating func addInBulk(_ row: EncodedColumns, _ connection: any BulkInsertingConnection) throws {
        do {
            if row.names != names || bulk == nil {
                try finishBulk()
                names = row.names
                try db.checkUsable()
                let writer = try connection.beginBulkInsert(table: table, columns: names)
                bulk = writer
                bulkRecord = StatementRecord.start(db, text: writer.sql)
                bulkRows = 0
            }
            try bulk?.append(row.values)
            bulkRows += 1
        } catch let error as DatabaseError {
            if let writer = bulk {
                writer.cancel()
                bulkRecord?.end(db, values: [], changes: nil, error: error)
            }
            bulk = nil
            if error.isEngineFailure { db.noteEngineFailure() }
            throw error
        }
    }

    mutating func finishBulk() throws {
        guard let writer = bulk else { return }
        bulk = nil
        do {
            try db.checkCancellation()
            try writer.finish()
            bulkRecord?.end(db, values: [], changes: bulkRows, error: nil)
        } catch {
            writer.cancel()
            bulkRecord?.end(db, values: [], changes: nil, error: error)
            if let error = error as? DatabaseError, error.isEngineFailure { db.noteEngineFailure() }
            throw error
        }
    }

    mutating func flush() throws {
        try finishBulk()
        guard pendingRows > 0 else { return }
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingRows = 0
        }
        guard pendingRows == rowsPerStatement else {
            // The last, smaller group: a statement of its own size.
            let text = insertSQL(rows: pendingRows)
            try db.withStatement(text: text, values: pending) { statement, _ in
                while try statement.step() {}
            }
            return
        }
        try runFull(values: pending)
    }

    /// Runs the full-size statement, prepared on first use, with one group's values.
    private mutating func runFull(values: [Value]) throws {
        if full == nil {
            full = try StatementRun(db, preparing: insertSQL(rows: rowsPerStatement))
        }
        // Cancellation takes a lock to read: every 256 statements is prompt enough.
        statementsRun &+= 1
        if statementsRun & 255 == 1 { try db.checkCancellation() }
        try full?.runAgain(db, values: values)
    }

    mutating func release() {
        if let writer = bulk {
            writer.cancel()
            bulkRecord?.end(db, values: [], changes: nil, error: CancellationError())
        }
        bulk = nil
        full?.release(db)
        full = nil
    }
}

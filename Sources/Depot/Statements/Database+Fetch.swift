import Foundation

extension Database {
    /// Fetches every row, decoded.
    ///
    /// ```swift
    /// let titles = try db.fetchAll(String.self, "SELECT title FROM lists ORDER BY position, id")
    /// let lists = try db.fetchAll(RemindersList.self, "SELECT * FROM lists WHERE id IN \(list: ids)")
    /// let rows = try db.fetchAll(Row.self, "SELECT * FROM lists")  // raw values
    /// ```
    ///
    /// A single-value type (`Int`, `String`, `Date`...) reads the only column of
    /// each row; a type with properties reads columns by name.
    ///
    /// - Throws: a ``DatabaseError``: a `decoding` one names the column, the
    ///   Swift type and the value that did not fit.
    public func fetchAll<T: Decodable>(_ type: T.Type, _ sql: SQL) throws -> [T] {
        try withStatement(sql) { statement, _ in
            var results: [T] = []
            guard try statement.step() else { return results }
            let plan = self.plan(for: statement, type)
            if let count = statement.rowCountHint { results.reserveCapacity(count) }
            repeat {
                results.append(try RowDecoder.decode(type, from: statement, plan: plan))
            } while try statement.step()
            return results
        }
    }

    /// Fetches at most one row, decoded: nil when there is none.
    ///
    /// ```swift
    /// let count = try db.fetchOne(Int.self, "SELECT count(*) FROM reminders") ?? 0
    /// let latest = try db.fetchOne(Date?.self, "SELECT max(\(ident: "createdAt")) FROM reminders")
    /// ```
    ///
    /// - Throws: a `tooManyRows` ``DatabaseError`` when the query returns more
    ///   than one row: add `LIMIT 1` if the first row is what you want.
    public func fetchOne<T: Decodable>(_ type: T.Type, _ sql: SQL) throws -> T? {
        try withStatement(sql) { statement, text in
            guard try statement.step() else { return nil }
            let result = try RowDecoder.decode(type, from: statement, plan: self.plan(for: statement, type))
            // A statement the engine compiled to return one row at most needs no second step to prove it.
            if !statement.returnsOneRowAtMost, try statement.step() {
                throw DatabaseError.fetchOneFoundMoreRows
            }
            return result
        }
    }

    /// Decodes each row in turn without keeping them: memory stays flat however
    /// many rows the query returns.
    ///
    /// ```swift
    /// try db.forEach(Reminder.self, "SELECT * FROM reminders") { reminder in
    ///     export(reminder)
    /// }
    /// ```
    public func forEach<T: Decodable>(_ type: T.Type, _ sql: SQL, _ body: (T) throws -> Void) throws {
        let cursor = try self.cursor(type, sql)
        defer { cursor.close() }
        while let element = try cursor.next() {
            try body(element)
        }
    }

    /// A cursor that decodes one row per call to `next()`, without loading the rest.
    ///
    /// ```swift
    /// let cursor = try db.cursor(Reminder.self, "SELECT * FROM reminders ORDER BY id")
    /// while let reminder = try cursor.next() { ... }
    /// ```
    ///
    /// Caveat: the cursor lives as long as the access that opened it; it is
    /// closed when the closure returns, and `next()` then throws.
    public func cursor<T: Decodable>(_ type: T.Type, _ sql: SQL) throws -> Cursor<T> {
        try checkUsable()
        let (text, values) = try sql.rendered(for: dialect)
        let cursor = Cursor<T>(database: self, run: try StatementRun(self, text: text, values: values, streaming: true))
        openCursors.removeAll { $0.cursor == nil }
        openCursors.append(WeakCursor(cursor: cursor))
        return cursor
    }
}

/// What an access needs of a cursor to close it when the access ends.
protocol ClosableCursor: AnyObject {
    func close()
}

struct WeakCursor {
    weak var cursor: (any ClosableCursor)?
}

/// Rows of a query, decoded one at a time. See ``Database/cursor(_:_:)``.
public final class Cursor<Element: Decodable>: ClosableCursor {
    private weak var database: Database?
    private var run: StatementRun?
    private var plan: DecodePlan?
    private var rowsRead = 0

    init(database: Database, run: StatementRun) {
        self.database = database
        self.run = run
    }

    /// A cursor dropped before its last row ends its statement's run.
    deinit { close() }

    /// The next row, decoded; nil when there are no more.
    public func next() throws -> Element? {
        guard let run, let database else {
            throw DatabaseError.misuse("this cursor is closed: it was used after the access that opened it ended")
        }
        let statement = run.statement
        do {
            // Cancellation takes a lock to read: every 256 rows is prompt enough.
            if rowsRead & 255 == 0 { try database.checkUsable() } else if !database.isOpen { try database.checkUsable() }
            rowsRead &+= 1
            guard try statement.step() else {
                self.run = nil
                try run.finish(database)
                return nil
            }
            let plan = self.plan ?? database.plan(for: statement, Element.self)
            self.plan = plan
            return try RowDecoder.decode(Element.self, from: statement, plan: plan)
        } catch {
            guard self.run != nil else { throw error }
            self.run = nil
            throw run.finish(database, failure: error)
        }
    }

    /// Releases the statement early. Called for you when the rows run out, on error, and when the access ends.
    public func close() {
        guard let run else { return }
        self.run = nil
        if let database { run.finishQuietly(database) } else { run.statement.reset() }
    }
}

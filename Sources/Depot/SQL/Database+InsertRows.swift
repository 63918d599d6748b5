extension Database {
    /// Inserts rows of values into `table`'s `columns`, in one savepoint: all
    /// or none.
    ///
    /// The rows take the path `insert(contentsOf:)` takes for records: the
    /// engine's bulk path where it has one (PostgreSQL's COPY), else multi-row
    /// INSERTs of as many rows as the engine binds, each prepared once. Use it
    /// for many rows that a table has no record type for, or that are already
    /// values.
    ///
    /// ```swift
    /// try db.insert(into: "readings", columns: ["sensor", "at", "celsius"],
    ///               rows: samples.map { [.text($0.sensor), .date($0.at), .double($0.celsius)] })
    /// ```
    ///
    /// Caveat: no conflict clause. A row that clashes with a stored one on a
    /// unique key fails the whole call with a `unique` error; for an upsert of
    /// many rows use ``insert(into:columns:_:onConflict:)``.
    ///
    /// - Throws: `misuse`, before anything is written, when `columns` is empty
    ///   or names a column twice, or when a row's count of values is not the
    ///   count of columns (the error names the row's index, never its values).
    public func insert(into table: String, columns: [String], rows: some Sequence<[Value]>) throws {
        guard !columns.isEmpty else {
            throw DatabaseError(.misuse, "an insert of rows into \(table) names no column", table: table)
        }
        if let twice = columns.enumerated().first(where: { columns[..<$0.offset].contains($0.element) })?.element {
            throw DatabaseError(.misuse, "an insert of rows into \(table) names the column \(twice) twice", table: table, column: twice)
        }
        try savepoint { db in
            var batch = BatchInsert(db: db, table: table)
            defer { batch.release() }
            var row = EncodedColumns()
            row.names = columns
            for (index, values) in rows.enumerated() {
                guard values.count == columns.count else {
                    throw DatabaseError(.misuse, "row \(index) of an insert into \(table) has \(values.count) values for \(columns.count) columns", table: table)
                }
                row.values = values
                try batch.add(&row)
            }
            try batch.flush()
        }
    }
}

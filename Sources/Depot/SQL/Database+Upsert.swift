extension Database {
    /// Inserts rows into `table`, and keeps or updates each stored row that
    /// holds the same values of the conflict target: an upsert of many rows,
    /// with expressions, in one statement on every engine.
    ///
    /// `rows` is what follows the column list: `VALUES (…), (…)` or a
    /// `SELECT` (on SQLite, a `SELECT` with a `WHERE` clause: without one
    /// its parser takes `ON CONFLICT` for a join's `ON`).
    ///
    /// ```swift
    /// try db.insert(into: "settings", columns: ["name", "value"], "VALUES (\(name), \(value))",
    ///               onConflict: .update(["name"], setting: ["value"]))
    /// ```
    ///
    /// Caveat: a target that is no unique key of the table is a `syntax`
    /// error. On an engine whose clause takes a clash on any unique key for
    /// a conflict (MariaDB), a table with another unique key besides the
    /// target is `misuse`, not a statement with another meaning.
    public func insert(into table: String, columns: [String], _ rows: SQL, onConflict: OnConflict) throws {
        var statement: SQL = "INSERT INTO \(ident: table) ("
        statement += SQL.join(columns.map { "\(ident: $0)" }, separator: ", ") + ") " + rows + " "
        if dialect.capabilities.conflictClause {
            statement += "ON CONFLICT (" + SQL.join(onConflict.target.map { "\(ident: $0)" }, separator: ", ") + ")"
            if let assignments = onConflict.assignments {
                // Nothing to update: set the target to itself, as an update that changes nothing.
                let set = assignments.isEmpty ? onConflict.target.map(OnConflict.Assignment.inserted) : assignments
                statement += " DO UPDATE SET " + SQL.join(set.map { "\(ident: $0.column) = \($0.value)" }, separator: ", ")
            } else {
                statement += " DO NOTHING"
            }
        } else {
            try requireOnlyUniqueKey(table, onConflict.target)
            guard let clause = dialect.duplicateKeyClause(table: table, target: onConflict.target, assignments: onConflict.assignments) else {
                throw DatabaseError(.misuse, "\(dialect.engineName) has no upsert clause: its dialect writes none", table: table)
            }
            statement += clause
        }
        try execute(statement)
    }

    /// Fails unless `target` is the table's one unique key: the only case
    /// where a clause that takes any unique key's clash for a conflict means
    /// what `ON CONFLICT (target)` does.
    private func requireOnlyUniqueKey(_ table: String, _ target: [String]) throws {
        try requireUniqueKey(table, target)
        guard let keys = try uniqueKeys(of: table), keys.count > 1 else { return }
        throw DatabaseError(.misuse, """
            \(table) has another unique key besides (\(target.joined(separator: ", "))): \(dialect.engineName)'s upsert would take a clash on it \
            for a conflict and update that row; upsert on a table whose one unique key is the target
            """, table: table)
    }

    /// Makes the rest of this transaction plan each statement for its own
    /// values (``SQLDialect/planForEachExecutionStatement``); nothing on an
    /// engine that plans so anyway.
    @_spi(Sync) public func planForEachExecution() throws {
        if let statement = dialect.planForEachExecutionStatement { try execute(SQL(unsafeRaw: statement)) }
    }
}

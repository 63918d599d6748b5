import Foundation

/// The version a versioned record was read at: what its save compares.
struct RecordVersion {
    /// The ``Record/versionColumn``.
    var column: String
    /// The record's value of it, which the stored row must still hold.
    var expected: Value
}

extension Database {
    /// The version column of `T` and the record's value of it; nil for a
    /// record without one.
    ///
    /// - Throws: `misuse` when the record encodes no such column or holds a
    ///   version that is not an integer (a nil version compares equal to nothing).
    func recordVersion<T: Record>(_ type: T.Type, _ columns: EncodedColumns) throws -> RecordVersion? {
        guard let column = T.versionColumn else { return nil }
        guard let index = columns.names.firstIndex(of: column) else {
            throw DatabaseError.misuse("\(T.self).versionColumn names \(column), which the record does not encode (it encodes \(columns.names))")
        }
        guard case .integer = columns.values[index] else {
            throw DatabaseError(.misuse, "the version column \(column) of \(T.self) holds \(columns.values[index].kindName), not an integer: a versioned record's version is never nil (insert it as 0)",
                                table: T.tableName, column: column)
        }
        return RecordVersion(column: column, expected: columns.values[index])
    }

    /// Runs a versioned record's UPDATE (which compares and bumps the
    /// version) and returns the row as stored; a `conflict` error when the
    /// row is there at another version, `notFound` when it is not there.
    func updateVersioned<T: Record>(_ type: T.Type, _ sql: SQL, key: [String], keyConditions: [SQL], version: RecordVersion) throws -> T {
        let (text, values) = try sql.rendered(for: dialect)
        if dialect.capabilities.updateReturning {
            if let stored = try fetchReturnedIfAny(T.self, text + " RETURNING *", values) { return stored }
        } else if try execute(text: text, values: values) > 0 {
            // The UPDATE holds the row's lock until the transaction ends: this reads what it wrote.
            let selectSQL: SQL = "SELECT * FROM \(ident: T.tableName) WHERE \(SQL.join(keyConditions, separator: " AND "))"
            let (select, keyValues) = try selectSQL.rendered(for: dialect)
            return try fetchReturned(T.self, select, keyValues, action: "update")
        }
        guard try rowExists(T.self, keyConditions) else {
            throw DatabaseError(.notFound, "no \(T.self) with this primary key to update", table: T.tableName, sql: text)
        }
        throw Self.versionConflict(T.self, key: key, version: version, action: "update", sql: text)
    }

    /// Whether a row of `T` meets `conditions` (its primary key's).
    func rowExists<T: Record>(_ type: T.Type, _ conditions: [SQL]) throws -> Bool {
        try fetchOne(Bool.self, "SELECT EXISTS (SELECT 1 FROM \(ident: T.tableName) WHERE \(SQL.join(conditions, separator: " AND "))) AS \(ident: "e")") ?? false
    }

    /// The `conflict` error of a versioned save that found the row at
    /// another version. It names the key's columns and the version column;
    /// their values are bound values, shown only when the store is configured to.
    static func versionConflict<T: Record>(_ type: T.Type, key: [String], version: RecordVersion, action: String, sql: String?) -> DatabaseError {
        DatabaseError(.conflict, "another writer saved this \(T.self) (key \(key.joined(separator: ", "))) since it was read: its \(version.column) is no longer the record's; read it again, then retry or merge the \(action)",
                      table: T.tableName, column: version.column, sql: sql)
    }
}

import Foundation

extension Database {
    /// What an upsert does with a stored row that holds its target's values.
    enum ConflictAction {
        /// Keeps the stored row; the upsert returns nil.
        case keep
        /// Sets these columns from the record (none: leaves the row as it is)
        /// and returns the row as stored.
        case update([String])
    }

    /// `INSERT … ON CONFLICT (target) DO UPDATE | DO NOTHING … RETURNING *` on an
    /// engine without the clause (``Capabilities/conflictClause`` false), with
    /// its meaning: only a row holding the target's values is updated (a clash
    /// on another unique key fails as `unique`), and a target that is no unique
    /// key of the table is a `syntax` error.
    ///
    /// The stored row is looked up and locked (`SELECT … FOR UPDATE`), then
    /// updated; or the record is inserted, in a savepoint: when a concurrent
    /// transaction inserted the target since the lookup, it is looked up once more.
    func lockingUpsert<T: Record>(_ type: T.Type, _ columns: EncodedColumns, target: [String], onConflict action: ConflictAction, version: RecordVersion? = nil) throws -> T? {
        try requireUniqueKey(T.tableName, target)
        let targetValues = try target.map { name in
            guard let index = columns.names.firstIndex(of: name) else {
                throw DatabaseError.misuse("the conflict target \(name) is not a column the record inserts")
            }
            return columns.values[index]
        }
        // A NULL in the target conflicts with no row: NULLs are distinct in a unique key.
        let canConflict = !targetValues.contains(where: \.isNull)
        if canConflict, let stored = try resolveConflict(T.self, columns, target, targetValues, action, version) {
            return stored
        }
        do {
            return try savepoint { db in
                try db.fetchReturned(T.self, db.insertSQL(T.self, columns.names, returning: true), columns.values, action: "upsert")
            }
        } catch let error as DatabaseError where error.kind == .unique && canConflict {
            // Another transaction stored the target since the lookup; any other clash is the error it is.
            guard let stored = try resolveConflict(T.self, columns, target, targetValues, action, version) else { throw error }
            return stored
        }
    }

    /// Every upsert's one path: inserts the encoded record or, when a stored
    /// row holds the values of `target` (the columns of a primary key or a
    /// unique constraint), keeps it (nil) or updates it (the row as stored).
    /// `INSERT … ON CONFLICT (target) DO UPDATE | DO NOTHING … RETURNING *`
    /// where the engine has the clause (``Capabilities/conflictClause``),
    /// ``lockingUpsert(_:_:target:onConflict:)`` with the same meaning where
    /// it has not; the key generators are advanced past an explicit key of a
    /// row stored.
    ///
    /// A record with a ``Record/versionColumn`` updates a stored row only at
    /// its own version, and bumps it: a stored row at another version is a
    /// `conflict` error.
    func upsertRow<T: Record>(_ type: T.Type, _ columns: EncodedColumns, target: [String], onConflict action: ConflictAction) throws -> T? {
        var version: RecordVersion?
        if case .update = action { version = try recordVersion(T.self, columns) }
        let stored: T?
        if dialect.capabilities.conflictClause {
            var text = insertSQL(T.self, columns.names)
            text += " ON CONFLICT (" + target.map { dialect.quote(identifier: $0) }.joined(separator: ", ") + ")"
            switch action {
            case .keep:
                text += " DO NOTHING"
            case .update(let names):
                var assignments = names.filter { $0 != version?.column }.map { dialect.quote(identifier: $0) + " = excluded." + dialect.quote(identifier: $0) }
                if let version {
                    // Compared and bumped in the statement: no other writer comes between.
                    let stored = dialect.quote(identifier: T.tableName) + "." + dialect.quote(identifier: version.column)
                    assignments.append(dialect.quote(identifier: version.column) + " = " + stored + " + 1")
                    text += " DO UPDATE SET " + assignments.joined(separator: ", ")
                    text += " WHERE " + stored + " = excluded." + dialect.quote(identifier: version.column)
                } else {
                    // Nothing to update: set the target to itself, so RETURNING still yields the row.
                    if assignments.isEmpty { assignments = target.map { dialect.quote(identifier: $0) + " = excluded." + dialect.quote(identifier: $0) } }
                    text += " DO UPDATE SET " + assignments.joined(separator: ", ")
                }
            }
            stored = try fetchReturnedIfAny(T.self, text + " RETURNING *", columns.values)
            if stored == nil, let version {
                throw Self.versionConflict(T.self, key: target, version: version, action: "upsert", sql: text)
            }
        } else {
            stored = try lockingUpsert(T.self, columns, target: target, onConflict: action, version: version)
        }
        if stored != nil { try advanceKeyGenerators(T.self, past: columns) }
        return stored
    }

    /// ``upsertRow(_:_:target:onConflict:)`` that updates `updating` (none:
    /// leaves the row as it is): the row as stored, always.
    func upsertRow<T: Record>(_ type: T.Type, _ columns: EncodedColumns, target: [String], updating: [String]) throws -> T {
        guard let stored = try upsertRow(T.self, columns, target: target, onConflict: .update(updating)) else {
            throw DatabaseError(.other, "upsert returned no row", table: T.tableName)
        }
        return stored
    }

    /// The stored row holding the target's values, locked, then kept or
    /// updated: `.some(nil)` when kept, nil when there is none.
    private func resolveConflict<T: Record>(
        _ type: T.Type, _ columns: EncodedColumns, _ target: [String], _ targetValues: [Value], _ action: ConflictAction, _ version: RecordVersion?
    ) throws -> T?? {
        let table = dialect.quote(identifier: T.tableName)
        func matching(from first: Int) -> String {
            " WHERE " + target.enumerated().map { dialect.quote(identifier: $1) + " = " + dialect.placeholder(first + $0) }.joined(separator: " AND ")
        }
        let lookup = "SELECT " + (version.map { dialect.quote(identifier: $0.column) } ?? "1") + " FROM " + table + matching(from: 1) + " FOR UPDATE"
        let storedVersion = try withStatement(text: lookup, values: targetValues) { statement, _ -> Value?? in
            guard try statement.step() else { return nil }
            let value = try statement.value(at: 0)
            while try statement.step() {}
            return .some(value)
        }
        guard let storedVersion else { return nil }
        guard case .update(var updated) = action else { return .some(nil) }
        if let version {
            guard storedVersion == version.expected else {
                throw Self.versionConflict(T.self, key: target, version: version, action: "upsert", sql: lookup)
            }
            updated.removeAll { $0 == version.column }
            let column = dialect.quote(identifier: version.column)
            _ = try execute(text: "UPDATE " + table + " SET " + column + " = " + column + " + 1" + matching(from: 1), values: targetValues)
        }
        if !updated.isEmpty {
            var values: [Value] = []
            let assignments = try updated.enumerated().map { position, name in
                guard let index = columns.names.firstIndex(of: name) else {
                    throw DatabaseError.misuse("the upsert updates \(name), which the record does not insert")
                }
                values.append(columns.values[index])
                return dialect.quote(identifier: name) + " = " + dialect.placeholder(position + 1)
            }
            _ = try execute(text: "UPDATE " + table + " SET " + assignments.joined(separator: ", ") + matching(from: updated.count + 1),
                            values: values + targetValues)
        }
        return .some(try fetchReturned(T.self, "SELECT * FROM " + table + matching(from: 1), targetValues, action: "upsert"))
    }

    /// Fails with `syntax` unless `columns` are exactly one unique key of `table`
    /// (in any order), as `ON CONFLICT` does on the engines that have it.
    func requireUniqueKey(_ table: String, _ columns: [String]) throws {
        guard let keys = try uniqueKeys(of: table) else { return }
        guard keys.contains(Set(columns)) else {
            throw DatabaseError(.syntax, "no primary key or unique constraint of \(table) is exactly (\(columns.joined(separator: ", "))): an upsert's conflict target must be one",
                                table: table)
        }
    }

    /// The unique keys of `table`, from ``SQLDialect/uniqueKeys(of:)``; nil
    /// when the dialect has no query for them.
    func uniqueKeys(of table: String) throws -> [Set<String>]? {
        guard let query = dialect.uniqueKeys(of: table) else { return nil }
        return try fetchAll(String.self, query).map { json in
            guard let names = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else {
                throw DatabaseError(.other, "the dialect's unique keys of \(table) are not a JSON array of names: \(json)", table: table)
            }
            return Set(names)
        }
    }
}

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
    func lockingUpsert<T: Record>(_ type: T.Type, _ columns: EncodedColumns, target: [String], onConflict action: ConflictAction) throws -> T? {
        try requireUniqueKey(T.tableName, target)
        let targetValues = try target.map { name in
            guard let index = columns.names.firstIndex(of: name) else {
                throw DatabaseError.misuse("the conflict target \(name) is not a column the record inserts")
            }
            return columns.values[index]
        }
        // A NULL in the target conflicts with no row: NULLs are distinct in a unique key.
        let canConflict = !targetValues.contains(where: \.isNull)
        if canConflict, let stored = try resolveConflict(T.self, columns, target, targetValues, action) {
            return stored
        }
        do {
            return try savepoint { db in
                try db.fetchReturned(T.self, db.insertSQL(T.self, columns.names, returning: true), columns.values, action: "upsert")
            }
        } catch let error as DatabaseError where error.kind == .unique && canConflict {
            // Another transaction stored the target since the lookup; any other clash is the error it is.
            guard let stored = try resolveConflict(T.self, columns, target, targetValues, action) else { throw error }
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
    func upsertRow<T: Record>(_ type: T.Type, _ columns: EncodedColumns, target: [String], onConflict action: ConflictAction) throws -> T? {
        let stored: T?
        if dialect.capabilities.conflictClause {
            var text = insertSQL(T.self, columns.names)
            text += " ON CONFLICT (" + target.map { dialect.quote(identifier: $0) }.joined(separator: ", ") + ")"
            switch action {
            case .keep:
                text += " DO NOTHING"
            case .update(let names):
                // Nothing to update: set the target to itself, so RETURNING still yields the row.
                let set = names.isEmpty ? target : names
                text += " DO UPDATE SET " + set.map { dialect.quote(identifier: $0) + " = excluded." + dialect.quote(identifier: $0) }.joined(separator: ", ")
            }
            stored = try fetchReturnedIfAny(T.self, text + " RETURNING *", columns.values)
        } else {
            stored = try lockingUpsert(T.self, columns, target: target, onConflict: action)
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
        _ type: T.Type, _ columns: EncodedColumns, _ target: [String], _ targetValues: [Value], _ action: ConflictAction
    ) throws -> T?? {
        let table = dialect.quote(identifier: T.tableName)
        func matching(from first: Int) -> String {
            " WHERE " + target.enumerated().map { dialect.quote(identifier: $1) + " = " + dialect.placeholder(first + $0) }.joined(separator: " AND ")
        }
        let exists = try withStatement(text: "SELECT 1 FROM " + table + matching(from: 1) + " FOR UPDATE", values: targetValues) { statement, _ in
            let found = try statement.step()
            while try statement.step() {}
            return found
        }
        guard exists else { return nil }
        guard case .update(let updated) = action else { return .some(nil) }
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

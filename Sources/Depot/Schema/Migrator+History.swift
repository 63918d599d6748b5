import Foundation

// What a migrator tells and undoes: where each migration stands, starting a
// development database over, and reverting the last migrations.
extension Migrator {
    /// Each registered migration, applied or pending, and whether an applied
    /// one was edited since; then any recorded migration no longer registered.
    public func status(_ store: Store) async throws -> [Status] {
        let table = tableName
        let checksums = try await checksums(store)
        let applied = try await store.write { db in
            try Self.createTable(table, db)
            return try Self.applied(table, db)
        }
        let byName = Dictionary(applied.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var statuses = migrations.enumerated().map { position, migration in
            let record = byName[migration.name]
            return Status(name: migration.name, appliedAt: record?.appliedAt,
                          isEdited: record.map { Self.differs($0.checksum, checksums[position]) } ?? false)
        }
        let registered = Set(migrations.map(\.name))
        statuses += applied.filter { !registered.contains($0.name) }.map { Status(name: $0.name, appliedAt: $0.appliedAt, isEdited: true) }
        return statuses
    }

    /// Drops every table, view and sequence: the database as new.
    func erase(_ store: Store) async throws {
        try await store.write { db in
            struct Object: Decodable { var kind: String; var name: String }
            let objects = try db.fetchAll(Object.self, SQL(unsafeRaw: db.dialect.schemaObjectsQuery))
            for view in objects where view.kind == "view" {
                try db.execute(SQL(unsafeRaw: "DROP VIEW IF EXISTS " + db.dialect.quote(identifier: view.name)))
            }
            for statement in db.dialect.dropTables(objects.filter { $0.kind == "table" }.map(\.name)) {
                try db.execute(SQL(unsafeRaw: statement))
            }
            for sequence in objects where sequence.kind == "sequence" {
                try db.execute(SQL(unsafeRaw: "DROP SEQUENCE IF EXISTS " + db.dialect.quote(identifier: sequence.name)))
            }
        }
    }

    /// Undoes the applied migrations registered after `last` (all of them when
    /// `last` is nil), newest first, each with its revert in its own transaction.
    ///
    /// - Throws: a `migration` error naming a migration to undo that has no
    ///   revert, before anything is undone.
    public func revert(_ store: Store, to last: String?) async throws {
        try checkNames()
        let keep = try count(through: last) ?? 0
        let table = tableName
        let checksums = try await checksums(store)
        let applied = try await store.write { db in
            try Self.createTable(table, db)
            return try Self.applied(table, db)
        }
        try validate(applied, checksums)
        let undone = Array(migrations[keep..<min(applied.count, migrations.count)].reversed())
        if let fixed = undone.first(where: { !$0.isRevertible }) {
            throw DatabaseError(.migration, "migration \"\(fixed.name)\" has no revert; nothing was undone")
        }
        for migration in undone {
            guard let revert = migration.revert else { continue }
            do {
                try await store.write { db in
                    try Self.lock(table, db)
                    try revert(db)
                    try db.execute("DELETE FROM \(ident: table) WHERE \(ident: "name") = \(migration.name)")
                }
            } catch let error as CancellationError {
                throw error
            } catch {
                throw DatabaseError(.migration, "reverting migration \"\(migration.name)\" failed and was rolled back: \(error)")
            }
        }
    }
}

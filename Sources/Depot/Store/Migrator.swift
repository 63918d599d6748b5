import Foundation

/// Named schema migrations, applied once each, in the order they were registered.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("create lists") { db in
///     try db.execute(script: """
///         CREATE TABLE "lists" ("id" \(type: .autoIncrementingPrimaryKey), "title" \(type: .text) NOT NULL)
///         """)
/// }
/// migrator.register("add list color") { db in
///     try db.execute("ALTER TABLE \(ident: "lists") ADD COLUMN \(ident: "color") \(type: .integer)")
/// }
/// try await migrator.migrate(store)
/// ```
///
/// Each migration runs in its own write transaction and is recorded, in the same
/// transaction, in a table (`depotMigrations` by default). A failing migration
/// rolls back whole and the error names it; the ones before it stay applied.
/// Running again applies only what is new.
///
/// Migrators racing on one database (several processes or stores starting at
/// once) take turns: each transaction first takes a lock (an advisory lock on
/// PostgreSQL; SQLite's write transactions exclude each other), so each
/// migration is applied once and none fails.
///
/// Several apps sharing one database keep their histories apart with their own
/// table: `Migrator(tableName: "billingMigrations")`. Each validates only its own.
///
/// Caveat: migrations are history. Never edit, rename, reorder or remove one
/// that has shipped: the migrator refuses a database whose recorded migrations
/// are not a prefix of the registered ones (an `unknown migration` error),
/// rather than guess.
public struct Migrator: Sendable {
    /// One registered migration.
    public struct Migration: Sendable {
        /// Its unique name, as recorded in the database.
        public let name: String
        let migrate: @Sendable (Database) throws -> Void
    }

    /// The registered migrations, in order.
    public private(set) var migrations: [Migration] = []
    /// The table that records applied migrations.
    public let tableName: String

    /// A migrator that records applied migrations in `tableName`.
    public init(tableName: String = "depotMigrations") {
        self.tableName = tableName
    }

    /// Registers a migration after the ones already registered.
    ///
    /// Registering a name twice is a programming error that ``migrate(_:)`` reports.
    public mutating func register(_ name: String, _ migrate: @escaping @Sendable (Database) throws -> Void) {
        migrations.append(Migration(name: name, migrate: migrate))
    }

    /// Applies the migrations not applied yet, each in its own transaction.
    ///
    /// - Throws: a `migration` ``DatabaseError`` naming the migration that failed
    ///   (its message includes the underlying error), or reporting recorded
    ///   migrations that are not registered.
    public func migrate(_ store: Store) async throws {
        try checkNames()
        let table = tableName
        // Most starts find every migration applied: a read says so without
        // taking the write lock (and works on a database that cannot be written).
        let registered = migrations.map(\.name)
        if let applied = try? await store.read(from: .primary, { db in
            try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: table) ORDER BY \(ident: "position"), \(ident: "name")")
        }), applied.count == registered.count {
            try Self.validate(applied: applied, registered: registered)
            return
        }
        try await store.write { db in
            try Self.lock(table, db)
            try Self.createTable(table, db)
        }
        for (position, migration) in migrations.enumerated() {
            let registered = migrations.map(\.name)
            do {
                try await store.write { db in
                    try Self.lock(table, db)
                    let applied = try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: table) ORDER BY \(ident: "position"), \(ident: "name")")
                    try Self.validate(applied: applied, registered: registered)
                    guard !applied.contains(migration.name) else { return }
                    try migration.migrate(db)
                    try db.execute("""
                        INSERT INTO \(ident: table) ("name", "position", "appliedAt")
                        VALUES (\(migration.name), \(position), \(Date()))
                        """)
                }
            } catch let error as DatabaseError where error.kind == .migration {
                throw error
            } catch let error as CancellationError {
                throw error
            } catch {
                var failure = DatabaseError(.migration, "migration \"\(migration.name)\" failed and was rolled back: \(error)")
                if let underlying = error as? DatabaseError {
                    failure.engineCode = underlying.engineCode
                    failure.sql = underlying.sql
                }
                throw failure
            }
        }
    }

    /// The names of the applied migrations, in the order they were applied.
    public func appliedMigrations(_ store: Store) async throws -> [String] {
        let table = tableName
        return try await store.write { db in
            try Self.createTable(table, db)
            return try db.fetchAll(String.self, "SELECT \(ident: "name") FROM \(ident: table) ORDER BY \(ident: "position"), \(ident: "name")")
        }
    }

    /// Waits for any other migrator of this table (another process, another
    /// connection) to finish its transaction: on PostgreSQL an advisory lock on a
    /// key made from the table's name; SQLite's write transactions already exclude each other.
    static func lock(_ table: String, _ db: Database) throws {
        // FNV-1a: stable across processes, unlike Hasher.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "depot.migrations.\(table)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        guard let statement = db.dialect.migrationLock(key: Int64(bitPattern: hash)) else { return }
        try db.execute(statement)
    }

    static func createTable(_ table: String, _ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS \(ident: table) (
                "name" \(type: .text) NOT NULL PRIMARY KEY,
                "position" \(type: .integer) NOT NULL,
                "appliedAt" \(type: .date) NOT NULL)
            """)
    }

    private func checkNames() throws {
        var seen: Set<String> = []
        for migration in migrations where !seen.insert(migration.name).inserted {
            throw DatabaseError(.migration, "migration \"\(migration.name)\" is registered twice")
        }
    }

    static func validate(applied: [String], registered: [String]) throws {
        for (index, name) in applied.enumerated() {
            guard registered.contains(name) else {
                throw DatabaseError(.migration, "unknown migration \"\(name)\" is recorded in the database but not registered: was it renamed or removed, or is this database from a newer version?")
            }
            guard index < registered.count, registered[index] == name else {
                throw DatabaseError(.migration, "migration \"\(name)\" was applied in a different order than registered; migrations are history and must not be reordered")
            }
        }
    }
}

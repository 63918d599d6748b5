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
/// Migrations registered as a script (`register(_:script:revert:)`) carry a
/// checksum of their text, recorded when they are applied: a script edited
/// after it ran is refused, naming it. A migration written as a closure cannot
/// be checked that way; give it a `revision` and change it when you change the
/// closure, or prefer scripts.
///
/// Caveat: migrations are history. Never edit, rename, reorder or remove one
/// that has shipped: the migrator refuses a database whose recorded migrations
/// are not a prefix of the registered ones (an `unknown migration` error), or
/// whose recorded checksum differs, rather than guess. In development, set
/// ``erasesDatabaseWhenMigrationsChange`` to start over instead.
public struct Migrator: Sendable {
    /// One registered migration.
    public struct Migration: Sendable {
        /// Its unique name, as recorded in the database.
        public let name: String
        let migrate: @Sendable (Database) throws -> Void
        let revert: (@Sendable (Database) throws -> Void)?
        /// What is recorded to notice an edit: the script's text for the engine, or the revision.
        let fingerprint: (@Sendable (any SQLDialect) throws -> String)?

        /// Whether it can be undone (``Migrator/revert(_:to:)``).
        public var isRevertible: Bool { revert != nil }
    }

    /// Where a migration stands in a database (``Migrator/status(_:)``).
    public struct Status: Sendable, Equatable {
        /// The migration's name.
        public var name: String
        /// When it was applied; nil while it is pending.
        public var appliedAt: Date?
        /// Whether it was applied with another checksum than its registration's now: edited since.
        public var isEdited: Bool
        /// Whether it is applied.
        public var isApplied: Bool { appliedAt != nil }
    }

    /// Drops every table, view and sequence of the database (of the current
    /// schema, on PostgreSQL) and migrates from the start whenever a recorded
    /// migration was edited, renamed or removed. For development only: it
    /// deletes all data. Off by default.
    public var erasesDatabaseWhenMigrationsChange = false

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
    /// A closure cannot be checked for edits: pass a `revision` and change it
    /// with the closure, so a database that ran the old one is refused.
    public mutating func register(_ name: String, revision: String? = nil,
                                  _ migrate: @escaping @Sendable (Database) throws -> Void,
                                  revert: (@Sendable (Database) throws -> Void)? = nil) {
        var fingerprint: (@Sendable (any SQLDialect) throws -> String)?
        if let revision {
            fingerprint = { @Sendable _ in "revision " + revision }
        }
        migrations.append(Migration(name: name, migrate: migrate, revert: revert, fingerprint: fingerprint))
    }

    /// Registers a migration written as a script, whose text is checked: a
    /// database that ran another text under this name is refused.
    ///
    /// ```swift
    /// migrator.register("create lists", script: """
    ///     CREATE TABLE "lists" ("id" \(type: .autoIncrementingPrimaryKey), "title" \(type: .text) NOT NULL)
    ///     """, revert: "DROP TABLE \"lists\"")
    /// ```
    public mutating func register(_ name: String, script: SQL, revert: SQL? = nil) {
        var reverting: (@Sendable (any SQLDialect) -> SQL)?
        if let revert {
            reverting = { @Sendable _ in revert }
        }
        register(name, script: { @Sendable _ in script }, revert: reverting)
    }

    /// Registers a migration whose script depends on the engine: `script` only
    /// chooses the text (it runs again to check for edits), it changes nothing.
    public mutating func register(_ name: String, script: @escaping @Sendable (any SQLDialect) -> SQL,
                                  revert: (@Sendable (any SQLDialect) -> SQL)? = nil) {
        var reverting: (@Sendable (Database) throws -> Void)?
        if let revert {
            reverting = { @Sendable db in try db.execute(script: revert(db.dialect)) }
        }
        let migrate: @Sendable (Database) throws -> Void = { db in try db.execute(script: script(db.dialect)) }
        let fingerprint: @Sendable (any SQLDialect) throws -> String = { dialect in try script(dialect).rendered(for: dialect).text }
        migrations.append(Migration(name: name, migrate: migrate, revert: reverting, fingerprint: fingerprint))
    }

    /// Applies the migrations not applied yet, each in its own transaction.
    ///
    /// - Throws: a `migration` ``DatabaseError`` naming the migration that failed
    ///   (its message includes the underlying error), or reporting recorded
    ///   migrations that are not registered.
    public func migrate(_ store: Store) async throws {
        try await migrate(store, upTo: nil)
    }

    /// Applies the migrations not applied yet up to and including `last`, and no further.
    ///
    /// - Throws: a `migration` error when no migration is named `last`.
    public func migrate(_ store: Store, upTo last: String) async throws {
        try await migrate(store, upTo: Optional(last))
    }

    private func migrate(_ store: Store, upTo last: String?) async throws {
        try checkNames()
        let count = try self.count(through: last) ?? migrations.count
        let table = tableName
        let checksums = try await checksums(store)
        // Most starts find every migration applied: a read says so without
        // taking the write lock (and works on a database that cannot be written).
        if let applied = try? await store.read(from: .primary, { db in try Self.applied(table, db) }), applied.count >= count {
            do {
                try validate(applied, checksums)
                return
            } catch let error as DatabaseError where error.kind == .migration && erasesDatabaseWhenMigrationsChange {
                try await erase(store)
            }
        }
        try await store.write { db in
            try Self.lock(table, db)
            try Self.createTable(table, db)
        }
        for (position, migration) in migrations.prefix(count).enumerated() {
            do {
                let erased = try await store.write { db -> Bool in
                    try Self.lock(table, db)
                    let applied = try Self.applied(table, db)
                    do {
                        try validate(applied, checksums)
                    } catch let error as DatabaseError where error.kind == .migration && erasesDatabaseWhenMigrationsChange {
                        return true
                    }
                    guard !applied.contains(where: { $0.name == migration.name }) else { return false }
                    try migration.migrate(db)
                    try db.execute("""
                        INSERT INTO \(ident: table) ("name", "position", "appliedAt", "checksum")
                        VALUES (\(migration.name), \(position), \(Date()), \(checksums[position]))
                        """)
                    return false
                }
                if erased {
                    try await erase(store)
                    return try await migrate(store, upTo: last)
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
            return try Self.applied(table, db).map(\.name)
        }
    }

    /// Waits for any other migrator of this table (another process, another
    /// connection) to finish its transaction: the connection's migration lock
    /// (``DriverConnection/lockForMigration(key:)``) on a key made from the
    /// table's name, an advisory lock on PostgreSQL; SQLite's write
    /// transactions already exclude each other.
    static func lock(_ table: String, _ db: Database) throws {
        // FNV-1a: stable across processes, unlike Hasher.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "depot.migrations.\(table)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        try db.lockForMigration(key: Int64(bitPattern: hash))
    }

    static func createTable(_ table: String, _ db: Database) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS \(ident: table) (
                "name" \(keyType: .text) NOT NULL PRIMARY KEY,
                "position" \(type: .integer) NOT NULL,
                "appliedAt" \(type: .date) NOT NULL,
                "checksum" \(type: .text))
            """)
        // A table made before checksums were recorded gains the column.
        let hasChecksum = (try? db.savepoint { db in
            _ = try db.fetchAll(Row.self, "SELECT \(ident: "checksum") FROM \(ident: table) WHERE 1 = 0")
        }) != nil
        if !hasChecksum {
            try db.execute("ALTER TABLE \(ident: table) ADD COLUMN \(ident: "checksum") \(type: .text)")
        }
    }

    /// A migration as the database recorded it.
    struct Applied: Decodable, Sendable {
        var name: String
        var appliedAt: Date
        var checksum: String?
    }

    static func applied(_ table: String, _ db: Database) throws -> [Applied] {
        try db.fetchAll(Applied.self, """
            SELECT \(ident: "name"), \(ident: "appliedAt"), \(ident: "checksum") FROM \(ident: table)
            ORDER BY \(ident: "position"), \(ident: "name")
            """)
    }

    /// How many migrations there are up to and including `last`; nil for nil.
    func count(through last: String?) throws -> Int? {
        guard let last else { return nil }
        guard let index = migrations.firstIndex(where: { $0.name == last }) else {
            throw DatabaseError(.migration, "no migration is named \"\(last)\"")
        }
        return index + 1
    }

    func checkNames() throws {
        var seen: Set<String> = []
        for migration in migrations where !seen.insert(migration.name).inserted {
            throw DatabaseError(.migration, "migration \"\(migration.name)\" is registered twice")
        }
    }

    /// Each registered migration's checksum on this store's engine (nil for a closure without a revision).
    func checksums(_ store: Store) async throws -> [String?] {
        try migrations.map { migration in try migration.fingerprint.map { Self.checksum(try $0(store.dialect)) } }
    }

    /// FNV-1a, 64 bits, in hex: stable across processes and platforms. A
    /// check against edits, not against an adversary.
    static func checksum(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Whether a recorded and a registered checksum tell of an edit: only when both exist.
    static func differs(_ recorded: String?, _ registered: String?) -> Bool {
        guard let recorded, let registered else { return false }
        return recorded != registered
    }

    func validate(_ applied: [Applied], _ checksums: [String?]) throws {
        let registered = migrations.map(\.name)
        for (index, record) in applied.enumerated() {
            let name = record.name
            guard registered.contains(name) else {
                throw DatabaseError(.migration, "unknown migration \"\(name)\" is recorded in the database but not registered: was it renamed or removed, or is this database from a newer version?")
            }
            guard index < registered.count, registered[index] == name else {
                throw DatabaseError(.migration, "migration \"\(name)\" was applied in a different order than registered; migrations are history and must not be reordered")
            }
            if Self.differs(record.checksum, checksums[index]) {
                throw DatabaseError(.migration, "migration \"\(name)\" was edited after it was applied to this database "
                    + "(checksum \(record.checksum ?? "") then, \(checksums[index] ?? "") now); migrations are history: "
                    + "add a new migration instead, or in development set erasesDatabaseWhenMigrationsChange")
            }
        }
    }
}

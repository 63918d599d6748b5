/// How one engine spells the parts of SQL that differ between engines.
///
/// A backend provides one; the core renders every ``SQL`` through it, so
/// placeholders, quoting and column types never leak into shared code.
public protocol SQLDialect: Sendable {
    /// Statements that make commits to these tables heard by observations on
    /// other connections (``Database/enableObservation(of:)``); none by default.
    func observationSetup(tables: [String]) -> [String]
    /// A query of the database's own tables, views and sequences (of the
    /// current schema where there are schemas) as rows of `kind` (`table`,
    /// `view` or `sequence`) and `name`, for ``Migrator/erasesDatabaseWhenMigrationsChange``.
    /// The default reads `information_schema`.
    var schemaObjectsQuery: String { get }
    /// Statements that drop these tables whatever references them; by default one
    /// `DROP TABLE IF EXISTS … CASCADE`.
    func dropTables(_ names: [String]) -> [String]
    /// The engine's name in messages: `SQLite`, `PostgreSQL`.
    var engineName: String { get }
    /// The placeholder for the 1-based `index`-th bound value: `?1` or `$1`.
    func placeholder(_ index: Int) -> String
    /// A quoted identifier. The default doubles `"` and wraps the name in `"`.
    func quote(identifier: String) -> String
    /// The column type the engine uses to store a portable type.
    func typeName(_ type: ColumnType) -> String
    /// The most values one statement may bind.
    var maxBoundValues: Int { get }
    /// What this engine (or this store of it) can and cannot do.
    var capabilities: Capabilities { get }
    /// How many rows one INSERT of a batch holds (further limited by ``maxBoundValues``).
    /// 1 means one reused single-row statement, best where a statement costs no round trip.
    var batchInsertRows: Int { get }
    /// The statement that moves an auto-incrementing key's generator past `value`,
    /// run after an insert gave that key explicitly, so the next generated key
    /// does not collide with it; nil when the engine needs none.
    ///
    /// SQLite's `INTEGER PRIMARY KEY` takes the largest key plus one by itself;
    /// PostgreSQL's identity sequence does not look at the rows, so its dialect
    /// advances the sequence (never backwards) when the column has one.
    func advanceKeyGenerator(table: String, column: String, past value: Int64) -> SQL?

    /// A query whose one row and column says whether a column has a key generator
    /// that ``advanceKeyGenerator(table:column:past:)`` would move; nil when the
    /// engine needs none. A store asks once per connection and column, so inserts
    /// of explicit keys into a column without a generator cost no extra statement.
    func hasKeyGenerator(table: String, column: String) -> SQL?

    /// The column type of text that is part of a primary key or an index: the
    /// migrator's history table and a search index's tokens use it. The default
    /// is ``typeName(_:)`` of ``ColumnType/text``; an engine that cannot key its
    /// text type (MariaDB's `LONGTEXT`) names a bounded one, such as `VARCHAR(255)`.
    var keyTextTypeName: String { get }

    /// The column type of a portable type that is part of a primary key or an
    /// index, written by `\(keyType:)` in ``SQL``. The default is
    /// ``keyTextTypeName`` for text and ``typeName(_:)`` otherwise; an engine
    /// that cannot key its blob type either (MariaDB's `LONGBLOB`) names a bounded one.
    func keyTypeName(_ type: ColumnType) -> String

    /// The type a `CAST(x AS …)` names for a portable type, written by
    /// `\(castType:)` in ``SQL``. The default is ``typeName(_:)``; an engine
    /// whose cast targets differ from its column types (MariaDB casts to
    /// `CHAR`, not `LONGTEXT` or `JSON`) names its own.
    func castTypeName(_ type: ColumnType) -> String

    /// A built-in collation that compares text ignoring letter case (SQLite's
    /// `NOCASE`), for DDL that wants one; nil when the engine has none built in.
    /// Depot's queries compare by code point whatever a column's collation:
    /// the conformance suite declares columns with it to prove that.
    var caseFoldingCollation: String? { get }

    /// The INSERT of one row that takes every column's default (`table` is
    /// quoted). The default: `INSERT INTO table DEFAULT VALUES`; MariaDB
    /// writes `INSERT INTO table () VALUES ()`.
    func insertDefaultValues(into table: String) -> String

    /// The unique keys of `table` (its primary key and each unique constraint
    /// or index): a query whose rows each hold one key's column names in
    /// order, as a JSON array of strings. Only an engine without
    /// ``Capabilities/conflictClause`` needs it (the default is nil): the core
    /// checks an upsert's conflict target against it, so that a target that
    /// is no unique key is a `syntax` error there too.
    func uniqueKeys(of table: String) -> SQL?

    /// The columns of `table` in the current schema, in their order: a query
    /// whose rows are (name, the type as the engine declares it, 1 when NOT
    /// NULL, the column's 1-based place in the primary key or 0). Read by
    /// ``Database/tableSchema(_:)`` and the schema check; nil (the default)
    /// when the engine cannot say.
    func tableColumns(of table: String) -> SQL?

    /// The indexes of `table` but its primary key's, by name: a query whose
    /// rows are (name, 1 when unique, its columns in order as a JSON array
    /// of strings; an expression's place left out). Nil (the default) when
    /// the engine cannot say.
    func tableIndexes(of table: String) -> SQL?

    /// What follows a `CREATE TABLE`'s closing parenthesis to make the table
    /// refuse a value of another type than its column's: SQLite's ` STRICT`
    /// (with its leading space). Empty (the default) where every table does so anyway.
    var typeCheckedTableOption: String { get }

    /// On an engine without ``Capabilities/conflictClause``, the clause after
    /// an INSERT's rows that keeps or updates the stored row its target's
    /// values clash with (MariaDB's `ON DUPLICATE KEY UPDATE`); nil (the
    /// default) when the engine has none. `assignments` nil keeps the stored
    /// row; `table` is the table inserted into. Each assignment reads the stored row as it was before the
    /// statement, whatever their order. The core calls it only for a table
    /// whose one unique key is the target (from ``uniqueKeys(of:)``): such a
    /// clause takes a clash on any unique key for a conflict.
    func duplicateKeyClause(table: String, target: [String], assignments: [OnConflict.Assignment]?) -> SQL?

    /// In an upsert's update, the value the statement would have inserted
    /// into the (quoted) column, written by `\(inserted:)` in ``SQL``. The
    /// default: `excluded.` and the column, as in `ON CONFLICT … DO UPDATE`.
    func insertedValue(column: String) -> String

    /// A statement that makes the rest of a transaction plan each statement
    /// for its own bound values, for work whose tables grow fast (a plan
    /// made while a table was small reads all of it once it is big); nil
    /// (the default) when the engine plans so anyway. PostgreSQL: `SET LOCAL
    /// plan_cache_mode = force_custom_plan`.
    var planForEachExecutionStatement: String? { get }

    /// Statements that refresh the planner's statistics of these (quoted)
    /// tables, after work that grew or changed them a lot: a table filled
    /// in one go is otherwise planned as the small table its last statistics
    /// describe, and a lookup by a list of keys reads all of it. Empty (the
    /// default) when the engine plans without collected statistics or keeps
    /// them current itself. PostgreSQL: `ANALYZE` (its autovacuum gets there
    /// within a minute or so).
    func refreshStatistics(of tables: [String]) -> [String]
}

extension SQLDialect {
    /// None: the engine's generated keys already follow the largest stored key.
    public func advanceKeyGenerator(table: String, column: String, past value: Int64) -> SQL? { nil }

    /// None: no column needs its generator advanced.
    public func hasKeyGenerator(table: String, column: String) -> SQL? { nil }

    /// None.
    public var caseFoldingCollation: String? { nil }

    /// The ``ColumnType/text`` type: the engine keys and indexes its text as it is.
    public var keyTextTypeName: String { typeName(.text) }

    /// ``keyTextTypeName`` for text, the column type otherwise.
    public func keyTypeName(_ type: ColumnType) -> String { type == .text ? keyTextTypeName : typeName(type) }

    /// The column type: the engine casts to its own column types.
    public func castTypeName(_ type: ColumnType) -> String { typeName(type) }

    /// `INSERT INTO table DEFAULT VALUES`.
    public func insertDefaultValues(into table: String) -> String { "INSERT INTO " + table + " DEFAULT VALUES" }

    /// None: the engine checks an upsert's conflict target itself.
    public func uniqueKeys(of table: String) -> SQL? { nil }

    /// None: the engine cannot say.
    public func tableColumns(of table: String) -> SQL? { nil }

    /// None: the engine cannot say.
    public func tableIndexes(of table: String) -> SQL? { nil }

    /// Empty: every table checks its columns' types.
    public var typeCheckedTableOption: String { "" }

    /// None: the engine has `ON CONFLICT`.
    public func duplicateKeyClause(table: String, target: [String], assignments: [OnConflict.Assignment]?) -> SQL? { nil }

    /// `excluded.` and the column.
    public func insertedValue(column: String) -> String { "excluded." + column }

    /// None.
    public var planForEachExecutionStatement: String? { nil }

    /// None: the engine plans without collected statistics, or keeps them current.
    public func refreshStatistics(of tables: [String]) -> [String] { [] }
}

extension SQLDialect {
    /// Double quotes, with `"` inside doubled: standard SQL, right for SQLite and PostgreSQL.
    public func quote(identifier: String) -> String {
        guard identifier.utf8.contains(34) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The kind of transaction a store access runs in.
public enum TransactionKind: Sendable, Hashable {
    /// A read: sees one consistent snapshot and may not write.
    case read
    /// A write: the only writer of the store until it commits or rolls back.
    case write
}

/// How much a write transaction sees of other transactions' writes.
///
/// SQLite always runs transactions serializably and ignores the level; on
/// PostgreSQL the default is `readCommitted`. A `serializable` write may fail
/// with a `serialization` error that a retry can cure.
public enum IsolationLevel: String, Sendable, Hashable, CaseIterable {
    /// Each statement sees what was committed before it started.
    case readCommitted = "READ COMMITTED"
    /// Every statement sees the snapshot taken at the transaction's first statement.
    case repeatableRead = "REPEATABLE READ"
    /// As if the transactions had run one after another.
    case serializable = "SERIALIZABLE"
}

/// A portable column type for DDL that runs on every engine.
///
/// Each backend maps these to its native types; the README's mapping table
/// lists them. Use them through `\(type:)` in ``SQL``.
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    /// `INTEGER` on SQLite (0 and 1), `boolean` on PostgreSQL.
    case bool
    /// A 64-bit integer: `INTEGER` / `bigint`.
    case integer
    /// A 64-bit float: `REAL` / `double precision`.
    case double
    /// `TEXT` / `text`.
    case text
    /// `BLOB` / `bytea`.
    case blob
    /// UTC date `TEXT` (`2026-11-22 02:45:18.123456`) / `timestamptz`.
    case date
    /// Lowercase `TEXT` / `uuid`.
    case uuid
    /// JSON `TEXT` / `jsonb`.
    case json
    /// Exact decimal `TEXT` / `numeric`.
    case decimal
    /// An integer primary key the engine fills in when the insert omits it:
    /// `INTEGER PRIMARY KEY` / `bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY`.
    case autoIncrementingPrimaryKey
}

/// What an engine, or one store of it, can do. The conformance suite reads
/// these instead of skipping checks: where a capability is missing, the check
/// pins the documented alternative behaviour.
extension SQLDialect {
    /// Statements that make these tables observable: none by default. SQLite
    /// records their names (its connections hear every commit on their own);
    /// PostgreSQL installs triggers. A backend whose ``ReadTrackingConnection``
    /// finds an observation reading a table never made observable throws
    /// `DatabaseError.notObservable(_:)`, the same error on every engine.
    public func observationSetup(tables: [String]) -> [String] { [] }

    /// `information_schema.tables` and `.sequences` of the current schema.
    public var schemaObjectsQuery: String {
        """
        SELECT CASE WHEN table_type = 'VIEW' THEN 'view' ELSE 'table' END AS kind, table_name AS name
          FROM information_schema.tables WHERE table_schema = current_schema()
        UNION ALL
        SELECT 'sequence', sequence_name FROM information_schema.sequences WHERE sequence_schema = current_schema()
        """
    }

    /// One `DROP TABLE IF EXISTS a, b CASCADE`.
    public func dropTables(_ names: [String]) -> [String] {
        names.isEmpty ? [] : ["DROP TABLE IF EXISTS " + names.map { quote(identifier: $0) }.joined(separator: ", ") + " CASCADE"]
    }
}

public struct Capabilities: Sendable, Hashable {
    /// Reads run while a write transaction is open (SQLite in WAL mode, PostgreSQL).
    ///
    /// False for an in-memory SQLite store: its one connection serves reads
    /// and writes in turn, so a read waits for the writer to finish.
    public var concurrentReadsDuringWrite: Bool

    /// Text may hold U+0000. True on SQLite; PostgreSQL's text cannot, so there a
    /// string holding it is refused with an `encoding` error (never cut short).
    public var textCanHoldNUL: Bool

    /// Schema changes (CREATE, ALTER, DROP) roll back with their transaction.
    /// True on SQLite and PostgreSQL. Where false (MariaDB commits DDL at
    /// once), a failed migration may leave part of its schema changes behind,
    /// and the conformance checks that need the rollback are skipped and listed.
    public var transactionalSchemaChanges: Bool

    /// A double column may hold +infinity and -infinity. True on SQLite and
    /// PostgreSQL; where false (MariaDB's `DOUBLE` holds neither), storing an
    /// infinity is refused with an `encoding` error, never changed into
    /// another value. NaN is refused on every engine.
    public var doubleCanHoldInfinity: Bool

    /// `INSERT … ON CONFLICT (target) DO UPDATE SET … | DO NOTHING`. True on
    /// SQLite and PostgreSQL. Where false (MariaDB's `ON DUPLICATE KEY UPDATE`
    /// fires on any unique key, so a clash on another column would rewrite
    /// another row), the core runs an upsert as a locking lookup by the target
    /// (`SELECT … FOR UPDATE`), then an UPDATE or an INSERT, looked up again once
    /// if a concurrent insert took the target first; the dialect's
    /// ``SQLDialect/uniqueKeys(of:)`` must then name the table's unique keys.
    public var conflictClause: Bool

    /// `UPDATE … RETURNING`. True on SQLite and PostgreSQL. Where false
    /// (MariaDB before 13), ``Database/updateAndFetchAll(_:set:)`` locks the
    /// rows it selects (`SELECT … FOR UPDATE`), updates them, and reads them
    /// back by primary key; assigning to a primary key there is a `misuse` error.
    public var updateReturning: Bool

    /// A generated key is the largest key so far plus one. True on SQLite,
    /// PostgreSQL and one MariaDB server. False on a MariaDB Galera cluster,
    /// where each node hands out keys in steps of the cluster's size, from an
    /// offset of its own (`auto_increment_increment`, set by
    /// `wsrep_auto_increment_control`), so that nodes never hand out the same
    /// key: a generated key is still larger than every key before it, but not
    /// by one.
    public var consecutiveGeneratedKeys: Bool

    /// Creates a capability set.
    public init(concurrentReadsDuringWrite: Bool, textCanHoldNUL: Bool = true, transactionalSchemaChanges: Bool = true,
                doubleCanHoldInfinity: Bool = true, conflictClause: Bool = true, updateReturning: Bool = true,
                consecutiveGeneratedKeys: Bool = true) {
        self.consecutiveGeneratedKeys = consecutiveGeneratedKeys
        self.concurrentReadsDuringWrite = concurrentReadsDuringWrite
        self.textCanHoldNUL = textCanHoldNUL
        self.transactionalSchemaChanges = transactionalSchemaChanges
        self.doubleCanHoldInfinity = doubleCanHoldInfinity
        self.conflictClause = conflictClause
        self.updateReturning = updateReturning
    }

    /// A capability by name, for conformance checks that need it.
    public struct Requirement: Sendable, CustomStringConvertible {
        /// The capability's name, as reports show it.
        public let name: String
        let isMet: @Sendable (Capabilities) -> Bool

        /// ``Capabilities/transactionalSchemaChanges``.
        public static let transactionalSchemaChanges = Requirement(name: "transactionalSchemaChanges") { $0.transactionalSchemaChanges }
        /// ``Capabilities/concurrentReadsDuringWrite``.
        public static let concurrentReadsDuringWrite = Requirement(name: "concurrentReadsDuringWrite") { $0.concurrentReadsDuringWrite }
        /// ``Capabilities/consecutiveGeneratedKeys``.
        public static let consecutiveGeneratedKeys = Requirement(name: "consecutiveGeneratedKeys") { $0.consecutiveGeneratedKeys }

        /// Whether a store with these capabilities meets the requirement.
        public func isMet(by capabilities: Capabilities) -> Bool { isMet(capabilities) }
        public var description: String { name }
    }
}

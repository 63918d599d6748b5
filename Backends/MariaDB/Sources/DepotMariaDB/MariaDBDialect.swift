import Depot

/// How MariaDB 10.11 spells placeholders, column types and the query builder's meanings.
///
/// Every connection runs with `ANSI_QUOTES` and `PIPES_AS_CONCAT`, so
/// identifiers are quoted with `"` as on the other engines. Text columns take
/// the database's collation: create the database with
/// `CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin` (code-point order, no
/// trailing-space padding), as `Store.mariadb` expects.
public struct MariaDBDialect: SQLDialect {
    /// Rows per INSERT of a batch insert.
    public let batchInsertRows: Int

    /// The dialect; `batchInsertRows` rows go in one INSERT of a batch.
    public init(batchInsertRows: Int = 500, consecutiveGeneratedKeys: Bool = true) {
        self.batchInsertRows = batchInsertRows
        self.consecutiveGeneratedKeys = consecutiveGeneratedKeys
    }

    /// Whether the server hands out generated keys one apart: not on a Galera
    /// cluster (``Capabilities/consecutiveGeneratedKeys``).
    public let consecutiveGeneratedKeys: Bool

    /// "MariaDB".
    public var engineName: String { "MariaDB" }

    /// `?`: MariaDB's markers are unnumbered. The core numbers placeholders
    /// in the order the text holds them and binds the values in that order,
    /// so each marker takes the next value.
    public func placeholder(_ index: Int) -> String { "?" }

    /// The protocol's limit: 65,535 markers in one statement (error 1390).
    public var maxBoundValues: Int { 65_535 }

    /// Reads run beside writes; text holds U+0000; DDL commits at once, so
    /// schema changes never roll back with their transaction; `DOUBLE` holds no
    /// infinity; no `ON CONFLICT` (`ON DUPLICATE KEY UPDATE` fires on any unique
    /// key, so the core locks and looks up the target instead) and no
    /// `UPDATE … RETURNING` before MariaDB 13; on a Galera cluster, generated
    /// keys in steps of the cluster's size.
    public var capabilities: Capabilities {
        Capabilities(concurrentReadsDuringWrite: true, textCanHoldNUL: true, transactionalSchemaChanges: false,
                     doubleCanHoldInfinity: false, conflictClause: false, updateReturning: false,
                     consecutiveGeneratedKeys: consecutiveGeneratedKeys)
    }

    /// `INSERT INTO table () VALUES ()`: MariaDB has no `DEFAULT VALUES`.
    public func insertDefaultValues(into table: String) -> String { "INSERT INTO " + table + " () VALUES ()" }

    /// Each unique index of the table (`PRIMARY` included) as a JSON array of
    /// its columns in order, from `information_schema.STATISTICS`.
    public func uniqueKeys(of table: String) -> SQL? {
        """
        SELECT JSON_ARRAYAGG(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS \
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = \(table) AND NON_UNIQUE = 0 GROUP BY INDEX_NAME
        """
    }

    /// `ON DUPLICATE KEY UPDATE`: assignments in the session's
    /// `SIMULTANEOUS_ASSIGNMENT` mode, so each reads the stored row as it was;
    /// keeping the stored row sets the target's first column to its inserted
    /// value, the stored one (not `INSERT IGNORE`, which would turn other
    /// errors into warnings).
    public func duplicateKeyClause(table: String, target: [String], assignments: [OnConflict.Assignment]?) -> SQL? {
        guard let first = target.first else { return nil }
        // The inserted value of the target, equal to the stored one on a conflict: no column name,
        // which an INSERT … SELECT from the same table would make ambiguous (1052).
        let set = assignments.flatMap { $0.isEmpty ? nil : $0 } ?? [OnConflict.Assignment(first, "\(inserted: first)")]
        return "ON DUPLICATE KEY UPDATE " + SQL.join(set.map { "\(ident: $0.column) = \($0.value)" }, separator: ", ")
    }

    /// `VALUE(column)`: the row the statement would have inserted.
    public func insertedValue(column: String) -> String { "VALUE(" + column + ")" }

    /// The native type for a portable type.
    public func typeName(_ type: ColumnType) -> String {
        switch type {
        case .bool: "BOOLEAN"
        case .integer: "BIGINT"
        case .double: "DOUBLE"
        // The database's collation (utf8mb4_nopad_bin): naming it here would
        // forbid a column's own COLLATE clause (error 1302).
        case .text: "LONGTEXT"
        case .blob: "LONGBLOB"
        case .date: "DATETIME(6)"
        // Not MariaDB's UUID type: it sorts by swapped groups, not as text.
        case .uuid: "CHAR(36)"
        case .json: "JSON"
        // Text, as on SQLite: no DECIMAL(M,D) holds every Decimal exactly.
        case .decimal: "VARCHAR(200)"
        case .autoIncrementingPrimaryKey: "BIGINT AUTO_INCREMENT PRIMARY KEY"
        }
    }

    /// `VARCHAR(255)`, in the database's character set and collation (utf8mb4,
    /// utf8mb4_nopad_bin): a `LONGTEXT` key needs a prefix length (error 1170),
    /// and 255 characters of 4 bytes fit InnoDB's 3,072-byte keys.
    public var keyTextTypeName: String { "VARCHAR(255)" }

    /// `VARCHAR(255)` for text and `VARBINARY(255)` for blobs (neither
    /// `LONGTEXT` nor `LONGBLOB` can be a key without a prefix length); the
    /// column type otherwise.
    public func keyTypeName(_ type: ColumnType) -> String {
        switch type {
        case .text: keyTextTypeName
        case .blob: "VARBINARY(255)"
        default: typeName(type)
        }
    }

    /// MariaDB's cast targets: `CHAR` for text, JSON and decimals (it casts to
    /// no `LONGTEXT` or `JSON`), `BINARY` for blobs, `SIGNED` for integers and
    /// Booleans; the column type otherwise.
    public func castTypeName(_ type: ColumnType) -> String {
        switch type {
        case .text, .json, .decimal: "CHAR"
        case .blob: "BINARY"
        case .integer, .bool: "SIGNED"
        case .uuid: "CHAR(36)"
        default: typeName(type)
        }
    }

    /// How long a migrator waits for another's lock.
    static let migrationLockSeconds = 600

    /// `utf8mb4_general_ci`: ignores letter case.
    public var caseFoldingCollation: String? { "utf8mb4_general_ci" }

    /// `information_schema.COLUMNS` (`COLUMN_TYPE`, as declared: `bigint(20)`), the key's places from `STATISTICS`.
    public func tableColumns(of table: String) -> SQL? {
        """
        SELECT c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE = 'NO', COALESCE((SELECT s.SEQ_IN_INDEX FROM information_schema.STATISTICS s \
        WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME AND s.INDEX_NAME = 'PRIMARY' AND s.COLUMN_NAME = c.COLUMN_NAME), 0) \
        FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = DATABASE() AND c.TABLE_NAME = \(table) ORDER BY c.ORDINAL_POSITION
        """
    }

    /// `information_schema.STATISTICS` by index, the primary key left out.
    public func tableIndexes(of table: String) -> SQL? {
        """
        SELECT INDEX_NAME, MIN(NON_UNIQUE) = 0, JSON_ARRAYAGG(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS \
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = \(table) AND INDEX_NAME <> 'PRIMARY' GROUP BY INDEX_NAME ORDER BY INDEX_NAME
        """
    }

    /// The database's tables, views and sequences.
    public var schemaObjectsQuery: String {
        """
        SELECT CASE table_type WHEN 'VIEW' THEN 'view' WHEN 'SEQUENCE' THEN 'sequence' ELSE 'table' END AS "kind", \
        table_name AS "name" FROM information_schema.tables WHERE table_schema = DATABASE()
        """
    }

    /// One DROP with foreign-key checks off: MariaDB ignores `CASCADE`.
    public func dropTables(_ names: [String]) -> [String] {
        names.isEmpty ? [] : [
            "SET foreign_key_checks = 0",
            "DROP TABLE IF EXISTS " + names.map { quote(identifier: $0) }.joined(separator: ", "),
            "SET foreign_key_checks = 1",
        ]
    }

    /// A read's or a write's START TRANSACTION, with its isolation level set
    /// first (`SET TRANSACTION` covers the next transaction only). Reads are
    /// REPEATABLE READ with a snapshot taken at once; writes READ COMMITTED,
    /// as on PostgreSQL.
    static func begin(_ transaction: TransactionOptions) -> String {
        switch transaction.kind {
        case .read:
            let level = transaction.isolation ?? .repeatableRead
            return "SET TRANSACTION ISOLATION LEVEL \(level.rawValue); START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT"
        case .write:
            let level = transaction.isolation ?? .readCommitted
            return "SET TRANSACTION ISOLATION LEVEL \(level.rawValue); START TRANSACTION READ WRITE"
        }
    }
}

extension MariaDBDialect: QueryDialect {
    /// `(x) COLLATE utf8mb4_nopad_bin`, for equality too: a column declared
    /// with a case-folding collation would otherwise compare case-insensitively.
    public func binaryCollated(_ text: SQL, ordering: Bool) -> SQL {
        "(" + text + ") COLLATE utf8mb4_nopad_bin"
    }

    /// The column alone: MariaDB 10.11 has no expression indexes, and its key
    /// text (`VARCHAR(255)` in the database's `utf8mb4_nopad_bin`) already
    /// orders by code point.
    public func binaryCollatedIndexKey(_ column: SQL) -> SQL { column }

    /// 26 nested `REPLACE`s: MariaDB's `LOWER` lowers every letter it knows.
    public func asciiLowercased(_ text: SQL) -> SQL {
        var expression = binaryCollated(text, ordering: false)
        for letter in UInt8(ascii: "A")...UInt8(ascii: "Z") {
            let upper = String(UnicodeScalar(letter)), lower = String(UnicodeScalar(letter + 32))
            expression = "REPLACE(\(expression), '\(unsafeRaw: upper)', '\(unsafeRaw: lower)')"
        }
        return expression
    }

    /// `INSTR` under the code-point collation: characters, 1 for an empty needle.
    public func position(of needle: SQL, in text: SQL) -> SQL {
        "INSTR(\(binaryCollated(text, ordering: false)), \(needle))"
    }

    /// `RIGHT(text, count)`: characters; the whole text when it is shorter.
    public func suffix(of text: SQL, count: SQL) -> SQL { "RIGHT(\(text), \(count))" }

    /// MariaDB has no OFFSET without LIMIT: the largest limit.
    public func offsetWithoutLimit(_ offset: SQL) -> SQL { "LIMIT 18446744073709551615 OFFSET \(offset)" }

    /// `SUM` of BIGINT is an exact DECIMAL: cast back when it fits, else a
    /// product that overflows (error 1690, `encoding`). NULL over no rows.
    public func integerSum(_ expression: SQL) -> SQL {
        let sum: SQL = "SUM(\(expression))"
        return "(CASE WHEN \(sum) BETWEEN -9223372036854775808 AND 9223372036854775807 THEN CAST(\(sum) AS SIGNED)"
            + " ELSE CAST(SIGN(\(sum)) AS SIGNED) * 9223372036854775807 * 2 END)"
    }

    /// `AVG(CAST(x AS DOUBLE))`: MariaDB's `AVG` of integers is a DECIMAL.
    public func average(_ expression: SQL) -> SQL { "AVG(CAST(\(expression) AS DOUBLE))" }

    /// `MIN` / `MAX`: booleans are TINYINT 0 and 1.
    public func booleanExtreme(_ expression: SQL, max: Bool) -> SQL {
        (max ? "MAX(" : "MIN(") + expression + ")"
    }

    /// BIGINT `+`, `-` and `*` fail on overflow themselves (1690); `DIV`
    /// truncates toward zero and `MOD` keeps the dividend's sign, but both give
    /// NULL for a zero divisor, so a zero divisor is made to overflow instead.
    /// The divisor is computed first, whatever the dividend: MariaDB skips an
    /// operand after a NULL one, and SQLite and PostgreSQL compute both, so an
    /// error inside the divisor fails the statement on every engine.
    public func integerArithmetic(_ op: ArithmeticOperator, _ lhs: SQL, _ rhs: SQL) -> SQL {
        let left: SQL = "CAST(\(lhs) AS SIGNED)", right: SQL = "CAST(\(rhs) AS SIGNED)"
        switch op {
        case .add, .multiply:
            return "(\(left) \(unsafeRaw: op.rawValue) \(right))"
        case .subtract:
            // MariaDB 10.11 wraps 0 - Int64.min to Int64.min instead of failing: made to overflow.
            return "(CASE WHEN \(left) = 0 AND \(right) = -9223372036854775808 THEN \(right) - 1 ELSE \(left) - \(right) END)"
        case .divide, .remainder:
            let operation: SQL = op == .divide ? "\(left) DIV \(right)" : "MOD(\(left), \(right))"
            return "(CASE WHEN \(right) = 0 THEN (CASE WHEN \(left) IS NULL THEN NULL ELSE \(right) - 9223372036854775807 - 2 END)"
                + " WHEN \(left) IS NULL THEN NULL ELSE \(operation) END)"
        }
    }

    /// `(lhs <=> rhs)`: MariaDB's NULL-safe equality.
    public func isNotDistinct(_ lhs: SQL, _ rhs: SQL, negated: Bool) -> SQL {
        (negated ? "NOT (" : "(") + lhs + " <=> " + rhs + ")"
    }

    /// LIKE under the code-point collation: case-sensitive, trailing spaces count.
    public func like(_ subject: SQL, pattern: SQL, escape: SQL) -> SQL {
        binaryCollated(subject, ordering: false) + " LIKE " + pattern + " ESCAPE " + escape
    }

    /// `CONCAT(lhs, rhs)`: NULL when either is.
    public func concatenate(_ lhs: SQL, _ rhs: SQL) -> SQL { "CONCAT(" + lhs + ", " + rhs + ")" }

    /// `CHAR_LENGTH(text)`: MariaDB's `LENGTH` counts bytes.
    public func characterLength(_ text: SQL) -> SQL { "CHAR_LENGTH(" + text + ")" }

    /// No `FILTER (WHERE …)` before MariaDB 11.
    public var hasAggregateFilter: Bool { false }

    /// True: MariaDB refuses LIMIT directly in an `IN` subquery (error 1235).
    public var wrapsPagedSubqueries: Bool { true }

    /// No `NULLS FIRST|LAST`: NULLs sort first ascending and last descending,
    /// and `(x) IS NULL` sorts them the other way.
    public func ordering(_ expression: SQL, descending: Bool, nullsFirst: Bool) -> SQL {
        switch (descending, nullsFirst) {
        case (false, true): expression + " ASC"
        case (true, false): expression + " DESC"
        case (false, false): "(" + expression + ") IS NULL ASC, " + expression + " ASC"
        case (true, true): "(" + expression + ") IS NULL DESC, " + expression + " DESC"
        }
    }

    /// True: `$.a[0]` reads `{"a": 7}` as 7, so the builder asks
    /// ``jsonIsArray(_:at:)`` before each index.
    public var jsonIndexWrapsScalars: Bool { true }

    /// `JSON_TYPE(JSON_EXTRACT(document, path)) = 'ARRAY'`.
    public func jsonIsArray(_ document: SQL, at path: SQL) -> SQL {
        "(JSON_TYPE(JSON_EXTRACT(\(document), \(path))) = 'ARRAY')"
    }

    /// `JSON_TYPE` decides the kind before the value is read.
    public func jsonScalar(_ kind: JSONScalarKind, in document: SQL, at path: SQL) -> SQL {
        let node: SQL = "JSON_EXTRACT(\(document), \(path))"
        let type: SQL = "JSON_TYPE(\(node))"
        switch kind {
        case .text:
            return "(CASE WHEN \(type) = 'STRING' THEN JSON_UNQUOTE(\(node)) END)"
        case .integer:
            let number: SQL = "CAST(\(node) AS DECIMAL(65, 30))"
            return "(CASE WHEN \(type) IN ('INTEGER', 'DOUBLE') AND \(number) = FLOOR(\(number))"
                + " AND \(number) BETWEEN -9223372036854775808 AND 9223372036854775807 THEN CAST(\(number) AS SIGNED) END)"
        case .double:
            return "(CASE WHEN \(type) IN ('INTEGER', 'DOUBLE') THEN CAST(\(node) AS DOUBLE) END)"
        case .bool:
            return "(CASE WHEN \(type) = 'BOOLEAN' THEN \(node) = 'true' END)"
        }
    }
}

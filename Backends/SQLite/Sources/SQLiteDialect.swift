import Depot

/// How SQLite spells placeholders, column types and transactions.
///
/// Column types are the ones STRICT tables accept: `INTEGER`, `REAL`, `TEXT`, `BLOB`.
public struct SQLiteDialect: SQLDialect {
    /// What this store can do: an in-memory store cannot read during a write.
    public let capabilities: Capabilities

    /// The dialect of a store; an in-memory store cannot read during a write.
    public init(capabilities: Capabilities) {
        self.capabilities = capabilities
    }

    /// "SQLite".
    public var engineName: String { "SQLite" }

    /// `?1`, `?2`...: numbered, so a statement may reuse a value.
    public func placeholder(_ index: Int) -> String {
        index >= 0 && index < Self.placeholders.count ? Self.placeholders[index] : "?\(index)"
    }

    /// The first placeholders, made once: every interpolated statement renders them.
    private static let placeholders = (0..<64).map { "?\($0)" }

    /// SQLite's default limit since 3.32 (SQLITE_MAX_VARIABLE_NUMBER).
    public var maxBoundValues: Int { 32_766 }

    /// One reused single-row statement: an embedded engine pays no round trip per statement.
    public var batchInsertRows: Int { 1 }

    /// The STRICT-table type for a portable type.
    public func typeName(_ type: ColumnType) -> String {
        switch type {
        case .bool, .integer: "INTEGER"
        case .double: "REAL"
        case .text, .date, .uuid, .json, .decimal: "TEXT"
        case .blob: "BLOB"
        // AUTOINCREMENT: a key is never given twice, even after the row with the
        // largest key is deleted (PostgreSQL's identity never goes back either).
        case .autoIncrementingPrimaryKey: "INTEGER PRIMARY KEY AUTOINCREMENT"
        }
    }

}

extension SQLiteDialect {
    /// `NOCASE`: folds A–Z.
    public var caseFoldingCollation: String? { "NOCASE" }
}

extension SQLiteDialect: QueryDialect {
    /// `x COLLATE BINARY`, also for equality: a column declared `COLLATE NOCASE`
    /// would otherwise compare case-insensitively.
    public func binaryCollated(_ text: SQL, ordering: Bool) -> SQL { text + " COLLATE BINARY" }

    /// `lower(x)`: SQLite's own lowers A–Z only (without the ICU extension).
    public func asciiLowercased(_ text: SQL) -> SQL { "lower(\(text))" }

    /// `instr(text, needle)`: code points, 1 for an empty needle.
    public func position(of needle: SQL, in text: SQL) -> SQL { "instr(\(text), \(needle))" }

    /// `substr(text, -count)`: the whole text when it is shorter.
    public func suffix(of text: SQL, count: SQL) -> SQL { "substr(\(text), -\(count))" }

    /// `LIMIT -1 OFFSET n`: SQLite has no OFFSET without LIMIT.
    public func offsetWithoutLimit(_ offset: SQL) -> SQL { "LIMIT -1 OFFSET \(offset)" }

    /// The exact sum, as PostgreSQL's: SQLite's own `sum` fails when its running
    /// total leaves 64 bits even if the final sum fits, so the order of the rows
    /// would decide. Instead the high and low 32 bits of each value are summed
    /// apart (neither sum can overflow below 2^31 rows), carried, and joined
    /// when the result fits; otherwise `abs(-2^63)` raises SQLite's "integer
    /// overflow". NULL when there are no values.
    public func integerSum(_ expression: SQL) -> SQL {
        let high: SQL = "sum((\(expression)) >> 32)", low: SQL = "sum((\(expression)) & 4294967295)"
        let carried: SQL = "(\(high) + (\(low) >> 32))"
        return "(CASE WHEN \(high) IS NULL THEN NULL"
            + " WHEN \(carried) BETWEEN -2147483648 AND 2147483647 THEN (\(carried) << 32) | (\(low) & 4294967295)"
            + " ELSE abs(-9223372036854775807 - 1) END)"
    }

    /// `avg(x)`: always a REAL.
    public func average(_ expression: SQL) -> SQL { "avg(\(expression))" }

    /// `min(x)` / `max(x)`: booleans are the integers 0 and 1.
    public func booleanExtreme(_ expression: SQL, max: Bool) -> SQL {
        max ? "max(\(expression))" : "min(\(expression))"
    }

    /// Records the tables in `depotObservedTables`. SQLite's connections hear
    /// every commit on their own; the record makes reading an unrecorded table
    /// in an observation the same misuse error it is on PostgreSQL, where
    /// such commits would go unheard.
    public func observationSetup(tables: [String]) -> [String] {
        guard !tables.isEmpty else { return [] }
        let names = tables.map { "('" + $0.replacingOccurrences(of: "'", with: "''") + "')" }.joined(separator: ", ")
        return [
            "CREATE TABLE IF NOT EXISTS \"depotObservedTables\" (\"name\" TEXT NOT NULL PRIMARY KEY COLLATE NOCASE) STRICT, WITHOUT ROWID",
            "INSERT INTO \"depotObservedTables\" (\"name\") VALUES \(names) ON CONFLICT DO NOTHING",
        ]
    }

    /// ` STRICT`: a column takes only values of its declared type.
    public var typeCheckedTableOption: String { " STRICT" }

    /// `pragma_table_info`: the declared type as written, `pk` the place in the key.
    public func tableColumns(of table: String) -> SQL? {
        "SELECT name, type, \"notnull\", pk FROM pragma_table_info(\(table)) ORDER BY cid"
    }

    /// `pragma_index_list` but the primary key's, each with its columns from `pragma_index_info`.
    public func tableIndexes(of table: String) -> SQL? {
        """
        SELECT il.name, il."unique", (SELECT json_group_array(ii.name) FROM (SELECT name FROM pragma_index_info(il.name) ORDER BY seqno) AS ii) \
        FROM pragma_index_list(\(table)) AS il WHERE il.origin <> 'pk' ORDER BY il.name
        """
    }

    /// `sqlite_schema`'s tables and views, SQLite's own left out.
    public var schemaObjectsQuery: String {
        "SELECT type AS kind, name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
    }

    /// One DROP per table, foreign keys checked only at commit (when every table is gone).
    public func dropTables(_ names: [String]) -> [String] {
        names.isEmpty ? [] : ["PRAGMA defer_foreign_keys = ON"] + names.map { "DROP TABLE IF EXISTS " + quote(identifier: $0) }
    }
}

extension SQLiteDialect {
    /// `depot_add(l, r)` and its siblings, registered on every connection:
    /// SQLite's own `+`, `-` and `*` turn an overflow into a REAL, and its `/`
    /// and `%` give NULL for a zero divisor.
    public func integerArithmetic(_ op: ArithmeticOperator, _ lhs: SQL, _ rhs: SQL) -> SQL {
        let name = switch op {
        case .add: "depot_add"
        case .subtract: "depot_subtract"
        case .multiply: "depot_multiply"
        case .divide: "depot_divide"
        case .remainder: "depot_remainder"
        }
        return SQL(unsafeRaw: name) + "(" + lhs + ", " + rhs + ")"
    }
}

extension SQLiteDialect {
    /// `json_type` decides the kind before `json_extract` reads it: SQLite's
    /// own `json_extract` would read the string "3" as text that compares
    /// with anything. A whole `real` (`3.0`, `1e2`) is an integer, as on PostgreSQL.
    public func jsonScalar(_ kind: JSONScalarKind, in document: SQL, at path: SQL) -> SQL {
        let type: SQL = "json_type(\(document), \(path))", value: SQL = "json_extract(\(document), \(path))"
        switch kind {
        case .text:
            return "(CASE WHEN \(type) = 'text' THEN \(value) END)"
        case .integer:
            return "(CASE WHEN \(type) = 'integer' AND typeof(\(value)) = 'integer' THEN \(value)"
                + " WHEN \(type) IN ('integer', 'real') AND \(value) = CAST(\(value) AS INTEGER) THEN CAST(\(value) AS INTEGER) END)"
        case .double:
            return "(CASE WHEN \(type) IN ('integer', 'real') THEN CAST(\(value) AS REAL) END)"
        case .bool:
            return "(CASE \(type) WHEN 'true' THEN 1 WHEN 'false' THEN 0 END)"
        }
    }
}

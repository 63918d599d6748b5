import Foundation

/// A table as the engine describes it: its columns, in order, and its indexes.
///
/// ```swift
/// let reminders = try db.tableSchema("reminders")
/// print(reminders?.columns.map(\.name) ?? [])
/// ```
public struct TableSchema: Sendable, Hashable {
    /// One column.
    public struct Column: Sendable, Hashable {
        /// The column's name.
        public var name: String
        /// The type as the engine declares it: `TEXT` on SQLite, `timestamp
        /// with time zone` on PostgreSQL, `bigint(20)` on MariaDB.
        public var type: String
        /// Whether the column is `NOT NULL`.
        public var isNotNull: Bool
        /// The column's 1-based place in the primary key; nil when it is not in it.
        public var primaryKeyPosition: Int?
    }

    /// An index other than the primary key's.
    public struct Index: Sendable, Hashable {
        /// The index's name, as the engine has it.
        public var name: String
        /// Whether it is unique (a `UNIQUE` constraint is one).
        public var isUnique: Bool
        /// Its columns, in order; an expression's place is left out.
        public var columns: [String]
    }

    /// The table's name.
    public var name: String
    /// Its columns, in their order.
    public var columns: [Column]
    /// Its indexes by name, the primary key's left out.
    public var indexes: [Index]

    /// The primary key's columns, in order.
    public var primaryKey: [String] {
        columns.filter { $0.primaryKeyPosition != nil }.sorted { ($0.primaryKeyPosition ?? 0) < ($1.primaryKeyPosition ?? 0) }.map(\.name)
    }
}

extension Database {
    /// The tables of the current schema (SQLite's own and views left out), by name.
    public func tableNames() throws -> [String] {
        struct Object: Decodable { var kind: String; var name: String }
        return try fetchAll(Object.self, SQL(unsafeRaw: dialect.schemaObjectsQuery)).filter { $0.kind == "table" }.map(\.name).sorted()
    }

    /// The table's columns and indexes as the engine describes them; nil when
    /// there is no such table in the current schema.
    ///
    /// - Throws: a `misuse` ``DatabaseError`` on an engine whose dialect
    ///   cannot describe tables (``SQLDialect/tableColumns(of:)`` is nil).
    public func tableSchema(_ table: String) throws -> TableSchema? {
        guard let columnsQuery = dialect.tableColumns(of: table), let indexesQuery = dialect.tableIndexes(of: table) else {
            throw DatabaseError.misuse("\(dialect.engineName)'s dialect cannot describe a table: it has no tableColumns(of:) or tableIndexes(of:)")
        }
        let columns = try withStatement(columnsQuery) { statement, _ -> [TableSchema.Column] in
            var rows: [TableSchema.Column] = []
            while try statement.step() {
                let row = try (0..<4).map { try statement.value(at: $0) }
                guard case .text(let name) = row[0] else {
                    throw DatabaseError(.other, "the dialect's table columns of \(table) are not (name, type, not null, key place) rows", table: table)
                }
                guard case .text(let type) = row[1] else {
                    throw DatabaseError(.other, "the dialect's table columns of \(table) give \(row[1].kindName) for \(name)'s type, not its text", table: table)
                }
                let notNull = try Self.flag(row[2], table)
                let key = try Self.number(row[3], table)
                rows.append(TableSchema.Column(name: name, type: type, isNotNull: notNull, primaryKeyPosition: key > 0 ? key : nil))
            }
            return rows
        }
        guard !columns.isEmpty else { return nil }
        let indexes = try withStatement(indexesQuery) { statement, _ -> [TableSchema.Index] in
            var rows: [TableSchema.Index] = []
            while try statement.step() {
                let row = try (0..<3).map { try statement.value(at: $0) }
                guard case .text(let name) = row[0], let json = Self.text(row[2]),
                      let names = try? JSONDecoder().decode([String].self, from: Data(json.utf8)) else {
                    throw DatabaseError(.other, "the dialect's indexes of \(table) are not (name, unique, JSON array of columns) rows", table: table)
                }
                rows.append(TableSchema.Index(name: name, isUnique: try Self.flag(row[1], table), columns: names))
            }
            return rows.sorted { $0.name < $1.name }
        }
        return TableSchema(name: table, columns: columns, indexes: indexes)
    }

    private static func text(_ value: Value) -> String? {
        switch value {
        case .text(let s), .json(let s): s
        case .blob(let data): String(data: data, encoding: .utf8)
        default: nil
        }
    }

    private static func flag(_ value: Value, _ table: String) throws -> Bool {
        switch value {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        default: throw DatabaseError(.other, "the dialect's description of \(table) holds \(value.kindName) where a flag belongs", table: table)
        }
    }

    private static func number(_ value: Value, _ table: String) throws -> Int {
        switch value {
        case .null: return 0
        case .integer(let i):
            if let place = Int(exactly: i) { return place }
        case .decimal(let d, _):
            if let place = Int(d.description) { return place }
        default: break
        }
        throw DatabaseError(.other, "the dialect's description of \(table) holds \(value) where a key place belongs", table: table)
    }
}

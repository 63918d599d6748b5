import Foundation

/// A column a `@Columns` record reads and writes, as a schema check sees it.
public struct ModelColumn: Sendable, Hashable {
    /// The column's name, after the key strategy.
    public var name: String
    /// The kind of value a query compares it as; nil for a nested Codable
    /// value (stored as JSON), whose column type is not checked.
    public var type: QueryType?
    /// Whether the property is optional: it may write NULL.
    public var isOptional: Bool
}

/// Optional, seen from a generic context.
protocol OptionalMarker {}
extension Optional: OptionalMarker {}

/// A typed column seen without its type: what a schema check reads of it.
protocol ColumnDescribing {
    var describedKey: String? { get }
    var describedType: QueryType? { get }
    var describedIsOptional: Bool { get }
}

extension QueryExpression: ColumnDescribing {
    var describedKey: String? {
        guard case .column(let column) = node.kind else { return nil }
        return column.key
    }
    var describedType: QueryType? { node.type }
    var describedIsOptional: Bool { Value.self is any OptionalMarker.Type }
}

extension ColumnMapped {
    /// The columns the type reads and writes, in order, named after `keyStrategy`.
    ///
    /// ```swift
    /// Reminder.modelColumns().map(\.name)   // ["id", "title", "notes", ...]
    /// ```
    public static func modelColumns(keyStrategy: KeyStrategy = .useDefaultKeys) -> [ModelColumn] {
        Mirror(reflecting: columns).children.compactMap { child in
            guard let column = child.value as? any ColumnDescribing, let key = column.describedKey else { return nil }
            return ModelColumn(name: keyStrategy.columnName(for: key), type: column.describedType, isOptional: column.describedIsOptional)
        }
    }
}

/// Checks that the tables a database's migrations made are what an app's
/// record types and queries read: every column there, of the kind the model
/// reads, NULL where the model may write nil and only there, no column the
/// model does not know; and every query runs.
///
/// ```swift
/// var check = SchemaCheck()
/// check.add(RemindersList.self)
/// check.add(Reminder.self)
/// check.add(query: "open reminders") { db in _ = try db.fetchAll(openReminders, 0) }
/// let differences = try await store.read { db in try check.differences(db) }
/// // ["table reminders, column notes: the model reads optional text, the table has TEXT NOT NULL"]
/// ```
///
/// Each difference is one line naming the table, the column and both sides.
/// With a committed ``snapshot(_:)`` per engine (DepotTesting's
/// `SchemaSnapshot` keeps the file), a change to the migrations shows up in a
/// review, and a migration that drifted from the snapshot fails a test.
///
/// Caveat: column kinds are compared by family (integer, text, date...) as the
/// engine's dialect names them for the model's types; a store that keeps dates
/// by another strategy (seconds as a REAL) differs by design: leave such a
/// type out, or check its columns by hand.
public struct SchemaCheck: Sendable {
    struct Model: Sendable {
        let typeName: String
        let table: String
        let primaryKey: [String]
        let columns: @Sendable (KeyStrategy) -> [ModelColumn]
    }

    var models: [Model] = []
    var queries: [(name: String, run: @Sendable (Database) throws -> Void)] = []

    /// An empty check.
    public init() {}

    /// Checks the table of `type` against its columns.
    public mutating func add<T: Record & ColumnMapped>(_ type: T.Type) {
        models.append(Model(typeName: "\(T.self)", table: T.tableName, primaryKey: T.primaryKey, columns: { T.modelColumns(keyStrategy: $0) }))
    }

    /// Checks that a query runs on the schema (a declared query with sample
    /// values, say): any error it throws is a difference.
    public mutating func add(query name: String, _ run: @escaping @Sendable (Database) throws -> Void) {
        queries.append((name, run))
    }

    /// The differences between the database's tables and the model, one line each; empty when they agree.
    ///
    /// The queries run in a savepoint that is rolled back: call it in a read
    /// or a write, on a database whose migrations have run.
    public func differences(_ db: Database) throws -> [String] {
        var found: [String] = []
        for model in models {
            guard let table = try db.tableSchema(model.table) else {
                found.append("table \(model.table): \(model.typeName) reads it; the database has no such table")
                continue
            }
            let columns = model.columns(db.coding.keyStrategy)
            let stored = Dictionary(table.columns.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for column in columns {
                let prefix = "table \(model.table), column \(column.name)"
                guard let declared = stored[column.name] else {
                    found.append("\(prefix): \(model.typeName) reads it; the table has no such column (it has \(table.columns.map(\.name).joined(separator: ", ")))")
                    continue
                }
                if let type = column.type {
                    let expected = Self.family(db.dialect.typeName(Self.columnType(type)))
                    let actual = Self.family(declared.type)
                    if expected != actual {
                        found.append("\(prefix): \(model.typeName) reads \(expected) (\(type)); the table declares \(declared.type) (\(actual))")
                    }
                }
                let isKey = declared.primaryKeyPosition != nil || model.primaryKey.contains(column.name)
                if !isKey, column.isOptional, declared.isNotNull {
                    found.append("\(prefix): \(model.typeName) may write nil (an optional property); the table declares it NOT NULL")
                } else if !isKey, !column.isOptional, !declared.isNotNull {
                    found.append("\(prefix): \(model.typeName) never holds nil (a property that is not optional); the table allows NULL, which would fail to decode")
                }
            }
            let known = Set(columns.map(\.name))
            for column in table.columns where !known.contains(column.name) {
                found.append("table \(model.table), column \(column.name): the table has it (\(column.type)\(column.isNotNull ? " NOT NULL" : "")); \(model.typeName) does not read it")
            }
            if table.primaryKey != model.primaryKey {
                found.append("table \(model.table), primary key: \(model.typeName) names (\(model.primaryKey.joined(separator: ", "))); the table's is (\(table.primaryKey.joined(separator: ", ")))")
            }
        }
        for query in queries {
            do {
                try db.savepoint { db in
                    try query.run(db)
                    throw RolledBack()
                }
            } catch is RolledBack {
            } catch {
                found.append("query \(query.name): \(error)")
            }
        }
        return found
    }

    private struct RolledBack: Error {}

    /// The portable type a query type is stored as.
    static func columnType(_ type: QueryType) -> ColumnType {
        switch type {
        case .integer: .integer
        case .double: .double
        case .text: .text
        case .bool: .bool
        case .date: .date
        case .uuid: .uuid
        case .blob: .blob
        case .decimal: .decimal
        }
    }

    /// The family of a declared column type, so that `bigint`, `INTEGER` and
    /// `int(11)` agree: `integer`, `text`, `floating point`, `boolean`, `date`,
    /// `uuid`, `bytes`, `decimal`, `json`, or the type itself, lowercased.
    ///
    /// ```swift
    /// SchemaCheck.family(db.dialect.typeName(.date))   // "text" on SQLite, "date" on PostgreSQL
    /// ```
    public static func family(_ declared: String) -> String {
        let type = declared.lowercased()
        if type.contains("bool") || type == "tinyint(1)" { return "boolean" }
        if type.contains("timestamp") || type.contains("date") || type.hasPrefix("time") { return "date" }
        if type.contains("int") { return "integer" }
        if type.contains("char") || type.contains("text") || type.contains("clob") { return "text" }
        if type.contains("real") || type.contains("floa") || type.contains("doub") { return "floating point" }
        if type.contains("uuid") { return "uuid" }
        if type.contains("blob") || type.contains("bytea") || type.contains("binary") { return "bytes" }
        if type.contains("numeric") || type.contains("decimal") { return "decimal" }
        if type.contains("json") { return "json" }
        return type
    }

    /// The schema as text, a line per table, column and index, tables by
    /// name: what a committed snapshot holds.
    ///
    /// ```
    /// table reminders
    ///   column id bigint NOT NULL PRIMARY KEY
    ///   column notes text
    ///   index reminders_list UNIQUE (remindersListID, position)
    /// ```
    public static func snapshot(_ db: Database) throws -> String {
        var lines: [String] = []
        for name in try db.tableNames() {
            guard let table = try db.tableSchema(name) else { continue }
            lines.append("table \(name)")
            let keyed = table.primaryKey.count > 1
            for column in table.columns {
                var line = "  column \(column.name) \(column.type)"
                if column.isNotNull { line += " NOT NULL" }
                if let place = column.primaryKeyPosition { line += keyed ? " PRIMARY KEY \(place)" : " PRIMARY KEY" }
                lines.append(line)
            }
            for index in table.indexes {
                lines.append("  index \(index.name)\(index.isUnique ? " UNIQUE" : "") (\(index.columns.joined(separator: ", ")))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The differences between a database's ``snapshot(_:)`` and a committed
    /// one, a line each naming the table, the column or index, and both sides.
    public static func differences(snapshot actual: String, expected: String) -> [String] {
        func keyed(_ text: String) -> [(key: String, line: String)] {
            var table = ""
            return text.split(separator: "\n").compactMap { raw in
                let line = String(raw)
                if line.hasPrefix("table ") {
                    table = String(line.dropFirst("table ".count))
                    return ("table \(table)", line)
                }
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                guard words.count >= 2 else { return nil }
                return ("table \(table), \(words[0]) \(words[1])", line.trimmingCharacters(in: .whitespaces))
            }
        }
        let expectedLines = keyed(expected), actualLines = keyed(actual)
        let expectedByKey = Dictionary(expectedLines.map { ($0.key, $0.line) }, uniquingKeysWith: { first, _ in first })
        let actualByKey = Dictionary(actualLines.map { ($0.key, $0.line) }, uniquingKeysWith: { first, _ in first })
        var found: [String] = []
        for (key, line) in expectedLines {
            guard let other = actualByKey[key] else {
                found.append("\(key): the snapshot has \"\(line)\"; the database has none")
                continue
            }
            if other != line { found.append("\(key): the snapshot has \"\(line)\"; the database has \"\(other)\"") }
        }
        for (key, line) in actualLines where expectedByKey[key] == nil {
            found.append("\(key): the database has \"\(line)\"; the snapshot has none")
        }
        return found
    }
}

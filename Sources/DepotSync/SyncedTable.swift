@_spi(Sync) import Depot
import Foundation

/// A record type that sync replicates: its table, its key, the columns that
/// travel, and the synced tables its rows belong to.
///
/// ```swift
/// let tables = [
///     try SyncedTable(RemindersList.self, localColumns: ["number"]),
///     try SyncedTable(Reminder.self, parents: [SyncParent("remindersListID", RemindersList.self)], localColumns: ["number"]),
///     try SyncedTable(ReminderTag.self, parents: [SyncParent("reminderID", Reminder.self), SyncParent("tagID", Tag.self)]),
/// ]
/// ```
///
/// A row belongs to its parents: it is in its table only while its own row
/// exists and each parent it names is in the parent's table. A row whose
/// parent was deleted on another device (a reminder added to a list deleted
/// elsewhere) is kept by sync, out of its table, and comes back if the
/// parent is restored. A link table (tags on reminders) is keyed by the pair
/// of its parents' keys, so two devices that make the same link make one row.
///
/// Caveat: a synced row's key never changes (an update of the key is a
/// delete and an insert), and every store of the system uses the same coding
/// strategies, so that a value means the same wherever it is written.
public struct SyncedTable: Sendable {
    /// The table.
    public let name: String
    /// The primary key's columns: one, or a link's pair.
    public let keyColumns: [String]
    /// The columns that travel, the key's included, as the mapping names them.
    public let columns: [String]
    /// The columns each store keeps to itself (a device's short number for a row).
    public let localColumns: Set<String>
    /// The synced tables this table's rows belong to.
    public let parents: [SyncParent]
    /// The kinds of the key's columns, as the record type declares them
    /// (nil when its conformance does not tell): a pushed key must be of them.
    let keyKinds: [SyncKeyKind]?
    /// The rows with these keys, read through the record type and encoded again (synced columns only).
    let read: @Sendable (Database, [String]) throws -> [ExactText: [String: Value]]
    /// Refuses values the record type would not write: each decoded as the
    /// record's property and encoded again must give the same value.
    let check: @Sendable (Database, [String: Value]) throws -> Void

    /// The synced table of a record type.
    ///
    /// - Parameters:
    ///   - type: the record type whose table is synced.
    ///   - parents: the columns that name a row of another synced table.
    ///   - localColumns: columns that do not travel; each store fills them
    ///     itself (a default, an identity column or a trigger).
    /// - Throws: `misuse` for a key or a parent column the record does not have.
    public init<T: Record & ColumnMapped>(_ type: T.Type, parents: [SyncParent] = [], localColumns: Set<String> = []) throws {
        let all = T.columnKeys
        guard !T.primaryKey.isEmpty, T.primaryKey.allSatisfy(all.contains) else {
            throw DatabaseError(.misuse, "a synced table needs a primary key among its columns; \(T.self) has \(T.primaryKey)")
        }
        if let missing = (parents.map(\.column) + localColumns).first(where: { !all.contains($0) }) {
            throw DatabaseError(.misuse, "\(T.self) has no column \(missing)")
        }
        if let shared = localColumns.first(where: { T.primaryKey.contains($0) || parents.map(\.column).contains($0) }) {
            throw DatabaseError(.misuse, "the column \(shared) of \(T.self) cannot be local: keys and parents travel")
        }
        let (name, keyColumns) = (T.tableName, T.primaryKey)
        let columns = all.filter { !localColumns.contains($0) }
        self.name = name
        self.keyColumns = keyColumns
        self.columns = columns
        self.localColumns = localColumns
        self.parents = parents
        keyKinds = Self.keyKinds(of: T.self, keys: keyColumns)
        check = { db, values in
            // Local columns do not travel: a row arrives without them (they must decode from NULL).
            let row = Row(columns: ColumnSet(all), values: all.map { values[$0] ?? .null })
            let record: T
            do {
                record = try db.configuration.decoder.decode(T.self, from: row)
            } catch {
                // The column, never the value.
                let column = (error as? DatabaseError)?.column ?? SyncedTable.column(of: error) ?? "a column"
                throw DatabaseError(.misuse, "a change of \(name) brings a value for \(column) that \(T.self) does not take")
            }
            let encoded = try db.encodedColumns(of: record)
            for (column, value) in encoded where columns.contains(column) {
                let (sent, written) = (WireValue(values[column] ?? .null), WireValue(value))
                guard sent.kind == written.kind, sent.text == written.text else {
                    throw DatabaseError(.misuse, "a change of \(name) brings a value for \(column) that \(T.self) does not write so")
                }
            }
        }
        read = { db, keys in
            var rows: [ExactText: [String: Value]] = [:]
            for chunk in SyncKey.chunks(keys) {
                for record in try db.fetchAll(T.self, "SELECT * FROM \(ident: name) WHERE \(SyncKey.matching(keyColumns, chunk))") {
                    let encoded = try db.encodedColumns(of: record)
                    var values: [String: Value] = [:]
                    for column in encoded where columns.contains(column.name) { values[column.name] = column.value }
                    rows[ExactText(SyncKey.text(keyColumns.map { values[$0] ?? .null }))] = values
                }
            }
            return rows
        }
    }

    /// The first key of a decoding error's path.
    static func column(of error: any Error) -> String? {
        guard let error = error as? DecodingError else { return nil }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.codingPath.first?.stringValue
        case .keyNotFound(let key, let context):
            return context.codingPath.first?.stringValue ?? key.stringValue
        @unknown default:
            return nil
        }
    }

    /// The key's text of a row's values.
    func key(of values: [String: Value]) -> String {
        SyncKey.text(keyColumns.map { values[$0] ?? .null })
    }
}

/// A column that names a row of another synced table: its parent.
public struct SyncParent: Sendable, Hashable {
    /// The column holding the parent's key (NULL: no parent).
    public var column: String
    /// The parent's table.
    public var table: String

    /// The parent named by `column`, a row of `T`'s table.
    public init<T: Record>(_ column: String, _ type: T.Type) {
        self.column = column
        self.table = T.tableName
    }

    /// The parent named by `column`, a row of `table`.
    public init(_ column: String, table: String) {
        self.column = column
        self.table = table
    }
}

/// A row's key as text, the same on every engine: what `CAST(key AS TEXT)`
/// gives for one column; for a pair, each part with `\` and `|` escaped,
/// joined by `|`.
enum SyncKey {
    static func chunks(_ keys: [String], size: Int = 300) -> [[String]] {
        stride(from: 0, to: keys.count, by: size).map { Array(keys[$0..<min($0 + size, keys.count)]) }
    }

    /// The rows with these keys: UUID parts bound as UUIDs (lowercase text on
    /// SQLite, `uuid` on PostgreSQL), so the key's index serves them; any
    /// other part compared as text.
    static func matching(_ columns: [String], _ keys: [String]) -> SQL {
        guard !keys.isEmpty else { return "1 = 0" }
        let split = keys.map { Self.parts(of: $0, count: columns.count) }
        let terms: [SQL] = columns.indices.map { index in
            let texts = split.map { $0[index] }
            let uuids = texts.compactMap(UUID.init(uuidString:))
            if columns.count == 1 {
                return uuids.count == texts.count
                    ? "\(ident: columns[index]) IN (\(SQL.join(uuids.map { "\(Value.uuid($0))" }, separator: ", ")))"
                    : "CAST(\(ident: columns[index]) AS \(castType: .text)) IN (\(SQL.join(texts.map { "\($0)" }, separator: ", ")))"
            }
            return uuids.count == texts.count ? "\(ident: columns[index])" : "CAST(\(ident: columns[index]) AS \(castType: .text))"
        }
        if columns.count == 1 { return terms[0] }
        // A pair: (a = x AND b = y) OR ..., with each part bound as its column compares. Not
        // `(a, b) IN (VALUES ...)`: MariaDB names a VALUES list's columns after its first row's
        // values, and refuses two placeholders as two columns of one name.
        let uuids = split.map { row in row.map(UUID.init(uuidString:)) }
        let uuidColumns = columns.indices.map { index in uuids.allSatisfy { $0[index] != nil } }
        let rows: [SQL] = split.indices.map { row in
            let parts: [SQL] = columns.indices.map { index in
                if uuidColumns[index], let uuid = uuids[row][index] { return "\(terms[index]) = \(Value.uuid(uuid))" }
                return "\(terms[index]) = \(split[row][index])"
            }
            return "(\(SQL.join(parts, separator: " AND ")))"
        }
        return "(\(SQL.join(rows, separator: " OR ")))"
    }

    /// The text of a key's values.
    static func text(_ values: [Value]) -> String {
        if values.count == 1 { return text(values[0]) }
        return values.map { text($0).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "|", with: "\\|") }
            .joined(separator: "|")
    }

    static func text(_ value: Value) -> String {
        switch value {
        case .integer(let number): String(number)
        case .text(let text): text
        case .uuid(let uuid): UUIDText.lowercased(uuid)
        default: "\(value)"
        }
    }

    /// The parts of a key's text.
    static func parts(of key: String, count: Int) -> [String] {
        guard count > 1 else { return [key] }
        // By scalars, not characters: a "|" followed by a combining mark is one
        // character, and would hide the separator.
        var parts: [String] = [], current = String.UnicodeScalarView(), escaped = false
        for scalar in key.unicodeScalars {
            if escaped { current.append(scalar); escaped = false }
            else if scalar == "\\" { escaped = true }
            else if scalar == "|" { parts.append(String(current)); current = String.UnicodeScalarView() }
            else { current.append(scalar) }
        }
        parts.append(String(current))
        // A malformed key (from elsewhere) matches no row rather than trapping.
        return parts.count == count ? parts : Array(repeating: "", count: count)
    }

    /// The SQL expression of a row's key text (in a trigger, of `NEW` or `OLD`).
    static func expression(_ columns: [String], row: String?, dialect: some SQLDialect) -> String {
        let prefix = row.map { $0 + "." } ?? ""
        let text = dialect.castTypeName(.text)
        if columns.count == 1 { return "CAST(\(prefix)\(dialect.quote(identifier: columns[0])) AS \(text))" }
        return columns.map { "replace(replace(CAST(\(prefix)\(dialect.quote(identifier: $0)) AS \(text)), '\\', '\\\\'), '|', '\\|')" }
            .joined(separator: " || '|' || ")
    }
}

/// One row's state on its way between stores.
public struct SyncChange: Hashable, Sendable, Codable {
    /// The synced table.
    public var table: String
    /// The row's key, as text.
    public var key: String
    /// Its existence and registers (values included).
    public var row: SyncRow
    /// Whether the receiver is to forget the row, as if it had never seen
    /// it: the row left what its account may see (a list no longer shared
    /// with it). Not a delete: nothing is recorded, and the row comes back
    /// whole if it is shared again. Its `row` is empty.
    public var isEvicted: Bool
    /// In a push: whether the device had the row from the server (pulled,
    /// or pushed and acknowledged). A server that no longer has such a row
    /// forgot it after it was deleted (``SyncServer/compact(olderThan:now:)``),
    /// and drops the change of a device that had not heard of the delete,
    /// where it would take a row it never had for a new one.
    public var wasSynced: Bool
    /// In a pull: the server version of the row's last change. A replica
    /// notes it, so that it forgets the row's tombstone once the server's
    /// compaction horizon passes it (``SyncPage/horizon``). Nil from a server
    /// of an earlier version.
    public var version: Int64?

    /// A change from its parts.
    public init(table: String, key: String, row: SyncRow, isEvicted: Bool = false, wasSynced: Bool = false, version: Int64? = nil) {
        self.table = table
        self.key = key
        self.row = row
        self.isEvicted = isEvicted
        self.wasSynced = wasSynced
        self.version = version
    }

    enum CodingKeys: String, CodingKey { case table, key, row, evicted, synced, version = "v" }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        table = try container.decode(String.self, forKey: .table)
        key = try container.decode(String.self, forKey: .key)
        row = try container.decode(SyncRow.self, forKey: .row)
        isEvicted = try container.decodeIfPresent(Bool.self, forKey: .evicted) ?? false
        wasSynced = try container.decodeIfPresent(Bool.self, forKey: .synced) ?? false
        version = try container.decodeIfPresent(Int64.self, forKey: .version)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(table, forKey: .table)
        try container.encode(key, forKey: .key)
        try container.encode(row, forKey: .row)
        if isEvicted { try container.encode(true, forKey: .evicted) }
        if wasSynced { try container.encode(true, forKey: .synced) }
        try container.encodeIfPresent(version, forKey: .version)
    }

    /// The changes with each row once, its states merged, in the order rows first appear.
    static func mergedByKey(_ changes: [SyncChange]) -> [SyncChange] {
        var order: [ExactText] = [], rows: [ExactText: SyncChange] = [:]
        for change in changes {
            let key = ExactText(change.key)
            if var known = rows[key] {
                known.row.merge(change.row)
                known.wasSynced = known.wasSynced || change.wasSynced
                known.version = [known.version, change.version].compactMap { $0 }.max()
                rows[key] = known
            } else {
                order.append(key)
                rows[key] = change
            }
        }
        return order.compactMap { rows[$0] }
    }
}

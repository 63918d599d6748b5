@_spi(Sync) import Depot
import Foundation

/// A record type that sync replicates: its table, its one key column, and how
/// its rows are read as the values Depot's mapping gives them.
///
/// Caveat: a synced record's key never changes (an update of the key is a
/// delete and an insert), and every store of the system uses the same coding
/// strategies, so that a value means the same wherever it is written.
public struct SyncedTable: Sendable {
    /// The table.
    public let name: String
    /// The primary key's one column.
    public let key: String
    /// Every column, the key included, as the mapping names them.
    public let columns: [String]
    /// The rows with these keys (as text), read through the record type and encoded again.
    let read: @Sendable (Database, [String]) throws -> [String: [String: Value]]

    /// The synced table of a record type.
    ///
    /// - Throws: `misuse` for a composite primary key.
    public init<T: Record & ColumnMapped>(_ type: T.Type) throws {
        guard T.primaryKey.count == 1, let key = T.primaryKey.first else {
            throw DatabaseError(.misuse, "a synced table needs a single-column primary key; \(T.self) has \(T.primaryKey)")
        }
        name = T.tableName
        self.key = key
        columns = T.columnKeys
        read = { db, keys in
            var rows: [String: [String: Value]] = [:]
            for chunk in stride(from: 0, to: keys.count, by: 500).map({ Array(keys[$0..<min($0 + 500, keys.count)]) }) {
                for record in try db.fetchAll(T.self, "SELECT * FROM \(ident: T.tableName) WHERE \(SyncKey.matching(key, chunk))") {
                    let columns = try db.encodedColumns(of: record)
                    guard let keyValue = columns.first(where: { $0.name == key })?.value else { continue }
                    rows[SyncKey.text(keyValue)] = Dictionary(columns.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
                }
            }
            return rows
        }
    }
}

/// A row's key as text, the same on every engine: what `CAST(key AS TEXT)` gives.
enum SyncKey {
    /// `key IN (...)` for keys given as text: UUIDs bound as UUIDs (lowercase
    /// text on SQLite, `uuid` on PostgreSQL), so the key's index serves it;
    /// any other key compared as text.
    static func matching(_ column: String, _ keys: [String]) -> SQL {
        let uuids = keys.compactMap(UUID.init(uuidString:))
        if uuids.count == keys.count, !keys.isEmpty {
            return "\(ident: column) IN (\(SQL.join(uuids.map { "\(Value.uuid($0))" }, separator: ", ")))"
        }
        return "CAST(\(ident: column) AS TEXT) IN (\(SQL.join(keys.map { "\($0)" }, separator: ", ")))"
    }

    static func text(_ value: Value) -> String {
        switch value {
        case .integer(let number): String(number)
        case .text(let text): text
        case .uuid(let uuid): uuid.uuidString.lowercased()
        default: "\(value)"
        }
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

    /// A change from its parts.
    public init(table: String, key: String, row: SyncRow) {
        self.table = table
        self.key = key
        self.row = row
    }
}

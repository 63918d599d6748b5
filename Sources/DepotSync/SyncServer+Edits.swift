@_spi(Sync) import Depot
import Foundation

/// A change the server makes itself, for an account: a web page's form, an
/// administrator's fix, a job. ``SyncServer/edit(_:account:)`` applies edits
/// the way it applies a device's push (the account's access, shares, the
/// log every device pulls from), stamped by the server's own clock.
///
/// ```swift
/// try await server.edit([
///     .save(ReminderList(id: list, title: "Groceries")),
///     .update("reminders", key: reminder.uuidString.lowercased(), ["isCompleted": .bool(true)]),
///     .delete("tags", key: tag.uuidString.lowercased()),
/// ], account: "ana")
/// ```
///
/// Caveat: an edit wins over every value the server holds when it is
/// applied, as a person who edits what a page shows expects; a device's
/// change made earlier and pushed later loses to it column by column, as it
/// would to another device's later write.
public struct SyncEdit: Sendable {
    enum Change: Sendable {
        /// A whole record: its columns as the store encodes them.
        case record(@Sendable (Database) throws -> [(name: String, value: Value)])
        /// These columns of a row that exists.
        case update([String: Value])
        case delete
    }

    let table: String
    /// The key's text; nil for a record (read from its columns).
    let key: String?
    let change: Change

    /// The record inserted, or its row's columns set to the record's values
    /// (only the columns whose value changes get a new stamp, so an edit of
    /// one field never overrides a device's concurrent edit of another).
    public static func save<T: Record & Sendable>(_ record: T) -> SyncEdit {
        SyncEdit(table: T.tableName, key: nil, change: .record { db in try db.encodedColumns(of: record) })
    }

    /// These columns of the row with this key (its key's text, as
    /// ``SyncChange/key`` has it) set; the row must exist.
    public static func update(_ table: String, key: String, _ values: [String: Value]) -> SyncEdit {
        SyncEdit(table: table, key: key, change: .update(values))
    }

    /// The row with this key deleted (nothing, if there is none), and with it
    /// the rows that name it as a parent, down the tree (a list's reminders and
    /// their taggings; a tag's taggings), as a device's foreign keys take them.
    public static func delete(_ table: String, key: String) -> SyncEdit {
        SyncEdit(table: table, key: key, change: .delete)
    }
}

extension SyncServer {
    /// Applies the server's own edits for an account, in one transaction: all
    /// or none, as one version of the log, so every device that sees the rows
    /// pulls them (and a live one hears of them at once).
    ///
    /// The account's rights are a device's: its own roots and the roots
    /// shared with it (``SyncAccessDenied`` otherwise); a new root is the
    /// account's. A server without accounts passes the default, empty, account.
    ///
    /// - Throws: `misuse` for a table or column the server does not sync, an
    ///   update of a row that does not exist, or a value the table's record
    ///   type does not take (its column named, never its value);
    ///   ``SyncAccessDenied`` for a row of a root the account may not write.
    ///   Nothing is applied then.
    @discardableResult
    public func edit(_ edits: [SyncEdit], account: String = "") async throws -> SyncPushAnswer {
        // The push is made inside the transaction (stamps after the stored ones); this one only carries the account's request.
        let answer = try await apply(SyncPush(client: UUID(), number: 1, changes: []), account: account, edits: edits)
        await refreshStatisticsIfGrown(by: edits.count)
        return answer
    }

    /// The changes `edits` make to the rows as the server holds them, stamped
    /// after every register those rows hold.
    static func changes(for edits: [SyncEdit], _ db: Database, _ tables: [SyncedTable], clock: inout ServerClock) throws -> [SyncChange] {
        var rows: [SyncRowID: SyncRow] = [:], stored: [SyncRowID: SyncRow] = [:], order: [SyncRowID] = []
        var edits = edits[...]
        while let edit = edits.popFirst() {
            guard let table = tables.first(where: { $0.name == edit.table }) else {
                throw DatabaseError(.misuse, "an edit names the table \(edit.table), which this server does not sync")
            }
            var values: [String: Value] = [:]
            switch edit.change {
            case .record(let encode):
                for (name, value) in try encode(db) where table.columns.contains(name) { values[name] = value }
            case .update(let given):
                if let unknown = given.keys.sorted().first(where: { !table.columns.contains($0) }) {
                    throw DatabaseError(.misuse, "an edit names the column \(unknown) of \(table.name), which this server does not sync")
                }
                if let key = given.keys.sorted().first(where: table.keyColumns.contains) {
                    throw DatabaseError(.misuse, "an edit of \(table.name) changes its key column \(key): delete the row and save another")
                }
                values = given
            case .delete:
                break
            }
            let key = edit.key ?? table.key(of: values)
            let id = SyncRowID(table: table.name, key: key)
            if rows[id] == nil {
                stored[id] = try db.syncRows(table, keys: [key], in: .server)[ExactText(key)] ?? SyncRow()
                rows[id] = stored[id]
                order.append(id)
            }
            var row = rows[id] ?? SyncRow()
            // After every stamp the row holds: a device's clock may run up to the drift bound ahead of the server's.
            let latest = row.registers.values.map(\.stamp.time).max() ?? HybridTimestamp(rawValue: 0)
            switch edit.change {
            case .delete:
                guard row.exists else { break }
                row.delete()
                // The rows under it go with it, as the foreign keys take them on a device.
                for child in tables where child.parents.first?.table == table.name {
                    let keys = try db.fetchAll(String.self, """
                        SELECT "row_key" FROM \(ident: SyncStateTables.server.rows)
                        WHERE "tbl" = \(child.name) AND "parent" = \(key) AND "cl" % 2 = 1 ORDER BY "row_key"
                        """)
                    edits.append(contentsOf: keys.map { SyncEdit.delete(child.name, key: $0) })
                }
                // And the rows that name it as another parent (a tag's taggings): found in their table, by that column.
                for child in tables {
                    for parent in child.parents.dropFirst() where parent.table == table.name {
                        let columns = SQL.join(child.keyColumns.map { "\(ident: $0)" }, separator: ", ")
                        let found = try db.fetchAll(Row.self, "SELECT \(columns) FROM \(ident: child.name) WHERE \(SyncKey.matching([parent.column], [key]))")
                        let keys = found.map { SyncKey.text($0.values) }.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
                        edits.append(contentsOf: keys.map { SyncEdit.delete(child.name, key: $0) })
                    }
                }
            case .update:
                guard row.exists else { throw DatabaseError(.misuse, "an edit updates a row of \(table.name) that does not exist") }
                let changed = values.filter { row.registers[$0.key]?.value != $0.value }
                if !changed.isEmpty { row.write(changed, stamp: try clock.stamp(after: latest)) }
            case .record:
                let changed = row.exists ? values.filter { row.registers[$0.key]?.value != $0.value } : values
                if !changed.isEmpty { row.write(changed, stamp: try clock.stamp(after: latest)) }
            }
            rows[id] = row
        }
        // A row the edits leave as it was (a save of the same values, a delete of a deleted row) is no change.
        return order.compactMap { id in
            guard let row = rows[id], row != stored[id] else { return nil }
            return SyncChange(table: id.table, key: id.key, row: row)
        }
    }
}

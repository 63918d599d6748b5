@_spi(Sync) import Depot
import Foundation

/// The tables where a store keeps sync's state beside the synced tables: a
/// row's existence, its columns' stamps, and the values of rows sync keeps
/// out of their table (a row whose parent is gone).
struct SyncStateTables: Sendable {
    var rows: String
    var clocks: String
    var hidden: String

    static let replica = SyncStateTables(rows: "depot_sync_rows", clocks: "depot_sync_clocks", hidden: "depot_sync_hidden")
    static let server = SyncStateTables(rows: "depot_sync_server_rows", clocks: "depot_sync_server_clocks", hidden: "depot_sync_server_hidden")
}

extension Database {
    /// The state of these rows: existence, stamps, and their values (from
    /// the synced table, or from the hidden rows).
    func syncRows(_ table: SyncedTable, keys: [String], in state: SyncStateTables) throws -> [String: SyncRow] {
        struct Clock: Decodable { var row_key: String; var col: String; var hlc: Int64; var node: String }
        struct Length: Decodable { var row_key: String; var cl: Int64 }
        var rows: [String: SyncRow] = [:]
        var values = try table.read(self, keys)
        for (key, registers) in try hiddenRows(table, keys: keys.filter { values[$0] == nil }, in: state) {
            values[key] = registers.mapValues(\.value)
        }
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for length in try fetchAll(Length.self, "SELECT \"row_key\", \"cl\" FROM \(ident: state.rows) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                rows[length.row_key, default: SyncRow()].causalLength = length.cl
            }
            for clock in try fetchAll(Clock.self, "SELECT \"row_key\", \"col\", \"hlc\", \"node\" FROM \(ident: state.clocks) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                guard let node = UUID(uuidString: clock.node) else { continue }
                // A deleted row's registers keep their stamps; their values went with the row.
                let value = values[clock.row_key]?[clock.col] ?? .null
                rows[clock.row_key, default: SyncRow()].registers[clock.col] = SyncRegister(value: value, stamp: SyncStamp(time: HybridTimestamp(rawValue: clock.hlc), node: node))
            }
        }
        return rows
    }

    /// The registers of hidden rows, by key.
    private func hiddenRows(_ table: SyncedTable, keys: [String]? = nil, in state: SyncStateTables) throws -> [String: [String: SyncRegister]] {
        struct Hidden: Decodable { var row_key: String; var registers: Data }
        var found: [Hidden] = []
        if let keys {
            for chunk in SyncKey.chunks(keys) {
                found += try fetchAll(Hidden.self, """
                    SELECT "row_key", "registers" FROM \(ident: state.hidden) WHERE "tbl" = \(table.name)
                    AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                    """)
            }
        } else {
            found = try fetchAll(Hidden.self, "SELECT \"row_key\", \"registers\" FROM \(ident: state.hidden) WHERE \"tbl\" = \(table.name)")
        }
        var rows: [String: [String: SyncRegister]] = [:]
        for row in found { rows[row.row_key] = try JSONDecoder().decode([String: SyncRegister].self, from: row.registers) }
        return rows
    }

    /// Writes a row's existence and its registers' stamps.
    func storeSyncState(_ row: SyncRow, of table: SyncedTable, key: String, in state: SyncStateTables, version: Int64? = nil) throws {
        if let version {
            try execute("""
                INSERT INTO \(ident: state.rows) ("tbl", "row_key", "cl", "version") VALUES (\(table.name), \(key), \(row.causalLength), \(version))
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = excluded."cl", "version" = excluded."version"
                """)
        } else {
            try execute("""
                INSERT INTO \(ident: state.rows) ("tbl", "row_key", "cl") VALUES (\(table.name), \(key), \(row.causalLength))
                ON CONFLICT ("tbl", "row_key") DO UPDATE SET "cl" = excluded."cl"
                """)
        }
        for (column, register) in row.registers.sorted(by: { $0.key < $1.key }) {
            try execute("""
                INSERT INTO \(ident: state.clocks) ("tbl", "row_key", "col", "hlc", "node")
                VALUES (\(table.name), \(key), \(column), \(register.stamp.time.rawValue), \(register.stamp.node.uuidString.lowercased()))
                ON CONFLICT ("tbl", "row_key", "col") DO UPDATE SET "hlc" = excluded."hlc", "node" = excluded."node"
                """)
        }
    }

    /// Makes the synced table agree with a row's merged state: the row with
    /// its winning values while it exists and its parents are in their
    /// tables; otherwise no row (its values kept aside while it exists, so
    /// it comes back with its parent). Rows that belong to it follow.
    func materialize(_ row: SyncRow, of table: SyncedTable, key: String, among tables: [SyncedTable], in state: SyncStateTables) throws {
        guard row.exists else {
            try execute("DELETE FROM \(ident: state.hidden) WHERE \"tbl\" = \(table.name) AND \"row_key\" = \(key)")
            try removeFromTable(table, keys: [key], among: tables, in: state)
            return
        }
        guard table.keyColumns.allSatisfy({ row.registers[$0] != nil }) else { return }
        if try parentsPresent(row, of: table, among: tables) {
            let columns = table.columns.filter { row.registers[$0] != nil }
            let names = SQL.join(columns.map { "\(ident: $0)" }, separator: ", ")
            let values = SQL.join(columns.map { "\(row.registers[$0]?.value ?? .null)" }, separator: ", ")
            let target = SQL.join(table.keyColumns.map { "\(ident: $0)" }, separator: ", ")
            let updates = columns.filter { !table.keyColumns.contains($0) }.map { "\(ident: $0) = excluded.\(ident: $0)" as SQL }
            try execute(updates.isEmpty
                ? "INSERT INTO \(ident: table.name) (\(names)) VALUES (\(values)) ON CONFLICT (\(target)) DO NOTHING"
                : "INSERT INTO \(ident: table.name) (\(names)) VALUES (\(values)) ON CONFLICT (\(target)) DO UPDATE SET \(SQL.join(updates, separator: ", "))")
            try execute("DELETE FROM \(ident: state.hidden) WHERE \"tbl\" = \(table.name) AND \"row_key\" = \(key)")
            try restoreChildren(of: table, key: key, among: tables, in: state)
        } else {
            try hide(row.registers, of: table, key: key, in: state)
            try removeFromTable(table, keys: [key], among: tables, in: state)
        }
    }

    /// Whether every parent a row names is in its table.
    private func parentsPresent(_ row: SyncRow, of table: SyncedTable, among tables: [SyncedTable]) throws -> Bool {
        for parent in table.parents {
            let value = row.registers[parent.column]?.value ?? .null
            if value == .null { continue }
            guard let key = tables.first(where: { $0.name == parent.table })?.keyColumns, key.count == 1 else {
                throw DatabaseError(.misuse, "the parent table \(parent.table) of \(table.name) is not a synced table with a one-column key")
            }
            let count = try fetchOne(Int.self, "SELECT count(*) FROM \(ident: parent.table) WHERE \(SyncKey.matching(key, [SyncKey.text(value)]))") ?? 0
            if count == 0 { return false }
        }
        return true
    }

    private func hide(_ registers: [String: SyncRegister], of table: SyncedTable, key: String, in state: SyncStateTables) throws {
        let encoded = try JSONEncoder().encode(registers)
        try execute("""
            INSERT INTO \(ident: state.hidden) ("tbl", "row_key", "registers") VALUES (\(table.name), \(key), \(encoded))
            ON CONFLICT ("tbl", "row_key") DO UPDATE SET "registers" = excluded."registers"
            """)
    }

    /// Deletes rows from their table; their children still alive are hidden first, recursively.
    private func removeFromTable(_ table: SyncedTable, keys: [String], among tables: [SyncedTable], in state: SyncStateTables) throws {
        guard !keys.isEmpty else { return }
        for child in tables {
            for parent in child.parents where parent.table == table.name {
                for chunk in SyncKey.chunks(keys) {
                    let childKeys = try fetchAll(String.self, """
                        SELECT \(unsafeRaw: keyTextSQL(child.keyColumns)) FROM \(ident: child.name) WHERE \(SyncKey.matching([parent.column], chunk))
                        """)
                    guard !childKeys.isEmpty else { continue }
                    let states = try syncRows(child, keys: childKeys, in: state)
                    for childKey in childKeys {
                        // A child with no recorded state is kept as alive: its values are not lost.
                        let childRow = states[childKey] ?? SyncRow(causalLength: 1)
                        if childRow.causalLength == 0 || childRow.exists { try hide(childRow.registers, of: child, key: childKey, in: state) }
                    }
                    try removeFromTable(child, keys: childKeys, among: tables, in: state)
                }
            }
        }
        for chunk in SyncKey.chunks(keys) {
            try execute("DELETE FROM \(ident: table.name) WHERE \(SyncKey.matching(table.keyColumns, chunk))")
        }
    }

    /// Puts back the hidden children that wait for this row.
    private func restoreChildren(of table: SyncedTable, key: String, among tables: [SyncedTable], in state: SyncStateTables) throws {
        for child in tables where child.parents.contains(where: { $0.table == table.name }) {
            let waiting = try hiddenRows(child, in: state).filter { _, registers in
                child.parents.contains { $0.table == table.name && registers[$0.column].map { SyncKey.text($0.value) } == key }
            }
            guard !waiting.isEmpty else { continue }
            let states = try syncRows(child, keys: Array(waiting.keys), in: state)
            for childKey in waiting.keys.sorted() {
                guard let childRow = states[childKey] else { continue }
                try materialize(childRow, of: child, key: childKey, among: tables, in: state)
            }
        }
    }

    /// The SQL text of a row's key text, as ``SyncKey/text(_:)`` writes it.
    private func keyTextSQL(_ columns: [String]) -> String {
        SyncKey.expression(columns, row: nil, quote: dialect.quote(identifier:))
    }
}

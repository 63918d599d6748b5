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

/// A register's stamp as the state tables keep it. Read by position, not
/// through Codable: a first pull reads half a million of them.
@Columns
struct StoredStamp {
    var row_key: String
    var col: String
    var hlc: Int64
    var node: String
}

/// A row's causal length as the state tables keep it.
@Columns
struct StoredLength {
    var row_key: String
    var cl: Int64
}

extension Database {
    /// The state of these rows: existence, stamps, and their values (from
    /// the synced table, or from the hidden rows).
    func syncRows(_ table: SyncedTable, keys: [String], in state: SyncStateTables) throws -> [ExactText: SyncRow] {
        var rows: [ExactText: SyncRow] = [:]
        var values = try table.read(self, keys)
        for (key, registers) in try hiddenRows(table, keys: keys.filter { values[ExactText($0)] == nil }, in: state) {
            values[key] = registers.mapValues(\.value)
        }
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for length in try fetchAll(StoredLength.self, "SELECT \"row_key\", \"cl\" FROM \(ident: state.rows) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                rows[ExactText(length.row_key), default: SyncRow()].causalLength = length.cl
            }
            for clock in try fetchAll(StoredStamp.self, "SELECT \"row_key\", \"col\", \"hlc\", \"node\" FROM \(ident: state.clocks) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(list))") {
                guard let node = UUIDText.parse(clock.node) else { continue }
                // A deleted row's registers keep their stamps; their values went with the row.
                let value = values[ExactText(clock.row_key)]?[clock.col] ?? .null
                rows[ExactText(clock.row_key), default: SyncRow()].registers[clock.col] = SyncRegister(value: value, stamp: SyncStamp(time: HybridTimestamp(rawValue: clock.hlc), node: node))
            }
        }
        return rows
    }

    /// The registers of hidden rows, by key.
    private func hiddenRows(_ table: SyncedTable, keys: [String]? = nil, in state: SyncStateTables) throws -> [ExactText: [String: SyncRegister]] {
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
        var rows: [ExactText: [String: SyncRegister]] = [:]
        for row in found { rows[ExactText(row.row_key)] = try JSONDecoder().decode([String: SyncRegister].self, from: row.registers) }
        return rows
    }

    /// Writes rows' existence and their registers' stamps: a few statements
    /// for each hundred rows, and one bulk insert (PostgreSQL's COPY) of the
    /// rows that had no state. Each key appears once.
    ///
    /// Given `stored` (the rows' states as read before the merge, in the
    /// same transaction): a register whose stamp it already holds is not
    /// written again (an edit of one column writes one stamp, not one for
    /// every column of its row), and the stamps of a row it lacks, which has
    /// none yet, are inserted without a conflict clause (a first push of
    /// 50,000 rows writes half a million: the engine's conflict check is a
    /// third of their cost).
    ///
    /// With `scopes` (the server's), a new row's scope is written with its
    /// state, where it has one there: the keys returned are those rows, whose
    /// scope needs no update after.
    @discardableResult
    func storeSyncStates(_ rows: [(key: String, row: SyncRow)], of table: SyncedTable, in state: SyncStateTables, version: Int64? = nil,
                         stored: [ExactText: SyncRow]? = nil, scopes: [ExactText: SyncScope]? = nil) throws -> Set<ExactText> {
        // A row that has no state yet (none in `stored`): its state and stamps are inserted in one go at the end.
        var fresh: [[Value]] = [], freshRows: [[Value]] = [], scoped: Set<ExactText> = []
        let columns = ["tbl", "row_key", "col", "hlc", "node"] + (version != nil ? ["version"] : [])
        let set = version != nil ? ["cl", "version"] : ["cl"]
        let scopeColumns = scopes != nil ? ["account", "root_tbl", "root_key", "parent"] : []
        for start in stride(from: 0, to: rows.count, by: 100) {
            let chunk = rows[start..<min(start + 100, rows.count)]
            var lengths: [SQL] = [], clocks: [SQL] = []
            for item in chunk {
                let before = stored?[ExactText(item.key)]
                let isNew = stored != nil && before == nil
                if isNew {
                    var values: [Value] = [.text(table.name), .text(item.key), .integer(item.row.causalLength)] + (version.map { [.integer($0)] } ?? [])
                    if let scopes {
                        // The columns' defaults where the row has no scope to write.
                        let scope = scopes[ExactText(item.key)]
                        if scope != nil { scoped.insert(ExactText(item.key)) }
                        values += [scope?.account ?? "", scope?.rootTable ?? "", scope?.rootKey ?? "", scope?.parent ?? ""].map { .text($0) }
                    }
                    freshRows.append(values)
                } else {
                    lengths.append(version.map { "(\(table.name), \(item.key), \(item.row.causalLength), \($0))" } ?? "(\(table.name), \(item.key), \(item.row.causalLength))")
                }
                for (column, register) in item.row.registers.sorted(by: { $0.key < $1.key }) where before?.registers[column]?.stamp != register.stamp {
                    let (time, node) = (register.stamp.time.rawValue, UUIDText.lowercased(register.stamp.node))
                    if isNew {
                        fresh.append([.text(table.name), .text(item.key), .text(column), .integer(time), .text(node)] + (version.map { [.integer($0)] } ?? []))
                    } else {
                        clocks.append(version.map { "(\(table.name), \(item.key), \(column), \(time), \(node), \($0))" }
                            ?? "(\(table.name), \(item.key), \(column), \(time), \(node))")
                    }
                }
            }
            if !lengths.isEmpty {
                try insert(into: state.rows, columns: ["tbl", "row_key"] + set, "VALUES \(SQL.join(lengths, separator: ", "))",
                           onConflict: .update(["tbl", "row_key"], setting: set))
            }
            for part in stride(from: 0, to: clocks.count, by: 400) {
                let values = SQL.join(Array(clocks[part..<min(part + 400, clocks.count)]), separator: ", ")
                let target = ["tbl", "row_key", "col"]
                if version != nil {
                    // The server notes when each stamp was written: whose value a later push replaced, unseen, is told by it.
                    let clocks = state.clocks
                    try insert(into: clocks, columns: target + ["hlc", "node", "version"], "VALUES \(values)", onConflict: .update(target, set: [
                        .inserted("hlc"), .inserted("node"),
                        .init("version", """
                            CASE WHEN \(ident: clocks)."hlc" = \(inserted: "hlc") AND \(ident: clocks)."node" = \(inserted: "node")
                            THEN \(ident: clocks)."version" ELSE \(inserted: "version") END
                            """),
                    ]))
                } else {
                    try insert(into: state.clocks, columns: target + ["hlc", "node"], "VALUES \(values)", onConflict: .update(target, setting: ["hlc", "node"]))
                }
            }
        }
        // New rows' states and stamps through the engine's bulk path where it has one (PostgreSQL's COPY).
        if !freshRows.isEmpty { try insert(into: state.rows, columns: ["tbl", "row_key"] + set + scopeColumns, rows: freshRows) }
        if !fresh.isEmpty { try insert(into: state.clocks, columns: columns, rows: fresh) }
        return scoped
    }

    /// Makes a synced table agree with its rows' merged states: each row with
    /// its winning values while it exists and its parents are in their
    /// tables; otherwise no row (its values kept aside while it exists, so it
    /// comes back with its parent). Rows that belong to them follow. A few
    /// statements for each hundred rows. Each key appears once.
    func materialize(_ rows: [(key: String, row: SyncRow)], of table: SyncedTable, among tables: [SyncedTable], in state: SyncStateTables) throws {
        let hiddenHere = try hasHiddenRows(table.name, in: state)
        let deleted = rows.filter { !$0.row.exists }.map(\.key)
        if hiddenHere { try forgetHidden(table, keys: deleted, in: state) }
        try removeFromTable(table, keys: deleted, among: tables, in: state)

        let alive = rows.filter { item in item.row.exists && table.keyColumns.allSatisfy { item.row.registers[$0] != nil } }
        let present = try presentParents(alive.map(\.row), of: table, among: tables)
        var shown: [(key: String, row: SyncRow)] = [], kept: [String] = []
        for item in alive {
            let parentsIn = table.parents.allSatisfy { parent in
                let value = item.row.registers[parent.column]?.value ?? .null
                return value == .null || present[parent.column]?.contains(ExactText(SyncKey.text(value))) == true
            }
            if parentsIn { shown.append(item) } else {
                try hide(item.row.registers, of: table, key: item.key, in: state)
                kept.append(item.key)
            }
        }
        try removeFromTable(table, keys: kept, among: tables, in: state)
        // Rows with the same columns go in one statement (a row from a device that does not know a column lacks it).
        let groups = Dictionary(grouping: shown) { item in table.columns.filter { item.row.registers[$0] != nil } }
        for (columns, group) in groups.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            let updates = columns.filter { !table.keyColumns.contains($0) }
            for start in stride(from: 0, to: group.count, by: 100) {
                let chunk = Array(group[start..<min(start + 100, group.count)])
                guard dialect.capabilities.conflictClause else {
                    try storeRowsByKey(chunk, columns: columns, updating: updates, of: table)
                    continue
                }
                let values: [SQL] = chunk.map { item in
                    "(\(SQL.join(columns.map { "\(item.row.registers[$0]?.value ?? .null)" }, separator: ", ")))"
                }
                try insert(into: table.name, columns: columns, "VALUES \(SQL.join(values, separator: ", "))",
                           onConflict: updates.isEmpty ? .doNothing(table.keyColumns) : .update(table.keyColumns, setting: updates))
            }
        }
        if hiddenHere { try forgetHidden(table, keys: shown.map(\.key), in: state) }
        try restoreChildren(of: table, keys: Set(shown.map { ExactText($0.key) }), among: tables, in: state)
    }

    /// Stores rows where the engine has no `ON CONFLICT` (MariaDB), whose own
    /// clause would take a clash on any unique key of a synced table (a
    /// local column's, say) for a conflict and update that other row: the
    /// stored rows are updated by key, the others inserted, so a clash on
    /// another unique key fails as `unique`, as it does elsewhere.
    private func storeRowsByKey(_ items: [(key: String, row: SyncRow)], columns: [String], updating updates: [String], of table: SyncedTable) throws {
        let stored = Set(try fetchAll(String.self, """
            SELECT \(unsafeRaw: keyTextSQL(table.keyColumns)) FROM \(ident: table.name) WHERE \(SyncKey.matching(table.keyColumns, items.map(\.key)))
            """).map(ExactText.init))
        var inserted: [SQL] = []
        for item in items {
            func value(_ column: String) -> Value { item.row.registers[column]?.value ?? .null }
            if stored.contains(ExactText(item.key)) {
                guard !updates.isEmpty else { continue }
                try execute("""
                    UPDATE \(ident: table.name) SET \(SQL.join(updates.map { "\(ident: $0) = \(value($0))" }, separator: ", "))
                    WHERE \(SyncKey.matching(table.keyColumns, [item.key]))
                    """)
            } else {
                inserted.append("(\(SQL.join(columns.map { "\(value($0))" }, separator: ", ")))")
            }
        }
        guard !inserted.isEmpty else { return }
        try execute("""
            INSERT INTO \(ident: table.name) (\(SQL.join(columns.map { "\(ident: $0)" }, separator: ", "))) VALUES \(SQL.join(inserted, separator: ", "))
            """)
    }

    /// For each parent column, the keys it names that are in the parent's table.
    private func presentParents(_ rows: [SyncRow], of table: SyncedTable, among tables: [SyncedTable]) throws -> [String: Set<ExactText>] {
        var present: [String: Set<ExactText>] = [:]
        for parent in table.parents {
            guard let key = tables.first(where: { $0.name == parent.table })?.keyColumns, key.count == 1 else {
                throw DatabaseError(.misuse, "the parent table \(parent.table) of \(table.name) is not a synced table with a one-column key")
            }
            let named = rows.compactMap { row -> String? in
                guard let value = row.registers[parent.column]?.value, value != .null else { return nil }
                return SyncKey.text(value)
            }.exactlyDistinct().sorted { ExactText($0) < ExactText($1) }
            var found = Set<ExactText>()
            for chunk in SyncKey.chunks(named) {
                found.formUnion(try fetchAll(String.self, """
                    SELECT \(unsafeRaw: keyTextSQL(key)) FROM \(ident: parent.table) WHERE \(SyncKey.matching(key, chunk))
                    """).map(ExactText.init))
            }
            present[parent.column] = found
        }
        return present
    }

    private func hasHiddenRows(_ table: String, in state: SyncStateTables) throws -> Bool {
        try fetchOne(Int.self, "SELECT count(*) FROM (SELECT 1 FROM \(ident: state.hidden) WHERE \"tbl\" = \(table) LIMIT 1) AS \"any\"") ?? 0 > 0
    }

    private func forgetHidden(_ table: SyncedTable, keys: [String], in state: SyncStateTables) throws {
        for chunk in SyncKey.chunks(keys) {
            try execute("DELETE FROM \(ident: state.hidden) WHERE \"tbl\" = \(table.name) AND \"row_key\" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))")
        }
    }

    private func hide(_ registers: [String: SyncRegister], of table: SyncedTable, key: String, in state: SyncStateTables) throws {
        let encoded = try JSONEncoder().encode(registers)
        try insert(into: state.hidden, columns: ["tbl", "row_key", "registers"], "VALUES (\(table.name), \(key), \(encoded))",
                   onConflict: .update(["tbl", "row_key"], setting: ["registers"]))
    }

    /// Takes rows out of their table and keeps them aside with their state
    /// (and their children, recursively), as for a row whose parent is gone:
    /// they come back when their parent is in its table again.
    func hideSyncRows(_ keys: [String], of table: SyncedTable, among tables: [SyncedTable], in state: SyncStateTables) throws {
        guard !keys.isEmpty else { return }
        let states = try syncRows(table, keys: keys, in: state)
        let unrecorded = try table.read(self, keys.filter { states[ExactText($0)] == nil })
        for key in keys {
            if let row = states[ExactText(key)] {
                if row.exists { try hide(row.registers, of: table, key: key, in: state) }
            } else if let values = unrecorded[ExactText(key)] {
                // A row sync never recorded (written beside it): kept aside as it is,
                // stamped earlier than any write, so that nothing of it is lost.
                let stamp = SyncStamp(time: .zero, node: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
                try hide(values.mapValues { SyncRegister(value: $0, stamp: stamp) }, of: table, key: key, in: state)
            }
        }
        try removeFromTable(table, keys: keys, among: tables, in: state)
    }

    /// Deletes rows from their table; their children still alive are hidden first, recursively.
    func removeFromTable(_ table: SyncedTable, keys: [String], among tables: [SyncedTable], in state: SyncStateTables) throws {
        guard !keys.isEmpty else { return }
        for child in tables {
            for parent in child.parents where parent.table == table.name {
                for chunk in SyncKey.chunks(keys) {
                    let childKeys = try fetchAll(String.self, """
                        SELECT \(unsafeRaw: keyTextSQL(child.keyColumns)) FROM \(ident: child.name) WHERE \(SyncKey.matching([parent.column], chunk))
                        """)
                    try hideSyncRows(childKeys, of: child, among: tables, in: state)
                }
            }
        }
        for chunk in SyncKey.chunks(keys) {
            try execute("DELETE FROM \(ident: table.name) WHERE \(SyncKey.matching(table.keyColumns, chunk))")
        }
    }

    /// Puts back the hidden children that wait for these rows.
    private func restoreChildren(of table: SyncedTable, keys: Set<ExactText>, among tables: [SyncedTable], in state: SyncStateTables) throws {
        guard !keys.isEmpty else { return }
        for child in tables where child.parents.contains(where: { $0.table == table.name }) {
            guard try hasHiddenRows(child.name, in: state) else { continue }
            let waiting = try hiddenRows(child, in: state).filter { _, registers in
                child.parents.contains { parent in
                    parent.table == table.name && registers[parent.column].map { keys.contains(ExactText(SyncKey.text($0.value))) } == true
                }
            }
            guard !waiting.isEmpty else { continue }
            let states = try syncRows(child, keys: waiting.keys.map(\.text), in: state)
            try materialize(waiting.keys.sorted().compactMap { key in states[key].map { (key.text, $0) } }, of: child, among: tables, in: state)
        }
    }

    /// The SQL text of a row's key text, as `SyncKey.text(_:)` writes it.
    private func keyTextSQL(_ columns: [String]) -> String {
        SyncKey.expression(columns, row: nil, dialect: dialect)
    }
}

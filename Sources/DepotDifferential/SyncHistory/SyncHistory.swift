import Depot
import DepotSync
import Foundation

/// A Jepsen-style history of sync, and its checker: random inserts, edits,
/// moves, deletes, re-inserts of deleted keys, shares and unshares, restores
/// of a device from an earlier copy of its file, clocks that jump ahead,
/// syncs through a transport that loses, repeats and reorders requests. The
/// checker knows nothing of the merge: it keeps a log of every write as the
/// device stamped it, and holds the end state to it.
///
/// - Convergence: every device shows exactly what the server shows its account,
///   at the end and after each of its syncs that completed.
/// - No lost write: every write a successful sync acknowledged is on the
///   server, or a later write of its column (a larger stamp), or a later life
///   of its row, supersedes it, unless the sync reported it dropped.
/// - No resurrected row and no invented value: every row the server shows is
///   in a life some device wrote, every value is one some device wrote with
///   that stamp (or the server's, settling a tie).
/// - Read-your-writes and monotonic reads for each device: after a sync, a
///   device holds each of its own acknowledged writes or a later one, and no
///   row's (life, stamp) goes back between its syncs (a restore starts afresh).
public struct SyncHistory {
    /// The synced tables: folders, the items in them, labels linking both, words keyed by text.
    public static func syncedTables() throws -> [SyncedTable] {
        [
            try SyncedTable(SyncFolder.self),
            try SyncedTable(SyncItem.self, parents: [SyncParent("folderID", SyncFolder.self)]),
            try SyncedTable(SyncLabel.self, parents: [SyncParent("itemID", SyncItem.self), SyncParent("folderID", SyncFolder.self)]),
            try SyncedTable(SyncWord.self),
        ]
    }
    static let kept: [String: [String]] = [
        "syncFolders": ["id", "title"], "syncItems": ["id", "folderID", "title"], "syncLabels": ["itemID", "folderID"], "syncWords": ["id", "meaning"],
    ]
    /// The schema of the replicas (SQLite) and of the server (any engine):
    /// folders, items, labels, and words keyed by texts some of which Swift
    /// calls equal ("é" and "e" + U+0301).
    public static let schema: SQL = """
        CREATE TABLE "syncFolders" ("id" \(keyType: .uuid) PRIMARY KEY, "title" \(type: .text) NOT NULL);
        CREATE TABLE "syncItems" ("id" \(keyType: .uuid) PRIMARY KEY, "folderID" \(keyType: .uuid) NOT NULL REFERENCES "syncFolders" ("id") ON DELETE CASCADE,
            "title" \(type: .text) NOT NULL);
        CREATE TABLE "syncLabels" ("itemID" \(keyType: .uuid) NOT NULL REFERENCES "syncItems" ("id") ON DELETE CASCADE,
            "folderID" \(keyType: .uuid) NOT NULL REFERENCES "syncFolders" ("id") ON DELETE CASCADE, PRIMARY KEY ("itemID", "folderID"));
        CREATE TABLE "syncWords" ("id" \(keyType: .text) PRIMARY KEY, "meaning" \(type: .text) NOT NULL)
        """
    /// The words each account writes.
    static let words = ["a": ["\u{E9}", "e\u{301}", "\u{3A9}", "a|b"], "b": ["\u{2126}", "Caf\u{E9}", "Cafe\u{301}"]]

    /// A row's sync state: its life and its columns' stamps and values.
    struct RowState: Equatable {
        var cl: Int64
        var stamps: [String: Stamp] = [:]
        var values: [String: String] = [:]
        var inTable = false
    }

    struct Stamp: Comparable, Hashable, CustomStringConvertible {
        var hlc: Int64
        var node: String
        /// As `SyncStamp` orders them: the clock, then the node's bytes (its lowercase text orders alike).
        static func < (a: Stamp, b: Stamp) -> Bool {
            if a.hlc != b.hlc { return a.hlc < b.hlc }
            return a.node.utf8.lexicographicallyPrecedes(b.node.utf8)
        }
        var description: String { "\(hlc)@\(node.prefix(8))" }
    }

    /// A row, its key compared byte for byte (the checker must not merge what the engines keep apart).
    struct RowID: Hashable, Comparable, CustomStringConvertible {
        var table: String
        var key: String
        static func == (a: RowID, b: RowID) -> Bool { a.table == b.table && Array(a.key.utf8) == Array(b.key.utf8) }
        func hash(into hasher: inout Hasher) { hasher.combine(table); hasher.combine(Array(key.utf8)) }
        static func < (a: RowID, b: RowID) -> Bool {
            a.table != b.table ? a.table < b.table : Array(a.key.utf8).lexicographicallyPrecedes(Array(b.key.utf8))
        }
        var description: String { "\(table) \(key.unicodeScalars.prefix(13).map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined())" }
    }

    /// One write a device made, as its replica recorded it.
    struct Write {
        var device: Int
        var lineage: Int
        var step: Int
        var row: RowID
        var state: RowState
        var acknowledged = false
        var dropped = false
        /// The stamps as the write made them, before any was stamped again.
        var original: [String: Stamp] = [:]
        /// Every stamp a column of this write was given again (a refusal of a clock a day ahead),
        /// by its replica and by a copy of it restored later, which stamps the write anew.
        var restamps: [String: Set<Stamp>] = [:]
    }

    /// Every row's state in a store's sync tables, values from the synced tables.
    static func states(_ db: Database, server: Bool) throws -> [RowID: RowState] {
        let (rowsTable, clocksTable) = server ? ("depot_sync_server_rows", "depot_sync_server_clocks") : ("depot_sync_rows", "depot_sync_clocks")
        struct Length: Decodable { var tbl: String; var row_key: String; var cl: Int64 }
        struct Clock: Decodable { var tbl: String; var row_key: String; var col: String; var hlc: Int64; var node: String }
        var states: [RowID: RowState] = [:]
        for length in try db.fetchAll(Length.self, "SELECT \"tbl\", \"row_key\", \"cl\" FROM \(ident: rowsTable)") {
            states[RowID(table: length.tbl, key: length.row_key)] = RowState(cl: length.cl)
        }
        for clock in try db.fetchAll(Clock.self, "SELECT \"tbl\", \"row_key\", \"col\", \"hlc\", \"node\" FROM \(ident: clocksTable)") {
            states[RowID(table: clock.tbl, key: clock.row_key), default: RowState(cl: 0)].stamps[clock.col] = Stamp(hlc: clock.hlc, node: clock.node)
        }
        for (table, columns) in kept {
            let text = db.dialect.castTypeName(.text)
            let key = table == "syncLabels" ? "CAST(\"itemID\" AS \(text)) || '|' || CAST(\"folderID\" AS \(text))" : "CAST(\"id\" AS \(text))"
            let list = columns.map { "CAST(\"\($0)\" AS \(text))" }.joined(separator: ", ")
            for row in try db.fetchAll(Row.self, "SELECT \(unsafeRaw: key), \(unsafeRaw: list) FROM \(ident: table)") {
                guard case .text(let keyText) = row[0] else { continue }
                var values: [String: String] = [:]
                for (index, column) in columns.enumerated() { if case .text(let text) = row[index + 1] { values[column] = text } }
                let id = RowID(table: table, key: keyText)
                states[id, default: RowState(cl: 0)].values = values
                states[id, default: RowState(cl: 0)].inTable = true
            }
        }
        return states
    }

    /// The rows each account sees on the server: those whose root it owns or that is shared with it.
    static func visible(_ db: Database, account: String) throws -> Set<RowID> {
        struct Visible: Decodable { var tbl: String; var row_key: String }
        return Set(try db.fetchAll(Visible.self, """
            SELECT r."tbl", r."row_key" FROM "depot_sync_server_rows" r
            WHERE r."account" = \(account) OR EXISTS (SELECT 1 FROM "depot_sync_server_shares" s
                  WHERE s."account" = \(account) AND s."root_tbl" = r."root_tbl" AND s."root_key" = r."root_key")
            """).map { RowID(table: $0.tbl, key: $0.row_key) })
    }
}

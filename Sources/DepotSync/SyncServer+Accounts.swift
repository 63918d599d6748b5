@_spi(Sync) import Depot
import Foundation

/// A push the server refuses whole because it names what its account may
/// not write: a row of another account, or another account's device. Nothing
/// of it is applied.
public struct SyncAccessDenied: Error, CustomStringConvertible, Sendable {
    /// What was refused, without values.
    public var description: String
}

/// Where a row lives on the server: the account owning its root row (a list
/// and everything in it), the root, and the key of the row's scope parent
/// (its first ``SyncParent``; empty for a root).
struct SyncScope: Hashable, Sendable {
    var account: String
    var rootTable: String
    var rootKey: String
    var parent: String

    /// The root's table and key, compared byte for byte.
    var root: ExactText { ExactText(rootTable + "\u{0}" + rootKey) }

    static func == (lhs: SyncScope, rhs: SyncScope) -> Bool {
        ExactText(lhs.account) == ExactText(rhs.account) && lhs.root == rhs.root && ExactText(lhs.parent) == ExactText(rhs.parent)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(ExactText(account))
        hasher.combine(root)
        hasher.combine(ExactText(parent))
    }
}

/// The server's tables for accounts: who a root is shared with, and what
/// each account was made to forget.
enum SyncAccountTables {
    static let shares = "depot_sync_server_shares", evictions = "depot_sync_server_evictions"
}

extension SyncServer {
    /// Shares a root row (a row of a table without parents: a list) and
    /// every row in it with another account: from the next pull, its devices
    /// get them, and may change them.
    ///
    /// - Throws: ``SyncAccessDenied`` when `owner` does not own the root row
    ///   (or the server has no such row); `misuse` for a table with parents.
    public func share(_ table: String, key: String, owner: String, with account: String) async throws {
        try await changeShare(table, key: key, owner: owner, account: account, shared: true)
    }

    /// Stops sharing a root row with an account: its devices forget the row
    /// and every row in it at their next pull (nothing is deleted for the
    /// owner), and what they push to it afterwards is dropped.
    ///
    /// - Throws: ``SyncAccessDenied`` when `owner` does not own the root row.
    public func unshare(_ table: String, key: String, owner: String, with account: String) async throws {
        try await changeShare(table, key: key, owner: owner, account: account, shared: false)
    }

    /// The accounts each of `owner`'s roots is shared with, by root key.
    public func shares(of owner: String, in table: String) async throws -> [String: [String]] {
        struct Share: Decodable { var root_key: String; var account: String }
        let rows = try await store.read { db in
            try db.fetchAll(Share.self, """
                SELECT s."root_key", s."account" FROM \(ident: SyncAccountTables.shares) s
                JOIN \(ident: SyncStateTables.server.rows) r ON r."tbl" = s."root_tbl" AND r."row_key" = s."root_key"
                WHERE s."root_tbl" = \(table) AND r."account" = \(owner) ORDER BY s."root_key", s."account"
                """)
        }
        return Dictionary(grouping: rows, by: \.root_key).mapValues { $0.map(\.account) }
    }

    private func changeShare(_ table: String, key: String, owner: String, account: String, shared: Bool) async throws {
        guard let synced = tables.first(where: { $0.name == table }), synced.parents.isEmpty else {
            throw DatabaseError(.misuse, "only rows of a synced table without parents can be shared; \(table) is not one")
        }
        try await store.write { db in
            try Self.planForEachPage(db)
            let version = try Self.nextVersion(db).version
            let scope = try Self.scopes(db, table, keys: [key])[ExactText(key)]
            guard let scope, scope.account == owner, scope.rootTable == table, scope.rootKey == key else {
                throw SyncAccessDenied(description: "the account does not own a \(table) row with this key")
            }
            guard account != owner else { return }
            if shared {
                try db.insert(into: SyncAccountTables.shares, columns: ["root_tbl", "root_key", "account"], "VALUES (\(table), \(key), \(account))",
                              onConflict: .doNothing(["root_tbl", "root_key", "account"]))
                // Every row in the root is news to the new account's devices.
                try db.execute("UPDATE \(ident: SyncStateTables.server.rows) SET \"version\" = \(version) WHERE \"root_tbl\" = \(table) AND \"root_key\" = \(key)")
            } else {
                try db.execute("""
                    DELETE FROM \(ident: SyncAccountTables.shares) WHERE "root_tbl" = \(table) AND "root_key" = \(key) AND "account" = \(account)
                    """)
                try db.insert(into: SyncAccountTables.evictions, columns: ["account", "version", "tbl", "row_key"], """
                    SELECT \(account), \(version), "tbl", "row_key" FROM \(ident: SyncStateTables.server.rows)
                    WHERE "root_tbl" = \(table) AND "root_key" = \(key)
                    """, onConflict: .doNothing(["account", "version", "tbl", "row_key"]))
            }
        }
    }

    /// Whether the server's tables have accounts: installed by this version,
    /// or brought up to it by ``addAccounts(in:account:)``.
    public static func hasAccounts(in db: Database) throws -> Bool {
        (try? db.savepoint { db in try db.fetchOne(Int64.self, "SELECT count(*) FROM \(ident: SyncAccountTables.shares)") }) != nil
    }

    /// Brings the tables of a server installed before accounts existed up to
    /// date, in a migration: every row it holds belongs to the account
    /// `account` (the one everyone used: empty).
    public static func addAccounts(in db: Database, account: String = "") throws {
        let names = SyncStateTables.server
        for column in ["account", "root_tbl", "root_key", "parent"] {
            let type: SQL = column == "root_tbl" ? SyncServer.nameType : "\(keyType: .text)"
            try db.execute("ALTER TABLE \(ident: names.rows) ADD COLUMN \(ident: column) \(type) NOT NULL DEFAULT ''")
        }
        try db.execute("ALTER TABLE \(ident: clients) ADD COLUMN \"account\" \(keyType: .text) NOT NULL DEFAULT ''")
        try db.execute("UPDATE \(ident: names.rows) SET \"account\" = \(account), \"root_tbl\" = \"tbl\", \"root_key\" = \"row_key\"")
        try db.execute("UPDATE \(ident: clients) SET \"account\" = \(account)")
        try createAccountTables(in: db)
    }

    /// The tables and indexes of accounts.
    static func createAccountTables(in db: Database) throws {
        let names = SyncStateTables.server
        try db.execute("CREATE INDEX \(ident: names.rows + "_root") ON \(ident: names.rows) (\"root_tbl\", \"root_key\")")
        try db.execute("CREATE INDEX \(ident: names.rows + "_parent") ON \(ident: names.rows) (\"parent\", \"tbl\")")
        try db.execute("""
            CREATE TABLE \(ident: SyncAccountTables.shares) ("root_tbl" \(SyncServer.nameType) NOT NULL, "root_key" \(keyType: .text) NOT NULL,
                "account" \(keyType: .text) NOT NULL, PRIMARY KEY ("root_tbl", "root_key", "account"))
            """)
        try db.execute("CREATE INDEX \(ident: SyncAccountTables.shares + "_account") ON \(ident: SyncAccountTables.shares) (\"account\")")
        try db.execute("""
            CREATE TABLE \(ident: SyncAccountTables.evictions) ("account" \(keyType: .text) NOT NULL, "version" \(type: .integer) NOT NULL,
                "tbl" \(SyncServer.nameType) NOT NULL, "row_key" \(keyType: .text) NOT NULL, PRIMARY KEY ("account", "version", "tbl", "row_key"))
            """)
    }

    /// Takes the next version: the counter row's lock orders writers, so versions follow commits.
    static func nextVersion(_ db: Database) throws -> (version: Int64, node: UUID, hlc: Int64) {
        struct Head: Decodable { var version: Int64; var node: String; var hlc: Int64 }
        // An UPDATE, then a read of what it wrote (no RETURNING: not every engine has it on an UPDATE).
        try db.execute("UPDATE \(ident: state) SET \"version\" = \"version\" + 1 WHERE \"id\" = 1")
        guard let head = try db.fetchOne(Head.self, "SELECT \"version\", \"node\", \"hlc\" FROM \(ident: state) WHERE \"id\" = 1"),
              let node = UUID(uuidString: head.node) else {
            throw DatabaseError(.misuse, "the sync server's tables are missing: run SyncServer.installSyncServer(in:) in a migration")
        }
        return (head.version, node, head.hlc)
    }

    /// The recorded scopes of these rows, by key.
    static func scopes(_ db: Database, _ table: String, keys: [String]) throws -> [ExactText: SyncScope] {
        struct Row: Decodable { var row_key: String; var account: String; var root_tbl: String; var root_key: String; var parent: String }
        var scopes: [ExactText: SyncScope] = [:]
        for chunk in SyncKey.chunks(keys.exactlyDistinct()) {
            for row in try db.fetchAll(Row.self, """
                SELECT "row_key", "account", "root_tbl", "root_key", "parent" FROM \(ident: SyncStateTables.server.rows)
                WHERE "tbl" = \(table) AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                """) {
                scopes[ExactText(row.row_key)] = SyncScope(account: row.account, rootTable: row.root_tbl, rootKey: row.root_key, parent: row.parent)
            }
        }
        return scopes
    }

    /// The accounts that see a root: its owner and those it is shared with.
    static func readers(_ db: Database, of scope: SyncScope) throws -> Set<String> {
        let shared = try db.fetchAll(String.self, """
            SELECT "account" FROM \(ident: SyncAccountTables.shares) WHERE "root_tbl" = \(scope.rootTable) AND "root_key" = \(scope.rootKey)
            """)
        return Set(shared).union([scope.account])
    }

    /// Whether `account` was made to forget this row or its root: a change
    /// it pushes there is one its device made before it heard, dropped, not an attack.
    static func wasEvicted(_ db: Database, account: String, table: String, key: String, scopes: [SyncScope],
                           parents: [(table: String, key: String)] = []) throws -> Bool {
        var places: [SQL] = ["(\"tbl\" = \(table) AND \"row_key\" = \(key))"]
        for scope in scopes { places.append("(\"tbl\" = \(scope.rootTable) AND \"row_key\" = \(scope.rootKey))") }
        // A row made under a parent the account was made to forget (a label on a reminder moved
        // out of a list shared with it, made before the device heard): the parent's eviction counts.
        for parent in parents where !parent.key.isEmpty { places.append("(\"tbl\" = \(parent.table) AND \"row_key\" = \(parent.key))") }
        return try db.fetchOne(Int.self, """
            SELECT count(*) FROM (SELECT 1 FROM \(ident: SyncAccountTables.evictions) WHERE "account" = \(account)
            AND (\(SQL.join(places, separator: " OR "))) LIMIT 1) AS "any"
            """) ?? 0 > 0
    }

    /// Records where rows now live. A row that moved to another root takes
    /// the rows in it along (a reminder's tag links), their version bumped so
    /// the accounts that see the new root get them; the accounts that saw the
    /// old root and not the new one are made to forget them all.
    static func moveScopes(_ db: Database, _ moves: [(table: SyncedTable, key: String, from: SyncScope?, to: SyncScope)],
                           among tables: [SyncedTable], version: Int64) throws {
        let groups = Dictionary(grouping: moves) { $0.to }
        for (scope, group) in groups.sorted(by: { ($0.key.root, ExactText($0.key.parent)) < ($1.key.root, ExactText($1.key.parent)) }) {
            for table in Set(group.map(\.table.name)).sorted() {
                let keys = group.filter { $0.table.name == table }.map(\.key)
                for chunk in SyncKey.chunks(keys) {
                    try db.execute("""
                        UPDATE \(ident: SyncStateTables.server.rows) SET "account" = \(scope.account), "root_tbl" = \(scope.rootTable),
                            "root_key" = \(scope.rootKey), "parent" = \(scope.parent)
                        WHERE "tbl" = \(table) AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                        """)
                }
            }
        }
        for move in moves {
            guard let from = move.from, from.root != move.to.root || from.account != move.to.account else { continue }
            let lost = try readers(db, of: from).subtracting(try readers(db, of: move.to))
            try carry(db, move.table, key: move.key, to: move.to, losing: lost, among: tables, version: version)
        }
    }

    /// The rows in a moved row follow it, recursively; the accounts that lost it forget it and them.
    private static func carry(_ db: Database, _ table: SyncedTable, key: String, to scope: SyncScope, losing lost: Set<String>,
                              among tables: [SyncedTable], version: Int64) throws {
        for account in lost.sorted() {
            try db.insert(into: SyncAccountTables.evictions, columns: ["account", "version", "tbl", "row_key"],
                          "VALUES (\(account), \(version), \(table.name), \(key))", onConflict: .doNothing(["account", "version", "tbl", "row_key"]))
        }
        for child in tables where child.parents.first?.table == table.name {
            let keys = try db.fetchAll(String.self, """
                SELECT "row_key" FROM \(ident: SyncStateTables.server.rows) WHERE "tbl" = \(child.name) AND "parent" = \(key)
                """)
            guard !keys.isEmpty else { continue }
            for chunk in SyncKey.chunks(keys) {
                try db.execute("""
                    UPDATE \(ident: SyncStateTables.server.rows) SET "account" = \(scope.account), "root_tbl" = \(scope.rootTable),
                        "root_key" = \(scope.rootKey), "version" = \(version)
                    WHERE "tbl" = \(child.name) AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                    """)
            }
            for childKey in keys {
                try carry(db, child, key: childKey, to: SyncScope(account: scope.account, rootTable: scope.rootTable, rootKey: scope.rootKey, parent: key),
                          losing: lost, among: tables, version: version)
            }
        }
    }
}

extension SyncServer {
    /// The roots shared with an account.
    static func sharedRoots(_ db: Database, with account: String) throws -> Set<ExactText> {
        struct Root: Decodable { var root_tbl: String; var root_key: String }
        let roots = try db.fetchAll(Root.self, "SELECT \"root_tbl\", \"root_key\" FROM \(ident: SyncAccountTables.shares) WHERE \"account\" = \(account)")
        return Set(roots.map { ExactText($0.root_tbl + "\u{0}" + $0.root_key) })
    }

    /// What one push may write: each row's place before and after it, checked
    /// against what the account sees, table by table, parents first.
    struct AccessCheck {
        let account: String
        let shared: Set<ExactText>
        /// The places of the rows this push wrote so far, by table and key.
        var placed: [ExactText: SyncScope] = [:]
        /// How many changes were dropped.
        var dropped = 0
        /// Whether the server has compacted its log: the records that would
        /// show a change honest (an eviction, a tombstone) may be forgotten,
        /// and a device may push a row it made in a root unshared since, long
        /// after it heard of the unshare (the row was never on the server, so
        /// the device kept it). What the account may not write is then
        /// dropped, never refused; nothing of it is written either way.
        let compacted: Bool

        init(account: String, shared: Set<ExactText>, compacted: Bool = false) {
            self.account = account
            self.shared = shared
            self.compacted = compacted
        }

        func sees(_ scope: SyncScope) -> Bool { ExactText(scope.account) == ExactText(account) || shared.contains(scope.root) }

        /// The rows that moved (or are new), and the keys of the changes dropped.
        ///
        /// A change to a row the account may not write is refused (the push
        /// is an attack) unless a device of the account could have made it
        /// honestly: the account was made to forget the row or its root, or
        /// the row is deleted on the server (`deadOnServer`: another account
        /// made and deleted a row under the same key, as two accounts labelling
        /// one shared item alike do). Those are dropped and told.
        mutating func check(_ db: Database, _ rows: [(key: String, row: SyncRow)], of table: SyncedTable,
                            deadOnServer: Set<ExactText> = []) throws
            -> (moves: [(key: String, from: SyncScope?, to: SyncScope)], dropped: Set<ExactText>) {
            let existing = try SyncServer.scopes(db, table.name, keys: rows.map(\.key))
            let scopeParent = table.parents.first
            func parentKey(_ row: SyncRow) -> String? {
                guard let scopeParent, let value = row.registers[scopeParent.column]?.value, value != .null else { return nil }
                return SyncKey.text(value)
            }
            var parents: [ExactText: SyncScope] = [:]
            if let scopeParent {
                let named = rows.compactMap { parentKey($0.row) }.exactlyDistinct()
                func place(_ key: String) -> ExactText { ExactText(scopeParent.table + "\u{0}" + key) }
                let stored = try SyncServer.scopes(db, scopeParent.table, keys: named.filter { placed[place($0)] == nil })
                for key in named { parents[ExactText(key)] = placed[place(key)] ?? stored[ExactText(key)] }
            }
            var moves: [(key: String, from: SyncScope?, to: SyncScope)] = [], refused = Set<ExactText>()
            for (key, row) in rows {
                let from = existing[ExactText(key)]
                let to: SyncScope
                if !row.exists, let from {
                    // A deleted row stays where it was (its values went with it).
                    to = from
                } else if let scopeParent, let parentKey = parentKey(row) {
                    if let parent = parents[ExactText(parentKey)] {
                        to = SyncScope(account: parent.account, rootTable: parent.rootTable, rootKey: parent.rootKey, parent: parentKey)
                    } else if compacted {
                        // A parent the server does not have, nor this push: deleted and forgotten (compaction).
                        // A row already under it stays where it was; one new there, or moved there, is dropped:
                        // whose root the key was is forgotten, and another account may make a row under it.
                        guard let from, ExactText(from.parent) == ExactText(parentKey) else {
                            refused.insert(ExactText(key))
                            dropped += 1
                            continue
                        }
                        to = from
                    } else {
                        // A parent the server has not seen yet is a root of the account's own.
                        to = SyncScope(account: account, rootTable: scopeParent.table, rootKey: parentKey, parent: parentKey)
                    }
                } else {
                    to = SyncScope(account: from?.account ?? account, rootTable: table.name, rootKey: key, parent: "")
                }
                guard (from.map(sees) ?? true) && sees(to) else {
                    let parentRows = scopeParent.map { parent in
                        [parentKey(row), from?.parent].compactMap { $0 }.map { (table: parent.table, key: $0) }
                    } ?? []
                    guard try compacted || deadOnServer.contains(ExactText(key))
                            || SyncServer.wasEvicted(db, account: account, table: table.name, key: key, scopes: [from, to].compactMap { $0 },
                                                     parents: parentRows) else {
                        throw SyncAccessDenied(description: "the push writes a \(table.name) row the account may not write")
                    }
                    refused.insert(ExactText(key))
                    dropped += 1
                    continue
                }
                placed[ExactText(table.name + "\u{0}" + key)] = to
                if from != to { moves.append((key, from, to)) }
            }
            return (moves, refused)
        }
    }
}

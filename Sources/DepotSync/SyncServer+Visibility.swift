@_spi(Sync) import Depot
import Foundation

extension SyncServer {
    /// The keys of a table's rows an account sees, as its devices pull them:
    /// the rows of its own roots and of the roots shared with it. For a page
    /// the server renders itself (a web app), which must show no more than a
    /// device of the account would hold.
    ///
    /// ```swift
    /// let lists = try await server.visibleKeys(of: "remindersLists", to: account)
    /// ```
    ///
    /// Keys are in the text form ``SyncChange/key`` has (a UUID in lowercase),
    /// in code-point order.
    public func visibleKeys(of table: String, to account: String) async throws -> [String] {
        try await store.read { db in try Self.visibleKeys(db, of: table, to: account) }
    }

    /// Whether the account sees the row with this key (its key's text).
    ///
    /// Caveat: a row an account cannot see and a row that does not exist
    /// answer alike, so that a caller can answer both with one 404.
    public func isVisible(_ table: String, key: String, to account: String) async throws -> Bool {
        try await store.read { db in try Self.isVisible(db, table, key: key, to: account) }
    }

    /// Makes what the server records of rows and shares observable, so that
    /// an observation reading ``visibleKeys(_:of:to:)`` (a live page of an
    /// account's lists) wakes on a push, an edit, a share and an unshare, on
    /// every engine. Run it in a migration, or at start: it may run again.
    ///
    /// ```swift
    /// try await store.write { db in try SyncServer.enableObservation(in: db) }
    /// let lists = store.observe { db in try SyncServer.visibleKeys(db, of: "remindersLists", to: account) }
    /// ```
    ///
    /// Caveat: on PostgreSQL each statement of a push that writes them then
    /// notifies listeners too; a server with no observer of them needs none of it.
    public static func enableObservation(in db: Database) throws {
        try db.enableObservation(of: [SyncStateTables.server.rows, SyncAccountTables.shares])
    }

    /// ``visibleKeys(of:to:)`` inside an access the caller holds (a page's
    /// reads in one transaction).
    public static func visibleKeys(_ db: Database, of table: String, to account: String) throws -> [String] {
        try db.fetchAll(String.self, """
            SELECT r."row_key" FROM \(ident: SyncStateTables.server.rows) r
            WHERE r."tbl" = \(table) AND r."cl" % 2 = 1 AND (r."account" = \(account) OR EXISTS (
                SELECT 1 FROM \(ident: SyncAccountTables.shares) s
                WHERE s."account" = \(account) AND s."root_tbl" = r."root_tbl" AND s."root_key" = r."root_key"))
            """).sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }
    }

    /// ``isVisible(_:key:to:)`` inside an access the caller holds.
    public static func isVisible(_ db: Database, _ table: String, key: String, to account: String) throws -> Bool {
        try db.fetchOne(Int.self, """
            SELECT count(*) FROM \(ident: SyncStateTables.server.rows) r
            WHERE r."tbl" = \(table) AND r."row_key" = \(key) AND r."cl" % 2 = 1 AND (r."account" = \(account) OR EXISTS (
                SELECT 1 FROM \(ident: SyncAccountTables.shares) s
                WHERE s."account" = \(account) AND s."root_tbl" = r."root_tbl" AND s."root_key" = r."root_key"))
            """) ?? 0 > 0
    }
}

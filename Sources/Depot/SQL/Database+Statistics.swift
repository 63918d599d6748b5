extension Database {
    /// Refreshes the query planner's statistics of these tables: after a
    /// bulk import or any work that grew or changed them a lot, so that the
    /// next statements are planned for what the tables hold now.
    ///
    /// ```swift
    /// try await store.write { db in
    ///     try db.insert(contentsOf: imported)
    ///     try db.refreshStatistics(of: ["reminders"])
    /// }
    /// ```
    ///
    /// On PostgreSQL it runs `ANALYZE` (which autovacuum also runs, but only
    /// a minute or so after a table grew: until then, a lookup by a list of
    /// keys may read the whole table); on an engine that plans without
    /// collected statistics, or keeps them current itself (SQLite as Depot
    /// opens it, MariaDB's InnoDB), it does nothing.
    ///
    /// - Important: it reads a sample of each table, in the caller's
    ///   transaction: a few hundred milliseconds for a large table. Call it
    ///   after large changes, not after each small one.
    public func refreshStatistics(of tables: [String]) throws {
        for statement in dialect.refreshStatistics(of: tables.map { dialect.quote(identifier: $0) }) {
            try execute(SQL(unsafeRaw: statement))
        }
    }
}

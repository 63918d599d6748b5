import Depot
import Foundation

extension Database {
    /// This database's side of sync: making it a replica of synced tables,
    /// the changes it keeps for the server, and merging the server's.
    ///
    /// ```swift
    /// try await store.write { db in
    ///     try db.sync.installReplica(of: [lists, reminders])
    /// }
    /// let waiting = try await store.read { db in try db.sync.pendingChangeCount() }
    /// ```
    ///
    /// Caveat: like the `Database` it comes from, it is valid only inside
    /// the access that gave it.
    public var sync: Sync { Sync(db: self) }

    /// A database's side of sync, from ``Database/sync``.
    public struct Sync {
        let db: Database

        /// Makes this embedded database a sync replica of these tables, in a
        /// migration: the sync tables, and triggers that record every write to a
        /// synced table (raw SQL included) in the same transaction as the write:
        /// the row's existence, a stamp of the node's hybrid clock for each
        /// changed column, and an entry in the outbox. Rows already stored are
        /// recorded as written now, so a first sync sends them.
        ///
        /// List parents before their children.
        ///
        /// - Throws: `misuse` on an engine whose dialect writes no capture
        ///   (``ChangeCapturingDialect``: SQLite's does; a server records what
        ///   it applies itself, without triggers), and for a table that
        ///   breaks a rule of sync: an integer key, a unique constraint besides
        ///   the key, a foreign key to a synced table not declared as a parent.
        public func installReplica(of tables: [SyncedTable], node: UUID = UUID()) throws {
            try db.installSyncReplica(of: tables, node: node)
        }

        /// Brings a replica's capture up to date with its synced tables, in the
        /// migration that added a synced table or a column: the triggers are made
        /// again, a new table's stored rows are recorded as written now.
        ///
        /// - Throws: `misuse` for a table that breaks a rule of sync, and for a
        ///   column added to a synced table that is `NOT NULL` without a default:
        ///   a row from a device that does not know the column yet could not be stored.
        public func updateReplica(of tables: [SyncedTable]) throws {
            try db.updateSyncReplica(of: tables)
        }

        /// Checks that the replica captures these tables as they are declared:
        /// run before each sync, so a table or a column added without
        /// ``updateReplica(of:)`` is an error that says so, not a change lost.
        public func checkReplica(of tables: [SyncedTable]) throws {
            try db.checkSyncReplica(of: tables)
        }

        /// Whether this database is a sync replica: ``installReplica(of:node:)`` ran.
        public func isReplica() throws -> Bool {
            try db.isSyncReplica()
        }

        /// This replica's node id.
        public func node() throws -> UUID {
            try db.syncNode()
        }

        /// The changes waiting to be pushed: the rows of the oldest `limit` outbox
        /// entries, each row's whole state now, and the outbox position they
        /// reach: pass it to ``acknowledgeChanges(upTo:)`` once the server has them.
        /// Every entry up to that position is one of these rows; a row written
        /// again later keeps its later entries and goes again.
        public func pendingChanges(_ tables: [SyncedTable], limit: Int = 500, upTo fixed: Int64? = nil) throws -> (changes: [SyncChange], upTo: Int64) {
            try db.pendingSyncChanges(tables, limit: limit, upTo: fixed)
        }

        /// The state of every row this replica knows, deleted ones included: what
        /// a new replica starts from.
        public func allChanges(_ tables: [SyncedTable]) throws -> [SyncChange] {
            try db.allSyncChanges(tables)
        }

        /// How many rows have changes waiting to be pushed.
        public func pendingChangeCount() throws -> Int {
            try db.pendingSyncChangeCount()
        }

        /// Removes the outbox entries up to a position the server acknowledged.
        public func acknowledgeChanges(upTo position: Int64) throws {
            try db.acknowledgeSyncChanges(upTo: position)
        }

        /// Merges changes from elsewhere into this replica in one go: each row's
        /// state merged with the local one, the synced tables written to match,
        /// without recording these writes as local ones; the node's clock moves
        /// past every stamp received, but never further than `maximumDrift`
        /// ahead of this device's wall clock (a stamp far in the future, from a
        /// server that took it before it bounded stamps, does not drag every
        /// later local write along, nor overflow the clock).
        ///
        /// - Returns: the rows whose changes made here and not yet pushed were
        ///   forgotten with them (their root left what the account sees): the
        ///   server would drop them, and a person is to hear of it.
        @discardableResult
        public func applyChanges(_ changes: [SyncChange], _ tables: [SyncedTable], maximumDrift: Duration = .seconds(300)) throws -> [SyncRowID] {
            try db.applySyncChanges(changes, tables, maximumDrift: maximumDrift)
        }
    }
}

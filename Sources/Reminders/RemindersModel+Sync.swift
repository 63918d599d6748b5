import Depot
import DepotSync
import Foundation

/// Sync: the same lists, reminders and tags on every device and on a server.
///
/// Rules (DepotSync's, with the model's choices):
/// - Per column, the later edit wins (hybrid clocks); a delete wins over an
///   edit made without having seen it; a deleted row comes back only when
///   written again under its key.
/// - A reminder belongs to its list: a reminder added on one device to a list
///   deleted on another is kept aside by sync, in no list, and comes back if
///   the list does. The same for a tag link whose reminder or tag is gone.
/// - A tag's key is made from its folded title: "#Errand" made on two devices
///   offline is one tag. A link is keyed by its reminder and tag: tagging the
///   same reminder with the same tag on two devices is one link.
/// - Two lists titled alike made offline both stay; numbers tell them apart.
/// - Numbers are each store's own: a reminder numbered 7 here may be 12 on
///   another device.
extension RemindersModel {
    /// The model's synced tables, parents before children.
    public static func syncedTables() throws -> [SyncedTable] {
        [
            try SyncedTable(RemindersList.self, localColumns: ["number"]),
            try SyncedTable(Reminder.self, parents: [SyncParent("remindersListID", RemindersList.self)], localColumns: ["number"]),
            try SyncedTable(Tag.self),
            try SyncedTable(ReminderTag.self, parents: [SyncParent("reminderID", Reminder.self), SyncParent("tagID", Tag.self)]),
            try SyncedTable(ListCoverImage.self, parents: [SyncParent("remindersListID", RemindersList.self)]),
        ]
    }

    /// Makes this store sync: on an embedded engine that records its writes
    /// (SQLite), a replica whose writes are recorded from now on (what it
    /// holds already is sent at the first sync); on a server's engine
    /// (PostgreSQL, MariaDB), a sync server. Doing it again changes nothing.
    public func enableSync() async throws {
        let tables = try Self.syncedTables()
        try await store.write(logger: logger) { db in
            if !db.dialect.capturesChanges {
                if try !SyncServer.isInstalled(in: db) { try SyncServer.installSyncServer(in: db) }
                else { try SyncServer.updateSyncServer(in: db) }
            } else if try !db.sync.isReplica() {
                try db.sync.installReplica(of: tables)
            }
        }
    }

    /// A client that syncs this store (a replica: ``enableSync()``) through `transport`.
    public func syncClient(transport: any SyncTransport) throws -> SyncClient {
        var client = SyncClient(store: store, tables: try Self.syncedTables(), transport: transport)
        client.afterApplying = { db, changes in try Self.reindexAfterSync(db, changes) }
        return client
    }

    /// A sync server over this store (PostgreSQL, MariaDB, or any store: ``enableSync()``).
    public func syncServer(resolver: SyncResolver? = nil) throws -> SyncServer {
        var server = SyncServer(store: store, tables: try Self.syncedTables(), resolver: resolver)
        server.afterApplying = { db, changes in try Self.reindexAfterSync(db, changes) }
        return server
    }

    /// Keeps the search index in step with what a sync wrote: the reminders
    /// it changed, tagged or untagged, and those of lists it changed (a list
    /// coming back brings its reminders back); every reminder when a tag changed.
    static func reindexAfterSync(_ db: Database, _ changes: [SyncChange]) throws {
        if changes.contains(where: { $0.table == Tag.tableName }) {
            try reindexAll(db)
            return
        }
        var ids = Set<UUID>()
        var lists = Set<UUID>()
        for change in changes {
            switch change.table {
            case Reminder.tableName: UUID(uuidString: change.key).map { _ = ids.insert($0) }
            case ReminderTag.tableName:
                if let text = change.row.registers["reminderID"]?.value, case .uuid(let id) = text { ids.insert(id) }
                else if let first = change.key.split(separator: "|").first, let id = UUID(uuidString: String(first)) { ids.insert(id) }
            case RemindersList.tableName: UUID(uuidString: change.key).map { _ = lists.insert($0) }
            default: break
            }
        }
        for list in lists { ids.formUnion(try db.fetchAll(Reminder.where { $0.remindersListID.eq(list) }.select { $0.id })) }
        try reindex(db, Array(ids))
    }
}

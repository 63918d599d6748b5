import Depot
import Foundation

/// The account this database syncs with, and the namespace of its tag keys:
/// one row, in the `syncAccount` table (migration 10).
///
/// A tag's key is made from its title in the namespace of the account its
/// database syncs with, so one account's devices make one key for "#Errand"
/// and two accounts never share a tag. A database that never signed in uses
/// the model's own namespace; signing in re-keys its tags once.
///
/// Caveat: the token is kept in the database file in the clear, as a
/// command-line tool without a keychain keeps it: whoever reads the file can
/// sync as this device until it is signed out (``RemindersModel/signOut()``
/// here, or from another device).
@Columns
public struct SyncAccount: Record, Equatable, CustomStringConvertible, CustomReflectable {
    public static let tableName = "syncAccount"
    /// Always 1: one account per database.
    public var id: Int64
    /// The namespace of tag keys: the account's id once signed in.
    public var tagNamespace: UUID
    /// The sync endpoints' base URL (`http://host:port/sync`).
    public var server: String?
    /// The account's name.
    public var accountName: String?
    /// The account's id on the server.
    public var accountID: UUID?
    /// This device's id on the server.
    public var device: UUID?
    /// The device's bearer token; nil once signed out.
    public var token: String?
    /// When the last sync finished.
    public var lastSync: Date?

    /// Whether the device holds a token.
    public var isSignedIn: Bool { token != nil }

    /// The account without its token.
    public var description: String {
        "SyncAccount(server: \(server ?? "none"), account: \(accountName ?? "none"), signed in: \(isSignedIn))"
    }

    /// What `dump` and debuggers show: everything but the token.
    public var customMirror: Mirror {
        Mirror(self, children: ["server": server as Any, "accountName": accountName as Any, "accountID": accountID as Any,
                                "device": device as Any, "isSignedIn": isSignedIn, "lastSync": lastSync as Any])
    }
}

extension RemindersSchema {
    static func createSyncAccount(_ db: Database) throws {
        try db.execute("""
            CREATE TABLE "syncAccount" ("id" \(type: .integer) PRIMARY KEY CHECK ("id" = 1), "tagNamespace" \(type: .uuid) NOT NULL,
                "server" \(type: .text), "accountName" \(type: .text), "accountID" \(type: .uuid), "device" \(type: .uuid),
                "token" \(type: .text), "lastSync" \(type: .date))\(unsafeRaw: db.dialect.typeCheckedTableOption)
            """)
        try db.execute("INSERT INTO \"syncAccount\" (\"id\", \"tagNamespace\") VALUES (1, \(Tag.modelNamespace))")
    }
}

extension RemindersModel {
    /// The account this database syncs with.
    public func syncAccount() async throws -> SyncAccount {
        try await store.read(logger: logger) { db in try Self.syncAccount(db) }
    }

    static func syncAccount(_ db: Database) throws -> SyncAccount {
        guard let account = try db.find(SyncAccount.self, id: 1) else {
            throw RemindersError.invalidInput("this database has no sync account row; run the migrations")
        }
        return account
    }

    /// The namespace of this database's tag keys.
    static func tagNamespace(_ db: Database) throws -> UUID {
        try syncAccount(db).tagNamespace
    }

    /// Records a sign-in: the server, the account, this device and its token.
    /// The first sign-in to an account re-keys the tags in its namespace (a
    /// tag's links follow it), so they meet the same tags made on the
    /// account's other devices.
    ///
    /// - Throws: `conflict` when the database syncs with another account: a
    ///   database holds one account's reminders.
    public func signIn(server: String, accountName: String, accountID: UUID, device: UUID, token: String) async throws {
        try await store.write(logger: logger) { db in
            var account = try Self.syncAccount(db)
            if let known = account.accountID, known != accountID {
                throw RemindersError.conflict("this database syncs with the account \"\(account.accountName ?? "")\"; use another database for another account")
            }
            if account.tagNamespace != accountID {
                try Self.rekeyTags(db, namespace: accountID)
                account.tagNamespace = accountID
            }
            account.server = server
            account.accountName = accountName
            account.accountID = accountID
            account.device = device
            account.token = token
            try db.update(account)
        }
    }

    /// Forgets the device's token; the account, its tags' keys and every
    /// reminder stay. Signing in again to the same account goes on syncing.
    public func signOut() async throws {
        try await store.write(logger: logger) { db in
            var account = try Self.syncAccount(db)
            account.token = nil
            try db.update(account)
        }
    }

    /// Records that a sync finished now.
    public func recordSync(at date: Date) async throws {
        try await store.write(logger: logger) { db in
            var account = try Self.syncAccount(db)
            account.lastSync = date
            try db.update(account)
        }
    }

    /// Gives every tag the key its title has in `namespace`; links follow.
    static func rekeyTags(_ db: Database, namespace: UUID) throws {
        let tags = try db.fetchAll(Tag.all.order { $0.title.ascending() })
        var touched = false
        for tag in tags {
            let key = Tag.id(forTitle: tag.title, namespace: namespace)
            guard key != tag.id else { continue }
            touched = true
            if try db.find(Tag.self, id: key) == nil { try db.insert(Tag(id: key, title: tag.title)) }
            for reminderID in try reminderIDs(db, taggedWith: tag.id) {
                try db.upsert(ReminderTag(reminderID: reminderID, tagID: key))
            }
            try db.delete(tag)   // its links go with it (ON DELETE CASCADE)
        }
        if touched { try reindexAll(db) }
    }
}

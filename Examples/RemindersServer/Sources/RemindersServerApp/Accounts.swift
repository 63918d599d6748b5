import Depot
import Foundation
import Logging

/// The sync server's accounts, their signed-in devices and the recent wrong
/// passwords, in tables of the server's own (`syncAccounts`, `syncDevices`,
/// `syncSignInFailures`), created by its own migrator (history in
/// `remindersServerMigrations`) on SQLite, PostgreSQL and MariaDB. The
/// server keeps no account state in its process: any number of instances on
/// one database answer as one.
///
/// An account is a name and a password (stored as a bcrypt hash); each
/// sign-up or sign-in makes a device, whose bearer token is stored as its
/// SHA-256 only. Signing a device out, or removing it, deletes its row: its
/// token stops working at once. Ids are UUIDs in lowercase text: an
/// account's id is what ``SyncServer`` is told as the account.
struct SyncAccounts: Sendable {
    let store: Store
    /// Wrong passwords per name: past five in 15 minutes, sign-ins wait (429).
    var throttle: SignInThrottle

    init(store: Store, throttle: SignInThrottle? = nil) {
        self.store = store
        self.throttle = throttle ?? SignInThrottle(store: store)
    }

    /// The server's own migrations, apart from the model's.
    static var migrator: Migrator {
        var migrator = Migrator(tableName: "remindersServerMigrations")
        migrator.register("create syncAccounts and syncDevices", script: """
            CREATE TABLE "syncAccounts" (
                "id" \(keyType: .text) PRIMARY KEY NOT NULL,
                "name" \(keyType: .text) NOT NULL UNIQUE,
                "passwordHash" \(type: .text) NOT NULL,
                "createdAt" \(type: .date) NOT NULL
            );
            CREATE TABLE "syncDevices" (
                "id" \(keyType: .text) PRIMARY KEY NOT NULL,
                "accountID" \(keyType: .text) NOT NULL REFERENCES "syncAccounts" ("id") ON DELETE CASCADE,
                "tokenHash" \(keyType: .text) NOT NULL UNIQUE,
                "createdAt" \(type: .date) NOT NULL
            );
            CREATE INDEX "syncDevices_accountID" ON "syncDevices" ("accountID")
            """)
        migrator.register(SignInThrottle.migration.name, script: SignInThrottle.migration.script)
        return migrator
    }

    /// Creates the tables (once).
    func migrate() async throws {
        try await Self.migrator.migrate(store)
    }

    /// A new account and its first device, in one write.
    ///
    /// - Throws: 409 when the name is taken.
    func create(_ credentials: Credentials, logger: Logger) async throws -> SessionJSON {
        let name = credentials.name
        // A taken name is refused before the slow hash; the UNIQUE constraint settles a race.
        if try await account(named: name, logger: logger) != nil { throw Self.nameTaken(name) }
        let passwordHash = await Passwords.hash(credentials.password)
        let (account, device, token, now) = (Self.newID(), Self.newID(), BearerToken.random(), Date())
        do {
            try await store.write(logger: logger) { db in
                try db.execute("""
                    INSERT INTO "syncAccounts" ("id", "name", "passwordHash", "createdAt") VALUES (\(account), \(name), \(passwordHash), \(now))
                    """)
                try Self.insertDevice(db, id: device, account: account, token: token, at: now)
            }
        } catch let error as DatabaseError where error.kind == .unique {
            throw Self.nameTaken(name)
        }
        return SessionJSON(account: account, name: name, token: token.text, device: device)
    }

    /// A new device of the account whose name and password these are.
    ///
    /// - Throws: 401 `wrong name or password`, the same for a name no account has.
    func signIn(_ credentials: Credentials, logger: Logger) async throws -> SessionJSON {
        let failures = try await throttle.check(credentials.name, logger: logger)
        let found = try await account(named: credentials.name, logger: logger)
        // An unknown name costs the same bcrypt check as a wrong password.
        let matches = await Passwords.verify(credentials.password, hash: found?.passwordHash)
        guard let found, matches else {
            try await throttle.fail(credentials.name, logger: logger)
            throw Self.wrongPassword
        }
        if failures > 0 { try await throttle.succeed(credentials.name, logger: logger) }
        let (device, token) = (Self.newID(), BearerToken.random())
        do {
            try await store.write(logger: logger) { db in try Self.insertDevice(db, id: device, account: found.id, token: token, at: Date()) }
        } catch let error as DatabaseError where error.kind == .foreignKey {
            throw Self.wrongPassword   // the account was deleted meanwhile
        }
        return SessionJSON(account: found.id, name: credentials.name, token: token.text, device: device)
    }

    /// The device a token names, and its account.
    ///
    /// - Throws: 401 for a token no device holds (never issued, signed out, or its device removed).
    func caller(_ token: BearerToken, logger: Logger) async throws -> Caller {
        guard let found = try await holder(of: token, logger: logger) else {
            throw BearerToken.unauthorized("the token is not valid (signed out, or its device was removed); sign in again", cause: "unknown token")
        }
        return found
    }

    /// The device a token names, with its account and the account's name;
    /// nil for a token no device holds. The one lookup of a token, for the
    /// API's bearer tokens and the web app's session cookies alike.
    func holder(of token: BearerToken, logger: Logger) async throws -> Caller? {
        let hash = token.hash
        return try await store.read(logger: logger) { db in
            try db.fetchOne(Caller.self, """
                SELECT d."id" AS "device", d."accountID" AS "account", a."name" AS "name"
                FROM "syncDevices" d JOIN "syncAccounts" a ON a."id" = d."accountID" WHERE d."tokenHash" = \(hash)
                """)
        }
    }

    /// The account's devices, oldest first.
    func devices(of account: String, logger: Logger) async throws -> [DeviceRow] {
        try await store.read(logger: logger) { db in
            try db.fetchAll(DeviceRow.self, """
                SELECT "id", "createdAt" FROM "syncDevices" WHERE "accountID" = \(account) ORDER BY "createdAt", "id"
                """)
        }
    }

    /// Deletes a device of the account; false when the account has no such device.
    func deleteDevice(_ id: String, of account: String, logger: Logger) async throws -> Bool {
        try await store.write(logger: logger) { db in
            try db.execute("DELETE FROM \"syncDevices\" WHERE \"id\" = \(id) AND \"accountID\" = \(account)") > 0
        }
    }

    /// The account with this name (lowercase), if any.
    func account(named name: String, logger: Logger) async throws -> AccountRow? {
        try await store.read(logger: logger) { db in
            try db.fetchOne(AccountRow.self, "SELECT \"id\", \"passwordHash\" FROM \"syncAccounts\" WHERE \"name\" = \(name)")
        }
    }

    /// The names of these accounts, by id.
    func names(of ids: [String], logger: Logger) async throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        struct Row: Decodable { var id: String; var name: String }
        let rows = try await store.read(logger: logger) { db in
            try db.fetchAll(Row.self, "SELECT \"id\", \"name\" FROM \"syncAccounts\" WHERE \"id\" IN \(list: ids)")
        }
        return Dictionary(rows.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    static func insertDevice(_ db: Database, id: String, account: String, token: BearerToken, at date: Date) throws {
        try db.execute("""
            INSERT INTO "syncDevices" ("id", "accountID", "tokenHash", "createdAt") VALUES (\(id), \(account), \(token.hash), \(date))
            """)
    }

    static func newID() -> String { UUID().uuidString.lowercased() }

    static func nameTaken(_ name: String) -> ServerError {
        ServerError(status: .conflict, message: "the name \"\(name)\" is taken; choose another", cause: "name taken")
    }

    static let wrongPassword = ServerError(status: .unauthorized, message: "wrong name or password", cause: "wrong name or password")
}

/// Who sends an authenticated request: a device, and the account it belongs to.
struct Caller: Decodable, Sendable {
    /// The account's id (lowercase UUID): what the sync server is told.
    var account: String
    /// The device's id (lowercase UUID).
    var device: String
    /// The account's name, as shown.
    var name: String
}

/// An account as sign-in reads it.
struct AccountRow: Decodable, Sendable {
    var id: String
    var passwordHash: String
}

/// A device as `GET /sync/devices` lists it.
struct DeviceRow: Decodable, Sendable {
    var id: String
    var createdAt: Date
}

/// The answer to a sign-up or a sign-in: the account, and the new device with its token.
struct SessionJSON: Encodable, Sendable {
    var account: String
    var name: String
    var token: String
    var device: String
}

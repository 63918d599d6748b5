import Depot
import DepotSQLite
import DepotSync
import Foundation
import Testing
import TestSupport

@Columns
struct SyncFolder: Record, Equatable {
    static let tableName = "syncFolders"
    var id: UUID
    var title: String
}

@Columns
struct SyncItem: Record, Equatable {
    static let tableName = "syncItems"
    var id: UUID
    var folderID: UUID
    var title: String
}

@Columns
struct ColoredFolder: Record {
    static let tableName = "syncFolders"
    var id: UUID
    var title: String
    var color: String?
}

@Columns
struct SyncLabel: Record, Equatable {
    static let tableName = "syncLabels"
    static let primaryKey = ["itemID", "folderID"]
    var itemID: UUID
    var folderID: UUID
}

/// The rules for rows that belong to others: a row whose parent was deleted
/// elsewhere is kept aside and comes back with it; a link made on two devices
/// is one row; a resolver on the server settles a conflict for everyone; a
/// column added without telling the replica stops sync with an error.
@Suite struct SyncParentsTests {
    static let tables = [
        try! SyncedTable(SyncFolder.self),
        try! SyncedTable(SyncItem.self, parents: [SyncParent("folderID", SyncFolder.self)]),
        try! SyncedTable(SyncLabel.self, parents: [SyncParent("itemID", SyncItem.self), SyncParent("folderID", SyncFolder.self)]),
    ]

    static let schema: SQL = """
        CREATE TABLE "syncFolders" ("id" TEXT PRIMARY KEY, "title" TEXT NOT NULL);
        CREATE TABLE "syncItems" ("id" TEXT PRIMARY KEY, "folderID" TEXT NOT NULL REFERENCES "syncFolders" ("id") ON DELETE CASCADE,
            "title" TEXT NOT NULL);
        CREATE TABLE "syncLabels" ("itemID" TEXT NOT NULL REFERENCES "syncItems" ("id") ON DELETE CASCADE,
            "folderID" TEXT NOT NULL REFERENCES "syncFolders" ("id") ON DELETE CASCADE, PRIMARY KEY ("itemID", "folderID"))
        """

    struct System {
        var server: SyncServer
        var devices: [SyncClient]
    }

    static func system(_ folder: URL, resolver: SyncResolver? = nil) async throws -> System {
        let serverStore = try Store.sqlite(at: folder.appendingPathComponent("server.sqlite").path)
        try await serverStore.write { db in
            try db.execute(script: schema)
            try SyncServer.installSyncServer(in: db)
        }
        let server = SyncServer(store: serverStore, tables: tables, resolver: resolver)
        let transport = InProcessSyncTransport(server: server, seed: 1)
        var devices: [SyncClient] = []
        for name in ["a", "b"] {
            let store = try Store.sqlite(at: folder.appendingPathComponent(name + ".sqlite").path)
            try await store.write { db in
                try db.execute(script: schema)
                try db.sync.installReplica(of: tables)
            }
            devices.append(SyncClient(store: store, tables: tables, transport: transport))
        }
        return System(server: server, devices: devices)
    }

    static func items(_ store: Store) async throws -> [String] {
        try await store.read { db in try db.fetchAll(String.self, "SELECT \"title\" FROM \"syncItems\" ORDER BY \"title\"") }
    }

    @Test func aRowWhoseParentWasDeletedElsewhereIsKeptAsideAndComesBackWithIt() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let system = try await Self.system(folder)
        let (a, b) = (system.devices[0], system.devices[1])
        let groceries = SyncFolder(id: UUID(), title: "Groceries")
        try await a.store.write { db in try db.insert(groceries) }
        try await a.sync()
        try await b.sync()
        // Offline: b deletes the folder while a adds an item to it.
        try await b.store.write { db in _ = try db.delete(groceries) }
        try await a.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: groceries.id, title: "Milk")) }
        for device in [a, b, a] { try await device.sync() }
        for store in [a.store, b.store, system.server.store] {
            #expect(try await Self.items(store) == [], "the item of a deleted folder is in no table")
        }
        // The folder comes back (written again under its key): its item comes back with it, as it was.
        try await b.store.write { db in try db.insert(groceries) }
        for device in [b, a] { try await device.sync() }
        for store in [a.store, b.store, system.server.store] {
            #expect(try await Self.items(store) == ["Milk"], "kept aside, then back with its folder")
        }
    }

    @Test func aLinkMadeOnTwoDevicesIsOneRowAndAnUnlinkReachesBoth() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let system = try await Self.system(folder)
        let (a, b) = (system.devices[0], system.devices[1])
        let home = SyncFolder(id: UUID(), title: "Home"), paint = SyncItem(id: UUID(), folderID: UUID(), title: "Paint")
        let item = SyncItem(id: paint.id, folderID: home.id, title: "Paint")
        try await a.store.write { db in try db.insert(home); try db.insert(item) }
        try await a.sync()
        try await b.sync()
        for device in [a, b] {
            try await device.store.write { db in try db.insert(SyncLabel(itemID: item.id, folderID: home.id)) }
        }
        for device in [a, b, a] { try await device.sync() }
        let count: @Sendable (Database) throws -> Int = { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"syncLabels\"") ?? 0 }
        for store in [a.store, b.store, system.server.store] { #expect(try await store.read(count) == 1) }
        try await b.store.write { db in _ = try db.execute("DELETE FROM \"syncLabels\"") }
        for device in [b, a] { try await device.sync() }
        for store in [a.store, b.store, system.server.store] { #expect(try await store.read(count) == 0) }
    }

    @Test func aResolverOnTheServerSettlesAConflictForEveryDevice() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let system = try await Self.system(folder) { conflict in
            guard conflict.table == "syncFolders", case .text(let held)? = conflict.stored["title"],
                  case .text(let brought)? = conflict.incoming["title"] else { return [:] }
            return ["title": .text([held, brought].sorted().joined(separator: " / "))]
        }
        let (a, b) = (system.devices[0], system.devices[1])
        let shared = SyncFolder(id: UUID(), title: "Shared")
        try await a.store.write { db in try db.insert(shared) }
        try await a.sync()
        try await b.sync()
        try await a.store.write { db in try db.execute("UPDATE \"syncFolders\" SET \"title\" = 'Work'") }
        try await b.store.write { db in try db.execute("UPDATE \"syncFolders\" SET \"title\" = 'Home'") }
        for device in [a, b, a] { try await device.sync() }
        for store in [a.store, b.store, system.server.store] {
            let title = try await store.read { db in try db.fetchOne(String.self, "SELECT \"title\" FROM \"syncFolders\"") }
            #expect(title == "Home / Work", "the resolver's value, written by the server, reached everyone")
        }
    }

    @Test func aColumnAddedWithoutUpdatingTheReplicaStopsSyncSayingWhatToRun() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let system = try await Self.system(folder)
        let a = system.devices[0]
        try await a.store.write { db in try db.execute("ALTER TABLE \"syncFolders\" ADD COLUMN \"color\" TEXT") }
        // A declaration that names a column the replica does not capture.
        let declared = [try SyncedTable(ColoredFolder.self)]
        let error = await #expect(throws: DatabaseError.self) { try await a.store.read { db in try db.sync.checkReplica(of: declared) } }
        #expect(error?.message.contains("run db.sync.updateReplica(of:) in the migration that added them") == true, "\(String(describing: error))")
        try await a.store.write { db in try db.sync.updateReplica(of: declared) }
        try await a.store.read { db in try db.sync.checkReplica(of: declared) }
    }
}

struct AnswerLost: Error {}

/// A transport that loses the answer to every fourth pull.
final class EveryFourthPullLost: SyncTransport, @unchecked Sendable {
    let inner: InProcessSyncTransport
    private let lock = NSLock()
    private var pulls = 0
    init(_ inner: InProcessSyncTransport) { self.inner = inner }
    func push(_ push: SyncPush) async throws -> SyncPushAnswer { try await inner.push(push) }
    func pull(_ pull: SyncPull) async throws -> SyncPage {
        let page = try await inner.pull(pull)
        let lost = lock.withLock { pulls += 1; return pulls % 4 == 0 }
        if lost { throw AnswerLost() }
        return page
    }
}

extension SyncParentsTests {
    /// A pull cut off by a lost answer goes on after the pages it had staged:
    /// ten pages arrive although no attempt gets past its fourth request.
    @Test func aPullCutOffGoesOnAfterThePagesItHadStaged() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let system = try await Self.system(folder)
        var (a, b) = (system.devices[0], system.devices[1])
        try await a.store.write { db in
            for n in 0..<30 { try db.insert(SyncFolder(id: UUID(), title: "Folder \(n)")) }
        }
        try await a.push()
        b = SyncClient(store: b.store, tables: Self.tables, transport: EveryFourthPullLost(InProcessSyncTransport(server: system.server, seed: 1)))
        b.pageSize = 3
        var attempts = 0
        while true {
            attempts += 1
            do { try await b.pull(); break } catch is AnswerLost {}
            #expect(attempts < 10, "the pull made progress")
            if attempts >= 10 { break }
        }
        let count = try await b.store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \"syncFolders\"") }
        #expect(count == 30)
    }
}

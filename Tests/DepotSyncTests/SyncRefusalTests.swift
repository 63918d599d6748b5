import Depot
import DepotSQLite
@testable import DepotSync
import Foundation
import Testing
import TestSupport

/// What the server refuses at its door (stamps past its drift bound, keys no
/// replica sends, a copied device's push), what a device does about each,
/// and what a sync tells a person: the changes dropped and the values
/// replaced by another device's edit.
@Suite struct SyncRefusalTests {
    typealias Tables = SyncParentsTests
    typealias System = SyncLossReproductionTests

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func insert(_ item: SyncItem, key: String? = nil, registers: [String: Value]? = nil, at milliseconds: Int64, by node: UUID) -> SyncChange {
        var row = SyncRow()
        row.write(registers ?? ["id": .uuid(item.id), "folderID": .uuid(item.folderID), "title": .text(item.title)],
                  stamp: SyncStamp(time: HybridTimestamp(milliseconds: milliseconds, counter: 0), node: node))
        return SyncChange(table: "syncItems", key: key ?? item.id.uuidString.lowercased(), row: row)
    }

    @Test func aStampPastTheDriftBoundOrBefore1970IsRefusedWholeAndChangesNothing() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await System.system(folder, accounts: ["alice"])
        let home = SyncFolder(id: UUID(), title: "Home")
        try await devices[0].store.write { db in try db.insert(home) }
        try await devices[0].sync()
        let before = try await SyncAccountsTests.serverState(server)
        let node = UUID()
        let item = SyncItem(id: UUID(), folderID: home.id, title: "Late")
        let cases: [(String, Int64, SyncPushRefused.Reason)] = [
            ("ten minutes ahead", Self.now() + 10 * 60_000, .stampAhead),
            ("a year ahead", Self.now() + 365 * 86_400_000, .stampAhead),
        ]
        for (what, milliseconds, reason) in cases {
            let push = SyncPush(client: node, number: 1, changes: [Self.insert(item, at: milliseconds, by: node)])
            let error = await #expect(throws: SyncPushRefused.self, "\(what)") { try await server.handle(push, account: "alice") }
            #expect(error?.reason == reason, "\(what)")
            #expect(error?.description.contains("syncItems") == true && error?.description.contains("Late") == false, "names the table, never a value")
        }
        var negative = Self.insert(item, at: 0, by: node)
        negative.row.registers["title"]?.stamp.time = HybridTimestamp(rawValue: -1)
        let refusal = await #expect(throws: SyncPushRefused.self) {
            try await server.handle(SyncPush(client: node, number: 1, changes: [negative]), account: "alice")
        }
        #expect(refusal?.reason == .malformedStamp)
        #expect(try await SyncAccountsTests.serverState(server) == before, "nothing of a refused push was applied")
        // Within the bound: taken, and the server's clock goes no further than the stamp.
        let ahead = Self.now() + 60_000
        _ = try await server.handle(SyncPush(client: node, number: 1, changes: [Self.insert(item, at: ahead, by: node)]), account: "alice")
        #expect(try await System.titles(server.store) == ["Late"])
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    @Test func aKeyThatIsNotOfItsTablesTypeOrThatItsValuesDoNotHaveIsRefused() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await System.system(folder, accounts: ["alice"])
        let home = SyncFolder(id: UUID(), title: "Home")
        try await devices[0].store.write { db in try db.insert(home) }
        try await devices[0].sync()
        let before = try await SyncAccountsTests.serverState(server)
        let node = UUID(), now = Self.now()
        let item = SyncItem(id: UUID(), folderID: home.id, title: "Paint")
        let injection = "' OR '1'='1"
        let deleted = SyncChange(table: "syncItems", key: injection, row: SyncRow(causalLength: 2))
        let cases: [(String, SyncChange)] = [
            ("a delete under a key that is not a UUID", deleted),
            ("a new row under a key that is not a UUID", Self.insert(item, key: injection, at: now, by: node)),
            ("a new row without its key's value", Self.insert(item, registers: ["folderID": .uuid(home.id), "title": .text("Paint")], at: now, by: node)),
            ("a new row whose key value names another row", Self.insert(item, key: UUID().uuidString.lowercased(), at: now, by: node)),
            ("a link whose key has one part", SyncChange(table: "syncLabels", key: item.id.uuidString.lowercased(), row: SyncRow(causalLength: 2))),
        ]
        for (what, change) in cases {
            let error = await #expect(throws: SyncPushRefused.self, "\(what)") {
                try await server.handle(SyncPush(client: node, number: 1, changes: [change]), account: "alice")
            }
            #expect(error?.reason == .malformedKey, "\(what)")
            #expect(error?.description.contains(injection) == false, "never the key itself")
        }
        #expect(try await SyncAccountsTests.serverState(server) == before, "nothing of a refused push was applied")
        // A change of some columns of a row the server has may leave the key out.
        _ = try await server.handle(SyncPush(client: node, number: 1, changes: [Self.insert(item, at: now, by: node)]), account: "alice")
        let rename = Self.insert(item, registers: ["title": .text("Paint the door")], at: now + 1, by: node)
        _ = try await server.handle(SyncPush(client: node, number: 2, changes: [rename]), account: "alice")
        #expect(try await System.titles(server.store) == ["Paint the door"])
        #expect(SyncedTable.keyKinds(of: SyncLabel.self, keys: SyncLabel.primaryKey) == [.uuid, .uuid])
        #expect(SyncedTable.keyKinds(of: SyncWord.self, keys: ["id"]) == [.text])
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    @Test func aPushUnderANumberUsedForOtherContentIsACopiedDeviceAndTheSameContentADuplicate() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await System.system(folder, accounts: ["alice"])
        let home = SyncFolder(id: UUID(), title: "Home")
        try await devices[0].store.write { db in try db.insert(home) }
        try await devices[0].sync()
        let node = UUID(), now = Self.now()
        let first = SyncPush(client: node, number: 1, changes: [Self.insert(SyncItem(id: UUID(), folderID: home.id, title: "X"), at: now, by: node)])
        let other = SyncPush(client: node, number: 1, changes: [Self.insert(SyncItem(id: UUID(), folderID: home.id, title: "Y"), at: now, by: node)])
        let applied = try await server.handle(first, account: "alice")
        #expect(!applied.wasDuplicate)
        let again = try await server.handle(first, account: "alice")
        #expect(again.wasDuplicate && again.version == applied.version, "the same push again: a duplicate, answered as before")
        let error = await #expect(throws: SyncPushRefused.self) { try await server.handle(other, account: "alice") }
        #expect(error?.reason == .deviceCopied)
        #expect(try await System.titles(server.store) == ["X"])
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    @Test func aRestoredDeviceIsToldOnceAndGoesOnUnderANewIdentity() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await System.system(folder, accounts: ["alice"])
        var original = devices[0]
        let home = SyncFolder(id: UUID(), title: "Home")
        try await original.store.write { db in try db.insert(home) }
        try await original.sync()
        await original.store.close()
        let path = folder.appendingPathComponent("device0.sqlite").path, copy = folder.appendingPathComponent("copy.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        original = SyncClient(store: try Store.sqlite(at: path), tables: Tables.tables, transport: InProcessSyncTransport(server: server, account: "alice", seed: 1))
        let copied = SyncClient(store: try Store.sqlite(at: copy), tables: Tables.tables, transport: InProcessSyncTransport(server: server, account: "alice", seed: 2))
        try await original.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "X")) }
        #expect(try await original.sync().identityRenewed == false)
        let oldNode = try await copied.store.read { db in try db.sync.node() }
        try await copied.store.write { db in try db.insert(SyncItem(id: UUID(), folderID: home.id, title: "Y")) }
        let report = try await copied.sync()
        #expect(report.identityRenewed && report.sent == 1)
        #expect(try await copied.store.read { db in try db.sync.node() } != oldNode, "a new node id")
        #expect(try await copied.sync().identityRenewed == false, "told once")
        try await original.sync()
        for store in [server.store, original.store, copied.store] { #expect(try await System.titles(store) == ["X", "Y"]) }
        for store in [original.store, copied.store, server.store] { await store.close() }
    }

    /// A device whose clock runs an hour ahead: its push is refused once, its
    /// pending stamps come back to what the server takes, and it goes in.
    @Test func aDeviceWhoseClockRunsAheadIsStampedAgainAndItsChangesGoIn() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await System.system(folder, accounts: ["alice", "alice"])
        let (fast, other) = (devices[0], devices[1])
        let home = SyncFolder(id: UUID(), title: "Home")
        try await fast.store.write { db in try db.insert(home) }
        let anHourAhead = HybridTimestamp(milliseconds: Self.now() + 3_600_000, counter: 0).rawValue
        try await fast.store.write { db in
            try db.execute("UPDATE \"depot_sync_clocks\" SET \"hlc\" = \(anHourAhead)")
            try db.execute("UPDATE \"depot_sync_state\" SET \"hlc\" = \(anHourAhead)")
        }
        try await fast.sync()
        try await other.sync()
        #expect(try await System.titles(other.store, "syncFolders") == ["Home"])
        let serverClock = try await server.store.read { db in try db.fetchOne(Int64.self, "SELECT max(\"hlc\") FROM \"depot_sync_server_clocks\"") } ?? 0
        #expect(HybridTimestamp(rawValue: serverClock).milliseconds <= Self.now() + 300_000, "no stamp past the bound on the server")
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    @Test func aPulledStampFarAheadMovesTheClockNoFurtherThanTheDriftBound() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try await SyncReplicaTests.replica(folder, "a")
        let id = UUID()
        var row = SyncRow()
        row.write(["id": .uuid(id), "title": .text("Far"), "body": .null, "rank": .integer(1)],
                  stamp: SyncStamp(time: HybridTimestamp(rawValue: Int64.max), node: UUID()))
        let far = SyncChange(table: "syncNotes", key: id.uuidString.lowercased(), row: row)
        try await store.write { db in try db.sync.applyChanges([far], SyncReplicaTests.tables) }
        let clock = try await store.read { db in try db.fetchOne(Int64.self, "SELECT \"hlc\" FROM \"depot_sync_state\"") } ?? 0
        #expect(HybridTimestamp(rawValue: clock).milliseconds <= Self.now() + 300_000)
        try await store.write { db in try db.insert(SyncNote(id: UUID(), title: "Mine", body: nil, rank: 2)) }
        let kinds = try await store.read { db in try db.fetchAll(String.self, "SELECT DISTINCT typeof(\"hlc\") FROM \"depot_sync_clocks\"") }
        #expect(kinds == ["integer"])
        // A clock set to its last value by hand: the next write fails with a message, it never becomes a REAL.
        try await store.write { db in try db.execute("UPDATE \"depot_sync_state\" SET \"hlc\" = \(Int64.max)") }
        await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.insert(SyncNote(id: UUID(), title: "Too late", body: nil, rank: 3)) }
        }
        await store.close()
    }
}

/// What a sync tells: the changes the server dropped, and this device's
/// values another device's later edit replaced without having seen them,
/// whichever device syncs first; never an edit made after seeing the value.
@Suite struct SyncReportTests {
    typealias System = SyncLossReproductionTests

    /// An owner shares a folder; the sharee adds an item to it offline, and
    /// the owner stops sharing it before the sharee syncs.
    static func itemAddedToAListUnshared(_ folder: URL) async throws -> (server: SyncServer, devices: [SyncClient], added: SyncItem) {
        let (server, devices) = try await System.system(folder, accounts: ["owner", "sharee"])
        let (owner, sharee) = (devices[0], devices[1])
        let groceries = SyncFolder(id: UUID(), title: "Groceries")
        try await owner.store.write { db in try db.insert(groceries) }
        try await owner.sync()
        try await server.share("syncFolders", key: groceries.id.uuidString.lowercased(), owner: "owner", with: "sharee")
        try await sharee.sync()
        let added = SyncItem(id: UUID(), folderID: groceries.id, title: "Added offline")
        try await sharee.store.write { db in try db.insert(added) }
        try await server.unshare("syncFolders", key: groceries.id.uuidString.lowercased(), owner: "owner", with: "sharee")
        return (server, devices, added)
    }

    @Test func aChangeToAListNoLongerSharedIsReportedAsDropped() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices, added) = try await Self.itemAddedToAListUnshared(folder)
        let sharee = devices[1]
        let report = try await sharee.sync()
        #expect(report.dropped == [SyncRowID(table: "syncItems", key: added.id.uuidString.lowercased())])
        #expect(report.sent == 0)
        #expect(try await System.titles(sharee.store) == [])
        #expect(try await sharee.sync().dropped.isEmpty, "told once")
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    /// A push that dropped a change answered, then the sync failed (its pull
    /// lost, or the app pushed alone): the next sync that completes tells it.
    @Test func aDropDecidedByASyncThatFailedAfterIsToldByTheNextOne() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices, added) = try await Self.itemAddedToAListUnshared(folder)
        let sharee = devices[1]
        let pushed = try await sharee.push()
        #expect(pushed.dropped == [SyncRowID(table: "syncItems", key: added.id.uuidString.lowercased())])
        let report = try await sharee.sync()
        #expect(report.dropped == [SyncRowID(table: "syncItems", key: added.id.uuidString.lowercased())], "told by the sync that completed")
        #expect(try await sharee.sync().dropped.isEmpty, "and only once")
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    /// The answer to a push that dropped a change is lost; the retry, a
    /// duplicate, is answered as the push was: the drop is still told.
    @Test func aDropIsToldWhenTheAnswerThatToldItWasLost() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices, added) = try await Self.itemAddedToAListUnshared(folder)
        let sharee = devices[1]
        let transport = try #require(sharee.transport as? InProcessSyncTransport)
        var faults = InProcessSyncTransport.Faults()
        faults.dropAnswer = 1
        transport.faults = faults
        await #expect(throws: InProcessSyncTransport.Lost.self) { try await sharee.push() }
        transport.faults = InProcessSyncTransport.Faults()
        let report = try await sharee.sync()
        #expect(report.dropped == [SyncRowID(table: "syncItems", key: added.id.uuidString.lowercased())])
        #expect(try await System.titles(sharee.store) == [])
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    /// Two offline renames: the device whose rename lost hears of it,
    /// whether it syncs before the winner or after.
    @Test(arguments: [true, false])
    func theDeviceWhoseOfflineEditLostIsTold(loserSyncsFirst: Bool) async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await System.system(folder, accounts: ["alice", "alice", "alice"])
        let (loser, winner, bystander) = (devices[0], devices[1], devices[2])
        let home = SyncFolder(id: UUID(), title: "Home")
        try await loser.store.write { db in try db.insert(home) }
        for device in devices { try await device.sync() }
        try await loser.store.write { db in try db.execute("UPDATE \"syncFolders\" SET \"title\" = 'Loser'") }
        // The winner's clock after the loser's: its rename is the later one.
        let stamp = try await loser.store.read { db in try db.fetchOne(Int64.self, "SELECT \"hlc\" FROM \"depot_sync_state\"") } ?? 0
        try await winner.store.write { db in
            try db.execute("UPDATE \"depot_sync_state\" SET \"hlc\" = max(\"hlc\", \(stamp))")
            try db.execute("UPDATE \"syncFolders\" SET \"title\" = 'Winner'")
        }
        let order = loserSyncsFirst ? [loser, winner, loser] : [winner, loser]
        var reports: [SyncReport] = []
        for device in order { reports.append(try await device.sync()) }
        let key = SyncRowID(table: "syncFolders", key: home.id.uuidString.lowercased())
        let loserHeard = (loserSyncsFirst ? [reports[0], reports[2]] : [reports[1]]).flatMap(\.overridden)
        #expect(loserHeard == [SyncOverride(row: key, column: "title")], "the loser is told once")
        #expect((loserSyncsFirst ? reports[1] : reports[0]).overridden.isEmpty, "the winner is told nothing")
        for store in [loser.store, winner.store, server.store] { #expect(try await System.titles(store, "syncFolders") == ["Winner"]) }
        // An edit made after seeing the value replaces it without a word.
        try await bystander.sync()
        try await bystander.store.write { db in try db.execute("UPDATE \"syncFolders\" SET \"title\" = 'Later'") }
        try await bystander.sync()
        #expect(try await winner.sync().overridden.isEmpty, "a later edit that saw the value is no conflict")
        #expect(try await loser.sync().overridden.isEmpty)
        for device in devices { await device.store.close() }
        await server.store.close()
    }
}

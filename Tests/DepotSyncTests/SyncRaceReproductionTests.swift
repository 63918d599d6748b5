import Depot
import DepotSQLite
import DepotSync
import Foundation
import Testing

/// Two losses the history checker found once its histories began shared
/// (``SyncHistory``): each reproduced step by step, each failing before its fix.
@Suite struct SyncRaceReproductionTests {
    /// 5. The owner labels an item of a shared folder and removes the label
    /// before its device syncs, so the server first sees the label deleted;
    /// the sharee labels the same item with the same folder. Its push was
    /// refused whole ("the push writes a syncLabels row the account may not
    /// write"), every sync after it too: the device was wedged for good. The
    /// change is dropped and told, and the device ends where the server is.
    @Test func aRowAnotherAccountMadeAndDeletedUnderTheSameKeyNeverWedgesADevice() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await SyncLossReproductionTests.system(folder, accounts: ["owner", "sharee"])
        let (owner, sharee) = (devices[0], devices[1])
        let groceries = SyncFolder(id: UUID(), title: "Groceries"), milk = SyncItem(id: UUID(), folderID: UUID(), title: "Milk")
        let item = SyncItem(id: milk.id, folderID: groceries.id, title: milk.title)
        try await owner.store.write { db in try db.insert(groceries); try db.insert(item) }
        try await owner.sync()
        try await server.share("syncFolders", key: groceries.id.uuidString.lowercased(), owner: "owner", with: "sharee")
        try await sharee.sync()
        let label = SyncLabel(itemID: milk.id, folderID: groceries.id)
        try await owner.store.write { db in
            try db.insert(label)
            try db.execute("DELETE FROM \"syncLabels\" WHERE \"itemID\" = \(milk.id) AND \"folderID\" = \(groceries.id)")
        }
        try await owner.sync()
        try await sharee.store.write { db in try db.insert(label) }
        let report = try await sharee.sync()
        #expect(report.dropped.map(\.table) == ["syncLabels"], "dropped and told: \(report.dropped)")
        try await sharee.sync()
        #expect(try await sharee.pendingCount() == 0)
        #expect(try await sharee.store.read { db in try db.fetchAll(SyncLabel.self, "SELECT * FROM \"syncLabels\"") } == [])
        #expect(try await SyncLossReproductionTests.titles(sharee.store) == ["Milk"])
        for device in devices { await device.store.close() }
        await server.store.close()
    }

    /// 6. A sharee deletes an item offline; the owner unshares its folder, so
    /// the server drops the delete; the push's answer is lost; the owner
    /// shares the folder again and the sharee's device pulls past the drop
    /// (the item is back); the push is sent again and its answer, told now,
    /// discards the delete, the item with it. The server had given the item
    /// the push's version for the device to pull it back, but the device had
    /// pulled past it: the item stayed away until it next changed, though
    /// the account sees it.
    @Test func aDropToldAfterAPullPastItStillBringsTheRowBack() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, devices) = try await SyncLossReproductionTests.system(folder, accounts: ["owner", "sharee"])
        let (owner, sharee) = (devices[0], devices[1])
        let groceries = SyncFolder(id: UUID(), title: "Groceries")
        let milk = SyncItem(id: UUID(), folderID: groceries.id, title: "Milk")
        try await owner.store.write { db in try db.insert(groceries); try db.insert(milk) }
        try await owner.sync()
        let key = groceries.id.uuidString.lowercased()
        try await server.share("syncFolders", key: key, owner: "owner", with: "sharee")
        try await sharee.sync()
        try await sharee.store.write { db in _ = try db.delete(SyncItem.self, id: milk.id) }
        try await server.unshare("syncFolders", key: key, owner: "owner", with: "sharee")
        let transport = try #require(sharee.transport as? InProcessSyncTransport)
        var losing = InProcessSyncTransport.Faults()
        losing.dropAnswer = 1
        transport.faults = losing
        await #expect(throws: InProcessSyncTransport.Lost.self) { try await sharee.push() }
        transport.faults = InProcessSyncTransport.Faults()
        try await server.share("syncFolders", key: key, owner: "owner", with: "sharee")
        try await sharee.pull()
        #expect(try await SyncLossReproductionTests.titles(sharee.store) == ["Milk"], "the unshare took the delete along, the share brought the item")
        let report = try await sharee.sync()
        #expect(report.dropped == [SyncRowID(table: "syncItems", key: milk.id.uuidString.lowercased())])
        #expect(try await SyncLossReproductionTests.titles(sharee.store) == ["Milk"], "back, as the server has it")
        #expect(try await sharee.pendingCount() == 0)
        for device in devices { await device.store.close() }
        await server.store.close()
    }
}

import Depot
import DepotSync
import Foundation

extension SyncScenarios {
    // MARK: The server's own edits

    /// A web page's edits, made by the server for an account: they reach every
    /// device that sees the rows, win over the values they replace (a device's
    /// earlier edit pushed later among them), keep a device's concurrent edit of
    /// another column, and keep to the account's rights.
    static func serverEditsReachDevices(_ run: DifferentialRun) async throws {
        try await withSystem(run, accounts: ["alice", "alice", "bob"]) { system in
            let (alice, alicePhone, bob, server) = (system.clients[0], system.clients[1], system.clients[2], system.server)
            let on = system.engine
            let home = SyncFolder(id: UUID(), title: "Home"), work = SyncFolder(id: UUID(), title: "Work")
            let paint = SyncItem(id: UUID(), folderID: home.id, title: "Paint")
            try await alice.store.write { db in try db.insert(home); try db.insert(paint) }
            _ = try await alice.sync()
            _ = try await alicePhone.sync()

            // Offline, the phone retitles the item and the first device moves it; then the web retitles it.
            try await alicePhone.store.write { db in
                try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "title") = \("Paint, phone") WHERE \(ident: "id") = \(paint.id)")
            }
            try await alice.store.write { db in
                try db.insert(work)
                try db.execute("UPDATE \(ident: SyncItem.tableName) SET \(ident: "folderID") = \(work.id) WHERE \(ident: "id") = \(paint.id)")
            }
            let sand = SyncItem(id: UUID(), folderID: home.id, title: "Sand")
            let edited = try await server.edit([
                .update(SyncItem.tableName, key: key(paint.id), ["title": .text("Paint the fence")]),
                .save(sand),
            ], account: "alice")
            run.expect(!edited.wasDuplicate && edited.droppedRows.isEmpty, "\(on): the server's edits were not all applied: \(edited)")
            for device in [alicePhone, alice, alicePhone, alice] { _ = try await device.sync() }
            for (name, device) in [("alice's first device", alice), ("alice's phone", alicePhone)] {
                let items = try await device.store.read { db in try db.fetchAll(SyncItem.all) }.sorted { $0.title < $1.title }
                run.expect(items == [SyncItem(id: paint.id, folderID: work.id, title: "Paint the fence"), sand],
                           "\(on): \(name) holds \(items.map { "\($0.title) in \($0.folderID == work.id ? "Work" : "Home")" }) "
                            + "after the web's edits; expected the web's title (later than the phone's), the move kept, the web's new item")
            }
            run.expect(try await titles(bob.store) == [], "\(on): another account's device got the server's edits for alice")

            // Saving what the row holds is no change; a save of other values sets only those columns.
            let since = SyncPull(after: SyncCursor(version: try await server.head() - 1, table: "", key: ""), limit: 10)
            let logged = try await server.handle(since, account: "alice").changes
            try await server.edit([.save(sand)], account: "alice")
            let unchanged = try await server.handle(since, account: "alice").changes
            run.expect(unchanged == logged, "\(on): saving a row's own values logged \(unchanged.count - logged.count) changes")

            // The account's rights: bob may not touch alice's rows; a refused edit changes nothing.
            let before = try await serverState(server)
            let attacks: [(String, [SyncEdit])] = [
                ("a rename of another account's item", [.update(SyncItem.tableName, key: key(paint.id), ["title": .text("Mine")])]),
                ("a delete of another account's folder", [.delete(SyncFolder.tableName, key: key(home.id))]),
                ("a new item in another account's folder", [.save(SyncItem(id: UUID(), folderID: home.id, title: "Spy"))]),
            ]
            for (attack, edits) in attacks {
                do {
                    try await server.edit(edits, account: "bob")
                    run.record("\(on): \(attack) by the server for bob was applied")
                } catch is SyncAccessDenied {
                } catch {
                    run.record("\(on): \(attack) failed with \(error), not SyncAccessDenied")
                }
            }
            // Edits the server cannot make: all refused, none half-applied.
            let wrong: [(String, [SyncEdit], String)] = [
                ("an unknown table", [.save(sand), .delete("nowhere", key: "x")], "the table nowhere"),
                ("an unknown column", [.update(SyncItem.tableName, key: key(sand.id), ["colour": .text("red")])], "the column colour"),
                ("a key column", [.update(SyncItem.tableName, key: key(sand.id), ["id": .uuid(UUID())])], "key column id"),
                ("a row that does not exist", [.update(SyncItem.tableName, key: key(UUID()), ["title": .text("?")])], "does not exist"),
                ("a value the record does not take", [.update(SyncItem.tableName, key: key(sand.id), ["title": .integer(7)])], "title"),
            ]
            for (what, edits, says) in wrong {
                do {
                    try await server.edit(edits, account: "alice")
                    run.record("\(on): an edit of \(what) was applied")
                } catch let error as DatabaseError where error.kind == .misuse {
                    run.expect(error.message.contains(says), "\(on): an edit of \(what) failed with \"\(error.message)\", which does not name \(says)")
                } catch {
                    run.record("\(on): an edit of \(what) failed with \(error), not a misuse error")
                }
            }
            run.expect(try await serverState(server) == before, "\(on): a refused edit changed what the server keeps")

            // A delete reaches the devices; a share shows the other account the server's values.
            try await server.edit([.delete(SyncItem.tableName, key: key(sand.id))], account: "alice")
            try await server.share(SyncFolder.tableName, key: key(work.id), owner: "alice", with: "bob")
            for device in [alice, bob] { _ = try await device.sync() }
            // What a page the server renders may show: a device's view of the account.
            let folders = try await server.visibleKeys(of: SyncFolder.tableName, to: "bob")
            run.expect(folders == [key(work.id)], "\(on): bob sees the folders \(folders), not the one shared with him")
            let all = try await server.visibleKeys(of: SyncFolder.tableName, to: "alice")
            run.expect(all == [key(home.id), key(work.id)].sorted(), "\(on): alice sees the folders \(all), not her two")
            run.expect(try await server.visibleKeys(of: SyncItem.tableName, to: "alice") == [key(paint.id)], "\(on): alice sees a deleted item, or not her own")
            run.expect(try await server.isVisible(SyncItem.tableName, key: key(paint.id), to: "bob"), "\(on): bob does not see the item in the folder shared with him")
            run.expect(try await !server.isVisible(SyncFolder.tableName, key: key(home.id), to: "bob"), "\(on): bob sees a folder not shared with him")
            run.expect(try await titles(alice.store) == ["Paint the fence"], "\(on): the web's delete did not reach alice's device")
            run.expect(try await titles(bob.store) == ["Paint the fence"], "\(on): the shared folder reached bob without the web's title")
            // As the sharee, the server may now edit the shared folder's item for bob.
            try await server.edit([.update(SyncItem.tableName, key: key(paint.id), ["title": .text("Fence, done")])], account: "bob")
            _ = try await alice.sync()
            run.expect(try await titles(alice.store) == ["Fence, done"], "\(on): the web's edit for the sharee did not reach the owner")

            // A delete takes the rows under it along, down the tree, on the server and on every device.
            try await alice.store.write { db in try db.insert(SyncLabel(itemID: paint.id, folderID: work.id)) }
            _ = try await alice.sync()
            try await server.edit([.delete(SyncFolder.tableName, key: key(work.id))], account: "alice")
            for device in [alice, bob] { _ = try await device.sync() }
            for (name, device) in [("alice", alice), ("bob", bob)] {
                let left = try await [count(device.store, SyncFolder.tableName), count(device.store, SyncItem.tableName), count(device.store, SyncLabel.tableName)]
                let expected = name == "alice" ? [1, 0, 0] : [0, 0, 0]
                run.expect(left == expected, "\(on): after the web deleted a folder, \(name)'s device holds \(left) folders, items and labels, not \(expected)")
            }
            let under = try await server.visibleKeys(of: SyncLabel.tableName, to: "alice") + server.visibleKeys(of: SyncItem.tableName, to: "alice")
            run.expect(under.isEmpty, "\(on): the server keeps \(under.count) rows under the folder the web deleted alive")

            // A row that names the deleted one as its second parent goes too (a label pointing at a folder other than its item's).
            let garden = SyncFolder(id: UUID(), title: "Garden"), shed = SyncFolder(id: UUID(), title: "Shed")
            let rake = SyncItem(id: UUID(), folderID: garden.id, title: "Rake")
            try await alice.store.write { db in
                try db.insert(garden); try db.insert(shed); try db.insert(rake)
                try db.insert(SyncLabel(itemID: rake.id, folderID: shed.id))
            }
            _ = try await alice.sync()
            try await server.edit([.delete(SyncFolder.tableName, key: key(shed.id))], account: "alice")
            _ = try await alice.sync()
            let labelsLeft = try await server.visibleKeys(of: SyncLabel.tableName, to: "alice")
            run.expect(labelsLeft.isEmpty, "\(on): a label naming the deleted folder as its second parent stayed alive on the server")
            let (labelsThere, itemsThere) = try await (count(alice.store, SyncLabel.tableName), titles(alice.store))
            run.expect(labelsThere == 0 && itemsThere.contains("Rake"), "\(on): alice's device should keep the item and lose the label")
        }
    }
}

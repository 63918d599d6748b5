import Depot
import DepotSQLite
import DepotSync
import Foundation
import Synchronization
import Testing

/// The server's log stays bounded: compaction forgets deleted rows older
/// than a horizon, a device offline past it starts over without losing its
/// own changes or bringing a forgotten row back, and a new device converges.
@Suite struct SyncCompactionTests {
    typealias Note = SyncNote

    /// Counts the pages that told a device to start over.
    final class Watching: SyncTransport {
        let inner: InProcessSyncTransport
        let startsOver = Atomic<Int>(0)
        init(_ inner: InProcessSyncTransport) { self.inner = inner }
        func push(_ push: SyncPush) async throws -> SyncPushAnswer { try await inner.push(push) }
        func pull(_ pull: SyncPull) async throws -> SyncPage {
            let page = try await inner.pull(pull)
            if page.startsOver { startsOver.add(1, ordering: .relaxed) }
            return page
        }
    }

    static func device(_ folder: URL, _ name: String, _ server: SyncServer, seed: UInt64) async throws -> (SyncClient, Watching) {
        let store = try await SyncReplicaTests.replica(folder, name)
        let transport = Watching(InProcessSyncTransport(server: server, seed: seed))
        var client = SyncClient(store: store, tables: SyncReplicaTests.tables, transport: transport)
        client.pageSize = 500
        return (client, transport)
    }

    /// A sync server on an SQLite file in `folder`.
    static func server(_ folder: URL) async throws -> SyncServer {
        let store = try await SyncReplicaTests.replica(folder, "server-data")
        try await store.write { db in try SyncServer.installSyncServer(in: db) }
        return SyncServer(store: store, tables: SyncReplicaTests.tables)
    }

    static func notes(_ store: Store) async throws -> [Note] {
        try await store.read { db in try db.fetchAll(Note.self, "SELECT * FROM \"syncNotes\" ORDER BY \"id\"") }
    }

    static func count(_ store: Store, _ table: String) async throws -> Int {
        try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: table)") ?? 0 }
    }

    @Test func aHundredThousandEditsCompactToTheLiveRowsAndADeviceOfflinePastTheHorizonStartsOverLosingNothing() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (editor, editorLink) = try await Self.device(folder, "editor", server, seed: 1)
        let (offline, offlineLink) = try await Self.device(folder, "offline", server, seed: 2)

        var live = (0..<1_000).map { Note(id: UUID(), title: "Note \($0)", body: nil, rank: $0) }
        try await editor.store.write { [live] db in for note in live { try db.insert(note) } }
        try await editor.sync()
        try await offline.sync()
        let (doomed, kept) = (live[0], live[999])

        // Offline: an edit of a row another device is about to delete, one of a row that stays, a new row.
        let made = Note(id: UUID(), title: "Made offline", body: "kept", rank: -1)
        try await offline.store.write { db in
            try db.execute("UPDATE \"syncNotes\" SET \"title\" = 'Edited offline, deleted elsewhere' WHERE \"id\" = \(doomed.id)")
            try db.execute("UPDATE \"syncNotes\" SET \"body\" = 'Edited offline' WHERE \"id\" = \(kept.id)")
            try db.insert(made)
        }

        // 100 rounds of 1,000 edits: 950 updates, 25 deletes, 25 inserts; pushed every ten rounds.
        var edits = 0
        for round in 0..<100 {
            let deleted = Array(live.prefix(25))
            live.removeFirst(25)
            let inserted = (0..<25).map { Note(id: UUID(), title: "Round \(round) new \($0)", body: nil, rank: 0) }
            let updated = live.prefix(950).filter { $0.id != kept.id }
            edits += try await editor.store.write { db in
                let gone = SQL.join(deleted.map { "\($0.id)" }, separator: ", "), changed = SQL.join(updated.map { "\($0.id)" }, separator: ", ")
                var count = try db.execute("DELETE FROM \"syncNotes\" WHERE \"id\" IN (\(gone))")
                count += try db.execute("UPDATE \"syncNotes\" SET \"rank\" = \(round) WHERE \"id\" IN (\(changed))")
                for note in inserted { try db.insert(note) }
                return count + inserted.count
            }
            live.insert(contentsOf: inserted, at: live.count - 1)
            if round % 10 == 9 { try await editor.sync() }
        }
        #expect(edits == 100_000)
        let before = try await Self.count(serverStore, "depot_sync_server_rows")
        #expect(before == 1_000 + 2_500, "every deleted row's tombstone is kept until compaction: \(before)")

        let done = try await server.compact(olderThan: .zero)
        #expect(done.tombstones >= 2_475, "every delete before the last push forgotten: \(done.tombstones)")
        let rows = try await Self.count(serverStore, "depot_sync_server_rows")
        let clocks = try await Self.count(serverStore, "depot_sync_server_clocks")
        print("SyncCompactionTests: 100,000 edits of 1,000 live rows: \(before) row states before compaction, \(rows) after (\(clocks) stamps); "
              + "\(done.tombstones) tombstones forgotten, horizon \(done.horizon)")
        #expect(rows <= 3 * 1_000, "the server's rows hold at most 3x the live rows: \(rows)")
        #expect(clocks <= 3 * 1_000 * 4, "the server's stamps hold at most 3x the live rows' columns: \(clocks)")

        // The device offline past the horizon: its pending edits pushed, then it starts over.
        let report = try await offline.sync()
        #expect(offlineLink.startsOver.load(ordering: .relaxed) == 1, "told to start over once")
        #expect(report.dropped.contains(SyncRowID(table: "syncNotes", key: doomed.id.uuidString.lowercased())),
                "its edit of a row deleted and forgotten meanwhile is dropped and told")
        let (fresh, freshLink) = try await Self.device(folder, "fresh", server, seed: 3)
        try await fresh.sync()
        try await editor.sync()
        let expected = try await Self.notes(serverStore)
        #expect(expected.count == 1_001, "the live rows and the one made offline: \(expected.count)")
        #expect(!expected.contains { $0.id == doomed.id }, "the row deleted elsewhere is not brought back")
        #expect(expected.contains(made), "the row made offline arrived")
        #expect(expected.first { $0.id == kept.id }?.body == "Edited offline", "the offline edit of a row that stays arrived")
        for device in [editor, offline, fresh] {
            #expect(try await Self.notes(device.store) == expected, "every device converges to the server")
        }
        #expect(freshLink.startsOver.load(ordering: .relaxed) == 0 && editorLink.startsOver.load(ordering: .relaxed) == 0,
                "a new device and one that was caught up never start over")
        let (offlineState, serverState) = (try await Self.count(offline.store, "depot_sync_rows"), try await Self.count(serverStore, "depot_sync_server_rows"))
        #expect(offlineState == serverState, "the device that started over forgot the forgotten rows' state too: \(offlineState), \(serverState)")
        for device in [editor, offline, fresh] { await device.store.close() }
        await serverStore.close()
    }

    @Test func aDeviceOfAProtocolBeforeCompactionIsRefusedOncePastTheHorizonNotBefore() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (editor, _) = try await Self.device(folder, "editor", server, seed: 1)
        let note = Note(id: UUID(), title: "One", body: nil, rank: 1)
        try await editor.store.write { db in try db.insert(note) }
        try await editor.sync()
        let old = SyncPull(after: SyncCursor(version: 1, table: "", key: ""), limit: 10, protocolVersion: 2)
        #expect(try await server.handle(old).startsOver == false, "before any compaction, an old device syncs")
        try await editor.store.write { db in try db.execute("DELETE FROM \"syncNotes\"") }
        try await editor.sync()
        try await editor.store.write { db in try db.insert(Note(id: UUID(), title: "Two", body: nil, rank: 2)) }
        try await editor.sync()
        let done = try await server.compact(olderThan: .zero)
        #expect(done.horizon == 3 && done.tombstones == 1)
        do {
            _ = try await server.handle(old)
            Issue.record("a pull of protocol 2 behind the horizon was answered")
        } catch let refused as SyncPushRefused {
            #expect(refused.reason == .deviceOlder)
            #expect(refused.description == "the sync server refused the push (device-older): this device was offline past the server's compaction "
                + "horizon and speaks sync protocol 2, which cannot start over: update the app; the device keeps its changes until then")
        }
        let push = SyncPush(client: UUID(), number: 1, changes: [], seen: 1, protocolVersion: 2)
        await #expect(throws: SyncPushRefused.self) { try await server.handle(push) }
        let current = SyncPull(after: SyncCursor(version: 1, table: "", key: ""), limit: 10, protocolVersion: SyncSchema.protocolVersion)
        let page = try await server.handle(current)
        #expect(page.startsOver && page.changes.isEmpty && page.next == .start)
        let caughtUp = SyncPull(after: SyncCursor(version: 3, table: "", key: ""), limit: 10, protocolVersion: 2)
        #expect(try await server.handle(caughtUp).startsOver == false, "an old device that heard of every forgotten delete syncs on")
        await #expect(throws: DatabaseError.self) { try await server.compact(olderThan: .seconds(-1)) }
        await editor.store.close()
        await serverStore.close()
    }

    @Test func aVersionBecomesCompactableOnceACallSawItAgeAgo() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (editor, _) = try await Self.device(folder, "editor", server, seed: 1)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let day: Double = 86_400
        let month = Duration.seconds(30 * 86_400)
        func deleteOne(_ title: String) async throws {
            try await editor.store.write { db in try db.insert(Note(id: UUID(), title: title, body: nil, rank: 0)) }
            try await editor.sync()
            try await editor.store.write { db in try db.execute("DELETE FROM \"syncNotes\" WHERE \"title\" = \(title)") }
            try await editor.sync()
        }
        try await deleteOne("First")
        #expect(try await server.compact(olderThan: month, now: start).horizon == 0, "nothing was seen a month ago")
        try await deleteOne("Second")
        #expect(try await server.compact(olderThan: month, now: start.addingTimeInterval(20 * day)).horizon == 0)
        let later = try await server.compact(olderThan: month, now: start.addingTimeInterval(31 * day))
        #expect(later.horizon == 2 && later.tombstones == 0, "the version the first call saw: the first delete (version 2) is not before it")
        let last = try await server.compact(olderThan: month, now: start.addingTimeInterval(51 * day))
        #expect(last.horizon == 4 && last.tombstones == 1, "the version the second call saw, 31 days before: the first delete forgotten")
        let marks = try await Self.count(serverStore, "depot_sync_server_marks")
        #expect(marks == 1, "marks before the horizon go: \(marks)")
        await editor.store.close()
        await serverStore.close()
    }

    /// History seed 5243696390102981794: a device's push of a new row lost
    /// to another device's delete of the same key; the server then forgot
    /// the delete, and the other device made the key again. The first
    /// device, pulling everything for the first time, had merged its refused
    /// row into that later life and kept its own title, unlike the server.
    @Test func aRowThatLostToAForgottenDeleteTakesTheServersLaterLifeOnAPullFromTheStart() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (first, _) = try await Self.device(folder, "first", server, seed: 1)
        let (late, _) = try await Self.device(folder, "late", server, seed: 2)
        let id = UUID()
        try await first.store.write { db in try db.insert(Note(id: id, title: "First's", body: nil, rank: 1)) }
        try await first.sync()
        try await first.store.write { db in _ = try db.execute("DELETE FROM \"syncNotes\" WHERE \"id\" = \(id)") }
        try await first.sync()

        // Made under the same key by a device that never pulled, its clock a minute ahead: its push loses to the delete.
        try await late.store.write { db in
            let ahead = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            try db.execute("UPDATE \"depot_sync_state\" SET \"hlc\" = max(\"hlc\", \(ahead << 16))")
            try db.insert(Note(id: id, title: "Late's, refused", body: "late", rank: 2))
        }
        try await late.push()
        #expect(try await Self.count(serverStore, "syncNotes") == 0, "the delete wins")
        // A later version, so that the delete's is before the head the compaction sees.
        try await first.store.write { db in try db.insert(Note(id: UUID(), title: "Other", body: nil, rank: 0)) }
        try await first.sync()

        let compaction = try await server.compact(olderThan: .zero)
        #expect(compaction.tombstones == 1)
        // A page for the first device, which tells it the horizon: it forgets its tombstone, and makes the key anew from life 1.
        let (third, _) = try await Self.device(folder, "third", server, seed: 3)
        try await third.store.write { db in try db.insert(Note(id: UUID(), title: "Third's", body: nil, rank: 0)) }
        try await third.sync()
        try await first.sync()
        try await first.store.write { db in try db.insert(Note(id: id, title: "First's again", body: nil, rank: 3)) }
        try await first.sync()

        try await late.sync()
        let onServer = try await Self.notes(serverStore)
        #expect(onServer.map(\.title).sorted() == ["First's again", "Other", "Third's"])
        #expect(try await Self.notes(late.store) == onServer, "the refused row does not merge into the later life")
        #expect(try await Self.notes(first.store) == onServer)
        for store in [first.store, late.store, third.store, serverStore] { await store.close() }
    }

    /// Loses the answer of one pull request, by number (the first is 1).
    final class LosingOnePull: SyncTransport {
        struct Lost: Error {}
        let inner: InProcessSyncTransport
        let pulls = Atomic<Int>(0)
        let losing: Int
        init(_ inner: InProcessSyncTransport, losing: Int) { (self.inner, self.losing) = (inner, losing) }
        func push(_ push: SyncPush) async throws -> SyncPushAnswer { try await inner.push(push) }
        func pull(_ pull: SyncPull) async throws -> SyncPage {
            let page = try await inner.pull(pull)
            if pulls.add(1, ordering: .relaxed).newValue == losing { throw Lost() }
            return page
        }
    }

    /// A device whose second pull loses its second request, with pages of two rows.
    static func cutDevice(_ folder: URL, _ server: SyncServer) async throws -> (Store, SyncClient) {
        let store = try await SyncReplicaTests.replica(folder, "cut")
        // The second request of the device's second pull is lost (its first sync takes one).
        var cut = SyncClient(store: store, tables: SyncReplicaTests.tables, transport: LosingOnePull(InProcessSyncTransport(server: server, seed: 2), losing: 3))
        cut.pageSize = 2
        return (store, cut)
    }

    /// Deletes a note, then adds two in one later version: a page of two ends inside that version.
    static func deleteThenTwoNotes(_ id: UUID, on device: SyncClient) async throws {
        try await device.store.write { db in _ = try db.execute("DELETE FROM \"syncNotes\" WHERE \"id\" = \(id)") }
        try await device.sync()
        try await device.store.write { db in
            try db.insert(Note(id: UUID(), title: "A", body: nil, rank: 2))
            try db.insert(Note(id: UUID(), title: "B", body: nil, rank: 3))
        }
        try await device.sync()
    }

    /// History seed 6130267861268296540: a pull cut off after staging a page
    /// that deleted a row; the server then forgot the delete, and another
    /// device made the key again. The resumed pull had applied the staged
    /// delete over the later life, and the device never showed the row.
    @Test func aDeleteStagedBeforeACompactionDoesNotHideALaterLifeOfItsKey() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (first, _) = try await Self.device(folder, "first", server, seed: 1)
        let (store, cut) = try await Self.cutDevice(folder, server)
        let id = UUID()
        try await first.store.write { db in try db.insert(Note(id: id, title: "Doomed", body: nil, rank: 1)) }
        try await first.sync()
        try await cut.sync()
        #expect(try await Self.notes(store).map(\.id) == [id])

        try await Self.deleteThenTwoNotes(id, on: first)
        await #expect(throws: LosingOnePull.Lost.self) { try await cut.pull() }
        #expect(try await Self.count(store, "depot_sync_inbox") == 1, "the page with the delete is staged")

        let compaction = try await server.compact(olderThan: .zero)
        #expect(compaction.tombstones == 1)
        // A device that never knew the key makes it again.
        let (other, _) = try await Self.device(folder, "other", server, seed: 3)
        try await other.store.write { db in try db.insert(Note(id: id, title: "Made again", body: nil, rank: 4)) }
        try await other.sync()

        try await cut.pull()
        let onServer = try await Self.notes(serverStore)
        #expect(onServer.map(\.title).sorted() == ["A", "B", "Made again"])
        #expect(try await Self.notes(store) == onServer, "the later life shows")
        for store in [first.store, other.store, store, serverStore] { await store.close() }
    }

    /// History seed 8928958688283521337: a device made a key offline that
    /// another device had made and deleted. Its pull staged that delete and
    /// was cut off; the server then compacted, forgetting it. The device's
    /// next sync pushed its row (the server took it as new) and went on with
    /// the staged page: the forgotten delete won over the device's own row,
    /// and since the push had just marked that row synced past the horizon,
    /// the tombstone stayed and hid the row when the server sent it back.
    @Test func aForgottenDeleteStagedBeforeAPushDoesNotHideThePushedRow() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (first, _) = try await Self.device(folder, "first", server, seed: 1)
        let (store, cut) = try await Self.cutDevice(folder, server)
        try await first.store.write { db in try db.insert(Note(id: UUID(), title: "Seen", body: nil, rank: 0)) }
        try await first.sync()
        try await cut.sync()

        let id = UUID()
        try await first.store.write { db in try db.insert(Note(id: id, title: "Doomed", body: nil, rank: 1)) }
        try await first.sync()
        try await Self.deleteThenTwoNotes(id, on: first)
        // The device, never having heard of the key, makes it too.
        try await store.write { db in try db.insert(Note(id: id, title: "Mine", body: nil, rank: 4)) }
        await #expect(throws: LosingOnePull.Lost.self) { try await cut.pull() }
        #expect(try await Self.count(store, "depot_sync_inbox") == 1, "the page with the delete is staged")

        let compaction = try await server.compact(olderThan: .zero)
        #expect(compaction.tombstones == 1)
        try await cut.sync()
        let onServer = try await Self.notes(serverStore)
        #expect(onServer.map(\.title).sorted() == ["A", "B", "Mine", "Seen"], "the server took the device's row as new")
        #expect(try await Self.notes(store) == onServer, "the device keeps its row")
        for store in [first.store, store, serverStore] { await store.close() }
    }

    /// Loses the first push request, before the server sees it.
    final class LosingFirstPush: SyncTransport {
        struct Lost: Error {}
        let inner: InProcessSyncTransport
        let pushes = Atomic<Int>(0)
        init(_ inner: InProcessSyncTransport) { self.inner = inner }
        func push(_ push: SyncPush) async throws -> SyncPushAnswer {
            if pushes.add(1, ordering: .relaxed).newValue == 1 { throw Lost() }
            return try await inner.push(push)
        }
        func pull(_ pull: SyncPull) async throws -> SyncPage { try await inner.pull(pull) }
    }

    /// History seed 6425823999124693192: a device made a key offline that
    /// another device had made and deleted; its push was lost, and the push
    /// (fixed, so a retry is the same push) waited while the device pulled
    /// the delete. The server then compacted, forgetting the delete, and
    /// took the retried push's row as new; the device, showing the delete
    /// and with nothing left to push, never told it otherwise: the server
    /// and every other device showed a row this device did not.
    @Test func aDeletePulledWhileAPushWaitedWinsWhenThePushLandsAfterTheServerForgotIt() async throws {
        let folder = try SyncReplicaTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await Self.server(folder)
        let serverStore = server.store
        let (first, _) = try await Self.device(folder, "first", server, seed: 1)
        let store = try await SyncReplicaTests.replica(folder, "waiting")
        var waiting = SyncClient(store: store, tables: SyncReplicaTests.tables, transport: LosingFirstPush(InProcessSyncTransport(server: server, seed: 2)))
        waiting.pageSize = 500
        try await first.store.write { db in try db.insert(Note(id: UUID(), title: "Seen", body: nil, rank: 0)) }
        try await first.sync()
        try await waiting.pull()

        let id = UUID()
        try await first.store.write { db in try db.insert(Note(id: id, title: "Doomed", body: nil, rank: 1)) }
        try await first.sync()
        try await first.store.write { db in _ = try db.execute("DELETE FROM \"syncNotes\" WHERE \"id\" = \(id)") }
        try await first.sync()
        // A later version, so that the delete's is before the head the compaction sees.
        try await first.store.write { db in try db.insert(Note(id: UUID(), title: "Other", body: nil, rank: 2)) }
        try await first.sync()
        // The device, never having heard of the key, makes it too; its push is lost, then it pulls the delete.
        try await store.write { db in try db.insert(Note(id: id, title: "Mine", body: nil, rank: 4)) }
        await #expect(throws: LosingFirstPush.Lost.self) { try await waiting.push() }
        try await waiting.pull()
        #expect(try await Self.notes(store).map(\.title).sorted() == ["Other", "Seen"], "the delete wins here, the push still waiting")
        // The device has pulled through the horizon: it is not told to start over.
        let compaction = try await server.compact(olderThan: .zero)
        #expect(compaction.tombstones == 1)

        try await waiting.sync()
        try await first.sync()
        let onServer = try await Self.notes(serverStore)
        #expect(onServer.map(\.title).sorted() == ["Other", "Seen"], "the delete the device showed reached the server again")
        #expect(try await Self.notes(store) == onServer)
        #expect(try await Self.notes(first.store) == onServer)
        #expect(try await waiting.pendingCount() == 0)
        for store in [first.store, store, serverStore] { await store.close() }
    }
}

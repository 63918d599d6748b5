import Depot
import Foundation

/// Optimistic concurrency: a record with a version column is saved only over
/// the version it was read at, and the save that comes second is a `conflict`.
enum VersionChecks {
    @Columns
    struct Note: Record, Equatable {
        static var tableName: String { "versioned_notes" }
        static var versionColumn: String? { "version" }
        var id: Int64
        var title: String
        var version: Int64 = 0
    }

    static func notesStore(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in
            try createTable(db, "versioned_notes", [("id", .integer, "PRIMARY KEY"), ("title", .text, "NOT NULL"), ("version", .integer, "NOT NULL")])
        }
        return store
    }

    static func stored(_ store: Store, _ id: Int64) async throws -> Note? {
        try await store.read { db in try db.find(Note.self, id: id) }
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("records: a versioned record's update bumps its version; saving or deleting a stale copy is a conflict naming the table and version, and changes nothing") { context in
            let store = try await notesStore(context)
            let original = try await store.write { db in try db.insert(Note(id: 1, title: "draft")) }
            try expectEqual(original.version, 0, "the inserted version")
            var edit = original
            edit.title = "first edit"
            let saved = try await store.write { [edit] db in try db.update(edit) }
            try expectEqual(saved, Note(id: 1, title: "first edit", version: 1), "the update's record as stored")
            var stale = original
            stale.title = "an edit of the old copy"
            let error = try await expectError(.conflict, "updating a copy read at version 0") { [stale] in
                try await store.write { db in try db.update(stale) }
            }
            try expectEqual(error.table, "versioned_notes", "the conflict's table")
            try expectEqual(error.column, "version", "the conflict's column")
            try expect(error.message.contains("key id"), "the conflict names the key: \(error.message)")
            try expect(!error.description.contains("an edit of the old copy"), "no bound value in the error: \(error)")
            try expectEqual(try await stored(store, 1), saved, "the row after the refused save")
            try await expectError(.conflict, "deleting a copy read at version 0") { try await store.write { db in try db.delete(original) } }
            try expectEqual(try await stored(store, 1), saved, "the row after the refused delete")
            var next = saved
            next.title = "second edit"
            let again = try await store.write { [next] db in try db.update(next) }
            try expectEqual(again.version, 2, "the version after a second save of the returned record")
            try await expectError(.notFound, "updating a versioned record that is not there") {
                try await store.write { db in try db.update(Note(id: 404, title: "ghost")) }
            }
            let deleted = try await store.write { db in try db.delete(again) }
            try expect(deleted, "deleting the current version deletes the row")
            let deletedAgain = try await store.write { db in try db.delete(again) }
            try expect(!deletedAgain, "deleting a row that is gone reports false, not a conflict")
        },
        ConformanceCheck("records: two writers saving one versioned record at once: exactly one succeeds, the other gets conflict") { context in
            let store = try await notesStore(context)
            let original = try await store.write { db in try db.insert(Note(id: 7, title: "shared")) }
            var current = original
            for round in 1...10 {
                let read = current
                let outcomes = await withTaskGroup(of: (String, Result<Note, any Error>).self) { group in
                    for writer in ["a", "b"] {
                        group.addTask {
                            var mine = read
                            mine.title = "round \(round) by \(writer)"
                            do {
                                return (writer, .success(try await store.write { [mine] db in try db.update(mine) }))
                            } catch {
                                return (writer, .failure(error))
                            }
                        }
                    }
                    var all: [(String, Result<Note, any Error>)] = []
                    for await outcome in group { all.append(outcome) }
                    return all
                }
                let winners = outcomes.compactMap { try? $0.1.get() }
                try expectEqual(winners.count, 1, "round \(round): saves that succeeded (\(outcomes))")
                for case (_, .failure(let error)) in outcomes {
                    try expectEqual((error as? DatabaseError)?.kind, .conflict, "round \(round): the losing save's error \(error)")
                }
                let row = try await stored(store, 7)
                try expectEqual(row, winners.first, "round \(round): the stored row is the winner's")
                try expectEqual(row?.version, Int64(round), "round \(round): the version")
                current = row ?? current
            }
        },
        ConformanceCheck("records: upsert of a versioned record compares and bumps the version; the builder's update bumps it too") { context in
            let store = try await notesStore(context)
            let inserted = try await store.write { db in try db.upsert(Note(id: 3, title: "new")) }
            try expectEqual(inserted, Note(id: 3, title: "new", version: 0), "an upsert that inserts stores the record's version")
            let updated = try await store.write { db in try db.upsert(Note(id: 3, title: "upserted", version: 0)) }
            try expectEqual(updated, Note(id: 3, title: "upserted", version: 1), "an upsert over the same version")
            let error = try await expectError(.conflict, "an upsert of a copy read at version 0") {
                try await store.write { db in try db.upsert(Note(id: 3, title: "stale", version: 0)) }
            }
            try expectEqual(error.column, "version", "the conflict's column")
            try await expectError(.conflict, "an upsert on a named target of a copy read at version 0") {
                try await store.write { db in try db.upsert(Note(id: 3, title: "stale", version: 0), onConflict: { [$0.id] }) }
            }
            try expectEqual(try await stored(store, 3), updated, "the row after the refused upserts")
            let changed = try await store.write { db in try db.update(Note.where { $0.id.eq(3) }) { [$0.title.to("by the builder")] } }
            try expectEqual(changed, 1, "rows the builder changed")
            try expectEqual(try await stored(store, 3), Note(id: 3, title: "by the builder", version: 2), "the row after the builder's update")
            try await expectError(.conflict, "saving the copy read before the builder's update") {
                try await store.write { db in try db.update(updated) }
            }
            let reset = try await store.write { db in
                try db.update(Note.where { $0.id.eq(3) }) { [$0.title.to("reset"), $0.version.to(10)] }
            }
            try expectEqual(reset, 1, "rows the builder changed")
            try expectEqual(try await stored(store, 3)?.version, 10, "a builder update that sets the version itself")
        },
    ]
}

import Depot
import Foundation

/// insert, upsert, update, delete and find behave the same on every engine.
enum RecordChecks {
    static func itemsStore(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore()
        try await store.write { db in try Item.createTable(db) }
        return store
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("records: a batch insert stores rows larger than any buffer whole, among small ones, with their escapes") { context in
            // Engines stage a batch in buffers of a megabyte or so (PostgreSQL's
            // COPY): a row bigger than that must grow it, not cut or split it.
            let store = try await itemsStore(context)
            let big = String(repeating: "0123456789abcdé\t\\\n", count: 120_000) // 2.4 million bytes
            let items = (1...7).map { n -> Item in
                var item = Item.sample(n)
                item.id = Int64(n)
                if n % 3 == 1 { item.notes = big + "\(n)" } // rows 1, 4 and 7
                return item
            }
            try await store.write { db in try db.insert(contentsOf: items) }
            let read = try await store.read { db in
                try db.fetchAll(Item.self, "SELECT * FROM \(ident: "items") ORDER BY \(ident: "id")")
            }
            try expectEqual(read.count, items.count, "rows stored")
            for (stored, expected) in zip(read, items) where stored != expected {
                throw ConformanceFailure("row \(expected.id ?? 0) came back changed (notes \(stored.notes?.utf8.count ?? 0) bytes, stored \(expected.notes?.utf8.count ?? 0))")
            }
        },
        ConformanceCheck("records: insert leaves out a nil id and returns the generated one") { context in
            let store = try await itemsStore(context)
            let (first, second) = try await store.write { db in (try db.insert(Item.sample(1)), try db.insert(Item.sample(2))) }
            try expect(first.id != nil && second.id != nil, "inserted records come back with ids: \(first), \(second)")
            try expect(first.id != second.id, "two inserts get two ids")
            var expected = Item.sample(1)
            expected.id = first.id
            expected.dueDate = expected.dueDate.map(microsecondRounded)
            try expectEqual(first, expected, "the record as stored")
            let found = try await store.read { db in try db.find(Item.self, id: first.id) }
            try expectEqual(found, expected, "find by primary key")
            let missing = try await store.read { db in try db.find(Item.self, id: -5) }
            try expect(missing == nil, "find of a missing id is nil")
        },
        ConformanceCheck("records: update writes every column, nil as NULL") { context in
            let store = try await itemsStore(context)
            var item = try await store.write { db in try db.insert(Item(id: nil, title: "a", notes: "has notes", isDone: false, priority: .high, dueDate: edgeDates[3], score: 1)) }
            item.notes = nil
            item.dueDate = nil
            item.isDone = true
            let updated = item
            try await store.write { db in try db.update(updated) }
            let back = try await store.read { db in try db.find(Item.self, id: updated.id) }
            try expectEqual(back, updated, "the updated record")
            let nulls = try await store.read { db in
                try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items") WHERE \(ident: "notes") IS NULL AND \(ident: "dueDate") IS NULL")
            }
            try expectEqual(nulls, 1, "rows whose cleared properties are NULL")
        },
        ConformanceCheck("records: updating a record that does not exist is a notFound error") { context in
            let store = try await itemsStore(context)
            var ghost = Item.sample(1)
            ghost.id = 404
            let copy = ghost
            try await expectError(.notFound, "updating id 404") { try await store.write { db in try db.update(copy) } }
        },
        ConformanceCheck("records: upsert inserts, then updates the row with the same key") { context in
            let store = try await itemsStore(context)
            var item = Item.sample(3)
            item.id = 10
            let first = item
            let inserted = try await store.write { db in try db.upsert(first) }
            try expectEqual(inserted.title, "item 3", "the upserted title")
            item.title = "renamed"
            let second = item
            let updated = try await store.write { db in try db.upsert(second) }
            try expectEqual(updated.title, "renamed", "the title after the second upsert")
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") }
            try expectEqual(count, 1, "rows after two upserts of one key")
        },
        ConformanceCheck("records: delete reports whether a row was deleted") { context in
            let store = try await itemsStore(context)
            let item = try await store.write { db in try db.insert(Item.sample(1)) }
            let deleted = try await store.write { db in try db.delete(item) }
            let again = try await store.write { db in try db.delete(Item.self, id: item.id) }
            try expectEqual([deleted, again], [true, false], "deleting twice")
        },
        ConformanceCheck("records: a failed insert reports the constraint and inserts nothing") { context in
            let store = try await itemsStore(context)
            struct Untitled: Record { static var tableName: String { "items" }; var id: Int64?; var title: String?; var isDone: Bool; var priority: Int; var score: Double }
            try await expectError(.notNull, "inserting an item without a title") {
                try await store.write { db in try db.insert(Untitled(id: nil, title: nil, isDone: false, priority: 0, score: 0)) }
            }
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") }
            try expectEqual(count, 0, "rows after the failed insert")
        },
        ConformanceCheck("records: an insert without returning stores the row as insert does, and fails as insert does") { context in
            let store = try await itemsStore(context)
            var given = Item.sample(7)
            given.id = 70
            let row = given
            try await store.write { db in try db.insertWithoutReturning(row) }
            var expected = row
            expected.dueDate = expected.dueDate.map(microsecondRounded)
            let found = try await store.read { db in try db.find(Item.self, id: 70) }
            try expectEqual(found, expected, "the row as stored")
            // A generated key after it follows it, as after insert.
            let next = try await store.write { db in try db.insert(Item.sample(8)) }
            try expect((next.id ?? 0) > 70, "a generated id after an explicit one: \(String(describing: next.id))")
            try await expectError(.unique, "the same key again") {
                try await store.write { db in try db.insertWithoutReturning(row) }
            }
            struct Untitled: Record { static var tableName: String { "items" }; var id: Int64?; var title: String?; var isDone: Bool; var priority: Int; var score: Double }
            try await expectError(.notNull, "an item without a title") {
                try await store.write { db in try db.insertWithoutReturning(Untitled(id: 71, title: nil, isDone: false, priority: 0, score: 0)) }
            }
            let count = try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") }
            try expectEqual(count, 2, "rows after the failed inserts")
        },
    ]
}

import Depot
import Foundation

/// Records streamed in from an asynchronous sequence: one write, all or nothing.
extension StreamingChecks {
    static let inserts: [ConformanceCheck] = [
        ConformanceCheck("streaming: an asynchronous sequence of records is inserted in one write", insertsASequence),
        ConformanceCheck("streaming: an error of the sequence or of a record in the middle stores nothing", storesNothingOnAnError),
        ConformanceCheck("streaming: cancelling the inserting task stores nothing", storesNothingWhenCancelled),
    ]

    /// `count` items with ids 1...count, the last one changed by `change`.
    static func items(_ count: Int, _ change: (inout Item) -> Void = { _ in }) -> AsyncStream<Item> {
        var all: [Item] = []
        for n in 1...count {
            var item = Item.sample(n)
            item.id = Int64(n)
            all.append(item)
        }
        if let last = all.indices.last { change(&all[last]) }
        return AsyncStream { continuation in
            for item in all { continuation.yield(item) }
            continuation.finish()
        }
    }

    static func itemCount(_ store: Store) async throws -> Int {
        try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "items")") ?? -1 }
    }

    static func insertsASequence(_ context: ConformanceContext) async throws {
        let store = try await RecordChecks.itemsStore(context)
        let inserted = try await store.insert(contentsOf: items(20_000), bufferSize: 64)
        try expectEqual(inserted, 20_000, "the count returned")
        try expectEqual(try await itemCount(store), 20_000, "rows stored")
        let last = try await store.read { db in try db.find(Item.self, id: Int64(20_000)) }
        var expected = Item.sample(20_000)
        expected.id = 20_000
        try expectEqual(last, expected, "the last record as stored")
        try expectEqual(try await store.insert(contentsOf: AsyncStream<Item> { $0.finish() }), 0, "an empty sequence")
    }

    static func storesNothingOnAnError(_ context: ConformanceContext) async throws {
        let store = try await RecordChecks.itemsStore(context)
        struct SourceFailed: Error {}
        let failing = AsyncThrowingStream<Item, any Error> { continuation in
            for n in 1...5_000 {
                var item = Item.sample(n)
                item.id = Int64(n)
                continuation.yield(item)
            }
            continuation.finish(throwing: SourceFailed())
        }
        do {
            try await store.insert(contentsOf: failing, bufferSize: 100)
            throw ConformanceFailure("a failing sequence inserted its records")
        } catch is SourceFailed {}
        try expectEqual(try await itemCount(store), 0, "nothing stored after the sequence failed")

        let error = try await expectError(.unique, "a duplicate key at the end") {
            try await store.insert(contentsOf: items(5_001) { $0.id = 17 }, bufferSize: 100)
        }
        try expect(error.table == "items" || error.table == nil, "the error names the table, or none: \(error)")
        try expectEqual(try await itemCount(store), 0, "nothing stored after the duplicate")

    }

    static func storesNothingWhenCancelled(_ context: ConformanceContext) async throws {
        let store = try await RecordChecks.itemsStore(context)
        let (endless, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let feeder = Task {
            var n = 0
            while !Task.isCancelled {
                n += 1
                var item = Item.sample(n)
                item.id = Int64(n)
                continuation.yield(item)
                if n % 100 == 0 { try? await Task.sleep(for: .milliseconds(1)) }
            }
            continuation.finish()
        }
        let inserting = Task { try await store.insert(contentsOf: endless, bufferSize: 10) }
        try await Task.sleep(for: .milliseconds(200))
        inserting.cancel()
        do {
            _ = try await inserting.value
            throw ConformanceFailure("a cancelled insert returned")
        } catch is CancellationError {}
        feeder.cancel()
        try expectEqual(try await itemCount(store), 0, "nothing stored after the cancellation")
    }
}

/// Records streamed out through the engine's bulk export path.
extension StreamingChecks {
    static let exports: [ConformanceCheck] = [
        ConformanceCheck("streaming: copyRows gives the records rows gives, in order, with or without bound values", copiesRows),
    ]

    static func copiesRows(_ context: ConformanceContext) async throws {
        let store = try await RecordChecks.itemsStore(context)
        try await store.insert(contentsOf: items(3_000))
        for query in [Item.all.order { $0.id.ascending() }, Item.where { $0.isDone }.order { $0.dueDate.descending() },
                      Item.all.order { [$0.score.ascending(), $0.title.descending()] }, Item.where { $0.score > 100 }.order { $0.id.ascending() }] {
            var copied: [Item] = []
            for try await item in store.copyRows(query, bufferSize: 16) { copied.append(item) }
            let fetched = try await store.read { db in try db.fetchAll(query) }
            try expectEqual(copied.count, fetched.count, "as many records")
            try expect(copied == fetched, "the same records in the same order")
        }
        var early = 0
        for try await _ in store.copyRows(Item.all.order { $0.id.ascending() }, bufferSize: 4) {
            early += 1
            if early == 10 { break }
        }
        try expectEqual(try await itemCount(store), 3_000, "leaving the loop early ends the access; the store goes on")
        let afterwards = try await store.read { db in try db.fetchOne(Item.where { $0.id.eq(Int64(2_999)) }) }
        try expect(afterwards?.id == 2_999, "a read after an export left early")
    }
}

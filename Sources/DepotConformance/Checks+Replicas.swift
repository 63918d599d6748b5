import Depot
import Foundation

/// Commit positions and read routes: a read routed to a replica that must have
/// caught up with a write sees it, on an engine with replicas and without.
enum ReplicaChecks {
    static func notes(_ context: ConformanceContext, _ configuration: Store.Configuration = Store.Configuration()) async throws -> Store {
        let store = try await context.makeStore(configuration)
        try await store.write { db in try createTable(db, "notes", [("id", .integer, "PRIMARY KEY")]) }
        return store
    }

    static func count(_ db: Database) throws -> Int? {
        try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "notes")")
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("replicas: a read caught up with a write's position sees the write; positions never go back") { context in
            let store = try await notes(context)
            let first = try await store.writeReturningPosition { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(1))") }
            try expectEqual(try await store.read(from: .replica(caughtUpWith: first.position, timeout: .seconds(120))) { db in try count(db) }, 1,
                            "rows seen by a read caught up with the insert")
            try expectEqual(try await store.read(from: .primary) { db in try count(db) }, 1, "rows seen on the primary")
            let second = try await store.writeReturningPosition { db in
                try db.execute("INSERT INTO \(ident: "notes") VALUES (\(2))")
                return "returned"
            }
            try expectEqual(second.value, "returned", "the closure's value")
            // An engine with a log moves forward with every write; one without (SQLite) says 0 every time.
            try expect(first.position.rawValue == 0 ? second.position.rawValue == 0 : second.position > first.position,
                       "a later write's position \(second.position) follows the earlier one's \(first.position)")
            if let last = store.lastCommitPosition {
                try expect(last >= second.position, "the store's last position \(last) is at least its last write's \(second.position)")
            }
            try expectEqual(try await store.read(from: .replica(caughtUpWith: second.position, timeout: .seconds(120))) { db in try count(db) }, 2,
                            "rows seen by a read caught up with the second insert")
        },
        ConformanceCheck("replicas: a store that reads its writes sees each of them at once, on any route") { context in
            var configuration = Store.Configuration()
            configuration.readYourWritesTimeout = .seconds(120)
            let store = try await notes(context, configuration)
            for id in 1...3 {
                try await store.write { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(id))") }
                try expectEqual(try await store.read { db in try count(db) }, Optional(id), "rows seen by the read after insert \(id)")
            }
        },
        ConformanceCheck("replicas: waiting for a position no replica reaches is a timeout error; without replicas there is nothing to wait for") { context in
            let store = try await notes(context)
            let beyond = CommitPosition(rawValue: UInt64(Int64.max))
            if store.hasReplicas {
                let error = try await expectError(.timeout, "a read waiting for a position no replica has reached") {
                    try await store.read(from: .replica(caughtUpWith: beyond, timeout: .milliseconds(300))) { db in try count(db) }
                }
                try expectMentions(error.message, [beyond.description, "0.3 seconds"], "the timeout's message")
            } else {
                try expectEqual(try await store.read(from: .replica(caughtUpWith: beyond, timeout: .milliseconds(300))) { db in try count(db) }, 0,
                                "a read on a store without replicas")
            }
            // A write that runs no statement sends nothing; any read has caught up with it.
            let idle = try await store.writeReturningPosition { _ in }
            try expectEqual(try await store.read(from: .replica(caughtUpWith: idle.position, timeout: .seconds(120))) { db in try count(db) }, 0,
                            "a read caught up with a write that ran nothing")
        },
    ]
}

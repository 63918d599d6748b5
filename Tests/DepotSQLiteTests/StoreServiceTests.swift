import Depot
import DepotLifecycle
import DepotSQLite
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// A store in a ServiceGroup shuts down with the group: in-flight work finishes, new work is refused.
@Suite struct StoreServiceTests {
    @Test func aGroupsGracefulShutdownLetsTheWriteInFlightFinishThenClosesTheStore() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("depot-service-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try Store.sqlite(at: path)
        try await store.write { db in try db.execute("CREATE TABLE \(ident: "t") (\(ident: "x") \(type: .integer))") }
        let group = ServiceGroup(configuration: .init(services: [StoreService(store)], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        // Events, not sleeps, order it: the write is in flight when the shutdown
        // starts, and goes on only once the store refuses new work.
        let (writing, writingStarted) = AsyncStream<Void>.makeStream()
        let proceed = DispatchSemaphore(value: 0)
        let write = Task {
            try await store.write { db in
                writingStarted.yield()
                _ = proceed.wait(timeout: .now() + 120)
                return try db.execute("INSERT INTO \(ident: "t") VALUES (\(1))")
            }
        }
        for await _ in writing { break }
        await group.triggerGracefulShutdown()
        let deadline = ContinuousClock.now + .seconds(120)
        while (try? await store.read({ db in try db.fetchOne(Int.self, "SELECT 1") })) != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        proceed.signal()
        try await running.value
        #expect(try await write.value == 1)
        let error = await #expect(throws: DatabaseError.self) { try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") } }
        #expect(error?.kind == .connection)
        // The committed row is there for the next process.
        let reopened = try Store.sqlite(at: path)
        #expect(try await reopened.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "t")") } == 1)
        await reopened.close()
    }
}

import Depot
import Testing

/// What the store does when a connection breaks: it opens another in its
/// place, unless the database lived in that connection (an in-memory SQLite
/// database), where another would be an empty database passed off as the same.
@Suite struct ConnectionLossTests {
    /// A store on the fake engine whose next rollback fails, which breaks the connection.
    func storeWhoseRollbackFails(databaseLivesInItsConnection: Bool) async throws -> (Store, FakeLog) {
        let log = FakeLog()
        let store = Store(driver: FakeDriver(log: log, databaseLivesInItsConnection: databaseLivesInItsConnection))
        try await store.write { db in try db.execute("CREATE THING") }
        log.failures = [("ROLLBACK", DatabaseError(.connection, "the rollback failed"))]
        await #expect(throws: DatabaseError.self) {
            try await store.write { db in
                try db.execute("WRITE THING")
                throw DatabaseError(.unique, "the access fails, so it rolls back")
            }
        }
        log.failures = []
        return (store, log)
    }

    @Test func aBrokenConnectionIsReplacedAndTheNextAccessWorks() async throws {
        let (store, log) = try await storeWhoseRollbackFails(databaseLivesInItsConnection: false)
        try await store.write { db in try db.execute("WRITE AGAIN") }
        #expect(log.opened == 2)
        await store.close()
    }

    @Test func aDatabaseThatLivedInItsBrokenConnectionIsGoneAndSaysSoInsteadOfComingBackEmpty() async throws {
        let (store, log) = try await storeWhoseRollbackFails(databaseLivesInItsConnection: true)
        for _ in 0..<2 {
            let error = await #expect(throws: DatabaseError.self) {
                try await store.read { db in try db.execute("READ THING") }
            }
            #expect(error?.kind == .connection)
            #expect(error?.message == "the database lived in its one connection, which broke (its rollback failed: connection: the rollback failed): its data is gone; "
                + "the store opens no empty database in its place (open a new store)")
        }
        #expect(log.opened == 1, "no empty database was opened in its place")
        await store.close()
    }

    /// SQLite rolls back the whole transaction on an interrupt (a cancelled
    /// task): a savepoint's rollback then finds no savepoint. That is no broken
    /// connection, and the access can only end: no statement runs outside the
    /// transaction. (A stress round here lost an in-memory store this way:
    /// "its rollback to a savepoint failed: no such savepoint".)
    @Test func aTransactionTheEngineRolledBackWholeEndsTheAccessAndKeepsTheConnection() async throws {
        let log = FakeLog()
        let store = Store(driver: FakeDriver(log: log, databaseLivesInItsConnection: true))
        try await store.write { db in try db.execute("CREATE THING") }
        log.endsTransaction = "INTERRUPTED WRITE"
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in
                try db.execute("FIRST WRITE")
                try? db.savepoint { db in try db.execute("INTERRUPTED WRITE") }
                try db.execute("A WRITE AFTER THE TRANSACTION ENDED")
            }
        }
        #expect(error?.kind == .misuse, "\(String(describing: error))")
        #expect(!log.all.contains("A WRITE AFTER THE TRANSACTION ENDED"), "no statement ran outside the transaction")
        log.endsTransaction = nil
        try await store.write { db in try db.execute("NEXT WRITE") }
        #expect(log.opened == 1, "the connection, and the database in it, stayed")
        await store.close()
    }
}

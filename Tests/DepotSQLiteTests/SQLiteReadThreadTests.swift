import CSQLite
import Depot
import DepotSQLite
import Foundation
import Testing

/// Where a read's closure runs on SQLite: on the calling task's thread where
/// the file's readers never wait (WAL mode, memory), so the read makes no hop
/// to a connection's queue and back; on the connection's queue otherwise.
@Suite struct SQLiteReadThreadTests {
    /// Whether a read's closure ran on the thread that called `read`. A read
    /// before it opens a reader, so that this one takes an idle connection
    /// and nothing suspends between the call and the closure.
    func readRunsOnCallingThread(_ store: Store) async throws -> Bool {
        _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
        let caller = pthread_self()
        let inside = try await store.read { _ in pthread_self() }
        return pthread_equal(caller, inside) != 0
    }

    func writeRunsOnCallingThread(_ store: Store) async throws -> Bool {
        let caller = pthread_self()
        let inside = try await store.write { _ in pthread_self() }
        return pthread_equal(caller, inside) != 0
    }

    @Test func aReadOfAFileInWALModeRunsOnTheCallingThreadAndAWriteOnItsConnectionsQueue() async throws {
        let store = try Store.sqlite(at: try temporaryDatabasePath())
        #expect(try await readRunsOnCallingThread(store))
        #expect(try await !writeRunsOnCallingThread(store))
        await store.close()
    }

    @Test func aReadOfAnInMemoryDatabaseRunsOnTheCallingThread() async throws {
        let store = Store.sqliteInMemory()
        #expect(try await readRunsOnCallingThread(store))
        #expect(try await !writeRunsOnCallingThread(store))
        await store.close()
    }

    @Test func withReadsRunOnCallingThreadOffEveryReadRunsOnItsConnectionsQueue() async throws {
        var configuration = SQLiteConfiguration()
        configuration.store.readsRunOnCallingThread = false
        let store = try Store.sqlite(at: try temporaryDatabasePath(), configuration)
        #expect(try await !readRunsOnCallingThread(store))
        await store.close()
    }

    /// Another app's file in a rollback journal mode, opened read-only while
    /// that app writes: a reader there may wait for the writer's commit (up
    /// to the busy timeout), so its reads stay off Swift's cooperative threads.
    @Test func aReadOfAFileInRollbackJournalModeRunsOnItsConnectionsQueue() async throws {
        let path = try temporaryDatabasePath()
        var other: OpaquePointer?
        #expect(sqlite3_open(path, &other) == SQLITE_OK)
        defer { sqlite3_close(other) }
        let setUp = "PRAGMA journal_mode = DELETE; CREATE TABLE notes (id INTEGER PRIMARY KEY); BEGIN IMMEDIATE; INSERT INTO notes VALUES (1)"
        #expect(sqlite3_exec(other, setUp, nil, nil, nil) == SQLITE_OK)
        #expect(FileManager.default.fileExists(atPath: path + "-journal"), "the other app's write holds a rollback journal")
        var looking = SQLiteConfiguration()
        looking.isReadOnly = true
        let store = try Store.sqlite(at: path, looking)
        #expect(try await !readRunsOnCallingThread(store))
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM notes") } == 0, "the uncommitted row unseen")
        await store.close()
        #expect(sqlite3_exec(other, "COMMIT", nil, nil, nil) == SQLITE_OK)
    }
}

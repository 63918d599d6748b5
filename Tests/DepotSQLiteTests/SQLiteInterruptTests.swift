import Depot
@testable import DepotSQLite
import Foundation
import Testing

/// An interrupt that lands between statements (a task cancelled after its last
/// statement, while a read of it was still open) must not make the rollback
/// fail: a failed rollback marks the connection broken, and an in-memory
/// store's one connection, replaced, is an empty database.
@Suite struct SQLiteInterruptTests {
    @Test func aRollbackAfterAnInterruptStillRollsBack() throws {
        let connection = try SQLiteConnection(path: ":memory:", role: .writer, configuration: SQLiteConfiguration(), isMemory: true)
        try connection.execute(script: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);")
        try connection.beginTransaction(TransactionOptions(.write))
        try connection.execute(script: "INSERT INTO t VALUES (4)")
        let reading = try connection.prepare("SELECT x FROM t")
        _ = try reading.step()
        connection.interrupt()
        try connection.rollbackTransaction()
        #expect(!connection.isInTransaction)
        #expect(connection.isUsable)
    }

    @Test func aRollbackToASavepointAndItsReleaseAfterAnInterruptStillWork() throws {
        let connection = try SQLiteConnection(path: ":memory:", role: .writer, configuration: SQLiteConfiguration(), isMemory: true)
        try connection.execute(script: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);")
        try connection.beginTransaction(TransactionOptions(.write))
        try connection.createSavepoint(named: "depot_savepoint_1")
        try connection.execute(script: "INSERT INTO t VALUES (4)")
        let reading = try connection.prepare("SELECT x FROM t")
        _ = try reading.step()
        connection.interrupt()
        try connection.rollbackToSavepoint(named: "depot_savepoint_1")
        _ = try reading.step()
        connection.interrupt()
        try connection.releaseSavepoint(named: "depot_savepoint_1")
        #expect(connection.isInTransaction, "the transaction goes on")
        try connection.commitTransaction()
        let count = try connection.prepare("SELECT count(*) FROM t")
        _ = try count.step()
        #expect(try count.value(at: 0) == .integer(3), "the savepoint's insert was undone")
        #expect(connection.isUsable)
    }
}

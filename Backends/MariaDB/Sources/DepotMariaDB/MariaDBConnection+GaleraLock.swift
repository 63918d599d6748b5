import CMariaDB
import Depot
import Foundation

extension MariaDBConnection {
    /// The table of migration lock rows on a Galera cluster.
    static let lockTable = "depot_migration_locks"
    /// How long a lock row holds when its holder stops renewing it (its
    /// process died), in whole seconds: then the next migrator takes it.
    var lockLeaseSeconds: Int64 { configuration.migrationLockLease.components.seconds }

    /// The migration lock on a Galera cluster, where `GET_LOCK` is node-local
    /// and refused ("not supported in cluster"): a row of
    /// `depot_migration_locks`, inserted and committed from a connection of
    /// its own so that the cluster certifies it before the migration runs.
    /// Two migrators on two nodes insert the same key; one commits, the other
    /// meets the row (1062) or loses certification (1213, in its insert or
    /// in the delete of an expired row before it), and waits for the row
    /// to go. The row is deleted after this session's transaction
    /// (``releaseNamedLocks()``), or ignored once its lease has run out; its
    /// holder renews the lease while it holds the row
    /// (``MariaDBLockRenewal``), so a migration longer than the lease keeps it.
    ///
    /// Why a row: a Galera cluster replicates rows, and certification orders
    /// two writes of one row across nodes; it replicates no lock. The
    /// migration's DDL commits at once and replicates in total order, so the
    /// lock must outlive the access's transactions, as a row does.
    ///
    /// - Throws: `busy` when another migrator held the lock for
    ///   ``MariaDBDialect/migrationLockSeconds``.
    func lockRowForMigration(key: Int64) throws {
        guard lockLeaseSeconds >= 1 else {
            throw DatabaseError(.misuse, "MariaDBConfiguration.migrationLockLease is \(configuration.migrationLockLease): at least 1 second")
        }
        let holder = UUID().uuidString
        let side = try Self.connect(configuration, node: node)
        defer { mysql_close(side) }
        try Self.run(side, """
            CREATE TABLE IF NOT EXISTS `\(Self.lockTable)` (`name` BIGINT NOT NULL PRIMARY KEY, \
            `holder` CHAR(36) NOT NULL, `expires` DATETIME(6) NOT NULL) ENGINE=InnoDB
            """)
        let deadline = Date().addingTimeInterval(TimeInterval(MariaDBDialect.migrationLockSeconds))
        while true {
            do {
                // A row whose holder died: its lease is over. This delete can
                // lose certification too (1213) when another node's insert of
                // the key is applied here while it runs, even if it deletes
                // nothing: then the row is held, as below.
                try Self.run(side, "DELETE FROM `\(Self.lockTable)` WHERE `name` = \(key) AND `expires` < UTC_TIMESTAMP(6)")
                try Self.run(side, """
                    INSERT INTO `\(Self.lockTable)` VALUES (\(key), '\(holder)', \
                    UTC_TIMESTAMP(6) + INTERVAL \(lockLeaseSeconds) SECOND)
                    """)
                heldLockRow = (key, holder, MariaDBLockRenewal(configuration: configuration, node: node, key: key, holder: holder,
                                                               leaseSeconds: lockLeaseSeconds))
                return
            } catch let error as DatabaseError where error.kind == .unique || error.kind == .serialization {
                // Held, or another node's insert certified first.
            }
            guard Date() < deadline else {
                throw DatabaseError(.busy, "another migrator held the migration lock row for \(MariaDBDialect.migrationLockSeconds) seconds",
                                    engineCode: "depot_migration_locks")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// How many times the delete of a held lock row is tried when it loses
    /// certification or is aborted by a write applied from another node.
    static let lockReleaseAttempts = 50

    /// Deletes this session's lock row once its transaction has ended.
    ///
    /// The delete runs after the transaction's COMMIT (or ROLLBACK), in
    /// autocommit, and on Galera it can fail with a `serialization` error
    /// (1213) like any write. CI met that once: the row stayed, and the four
    /// migrators waiting for it failed after
    /// ``MariaDBDialect/migrationLockSeconds``. The transaction it followed
    /// has committed, so the delete, which only this holder's row matches, is
    /// tried again; and should it still fail, the error is a `migration` one,
    /// never the `serialization` a ``WriteRetry`` answers by running the
    /// committed body again.
    ///
    /// - Throws: `migration` when the row could not be deleted: other
    ///   migrators wait until its lease ends.
    func deleteLockRow(key: Int64, holder: String) throws {
        let sql = "DELETE FROM `\(Self.lockTable)` WHERE `name` = \(key) AND `holder` = '\(holder)'"
        var attempt = 1
        while true {
            do {
                try run(sql)
                return
            } catch let error as DatabaseError where error.kind == .serialization && attempt < Self.lockReleaseAttempts {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02)
            } catch let error as DatabaseError {
                throw DatabaseError(.migration, "the transaction ended, but its migration lock row was not deleted "
                                    + "(other migrators wait until its lease of \(lockLeaseSeconds) seconds ends): \(error.message)",
                                    engineCode: error.engineCode, sql: sql)
            }
        }
    }

    /// Runs one statement on a bare session (autocommit), checking its result.
    static func run(_ mysql: UnsafeMutablePointer<MYSQL>, _ sql: String) throws {
        if sql.withCString({ mysql_real_query(mysql, $0, UInt(strlen($0))) }) != 0 {
            throw MariaDBError.make(mysql, sql: sql, showsValues: false)
        }
        if let result = mysql_store_result(mysql) { mysql_free_result(result) }
    }
}

/// Renews a held Galera migration lock row's lease from a connection and a
/// thread of its own, every quarter of the lease, until ``stop()``: the
/// holder's own session is busy with its migration meanwhile. A renewal that
/// fails (a lost connection) is tried again at the next; a row no longer
/// this holder's is left alone (the update names the holder).
final class MariaDBLockRenewal: @unchecked Sendable {
    // Unchecked: `stopped` is read and written under `condition` alone.
    private let condition = NSCondition()
    private var stopped = false

    init(configuration: MariaDBConfiguration, node: MariaDBConfiguration.Node, key: Int64, holder: String, leaseSeconds: Int64) {
        let sql = """
            UPDATE `\(MariaDBConnection.lockTable)` SET `expires` = UTC_TIMESTAMP(6) + INTERVAL \(leaseSeconds) SECOND \
            WHERE `name` = \(key) AND `holder` = '\(holder)'
            """
        let interval = TimeInterval(leaseSeconds) / 4
        let thread = Thread { [self] in
            var side: UnsafeMutablePointer<MYSQL>?
            defer { if let side { mysql_close(side) } }
            while waitUntilNextRenewal(interval) {
                do {
                    let session = try side ?? MariaDBConnection.connect(configuration, node: node)
                    side = session
                    try MariaDBConnection.run(session, sql)
                } catch {
                    if let broken = side { mysql_close(broken) }
                    side = nil
                }
            }
        }
        thread.name = "depot.mariadb.lock-renewal"
        thread.start()
    }

    /// Waits `interval`; false once stopped.
    private func waitUntilNextRenewal(_ interval: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(interval)
        while !stopped, condition.wait(until: deadline) {}
        return !stopped
    }

    /// Ends the renewals; the thread closes its connection and ends.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

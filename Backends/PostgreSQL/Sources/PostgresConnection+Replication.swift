import CLibPQ
import Depot
import Foundation

extension PostgresConnection: ReplicatedConnection {
    /// Sends `COMMIT` and the WAL insert position in one message (no round trip
    /// of its own). The insert position is at or past the end of the commit's
    /// record; when it sits just after a page header (the record before it
    /// ended on a page boundary), the header is taken off, because a standby
    /// that applied everything reports the boundary, and would never reach the
    /// position past it while the primary stays idle.
    func commitReturningPosition() throws -> CommitPosition {
        settle()
        if pendingBegin != nil {
            // The write ran no statement: nothing reached the server, nothing to see.
            pendingBegin = nil
            return CommitPosition(rawValue: 0)
        }
        commitNeedNotWait = false
        try finishStreaming()
        guard PQsendQuery(handle, "COMMIT; " + Self.positionQuery) == 1 else { throw PostgresError.connection(handle, "cannot send COMMIT") }
        var results: [OpaquePointer] = []
        while let result = PQgetResult(handle) { results.append(result) }
        defer { results.forEach { PQclear($0) } }
        guard let commit = results.first else { throw PostgresError.connection(handle, "no answer to COMMIT") }
        try Self.checkCommit(commit, handle, showsValues: showsValues)
        // Committed. The position follows; were it missing, ask once more on its own.
        if results.count >= 2, PQresultStatus(results[1]) == PGRES_TUPLES_OK, let position = Self.position(from: results[1]) {
            return position
        }
        let again = PQexec(handle, Self.positionQuery)
        defer { PQclear(again) }
        guard PQresultStatus(again) == PGRES_TUPLES_OK, let again, let position = Self.position(from: again) else {
            throw PostgresError.connection(handle, "the transaction committed, but the server did not say where its commit ends in the log")
        }
        return position
    }

    /// The WAL insert position, its offset in its WAL segment, and the WAL page size.
    static let positionQuery = "SELECT l::text, (pg_walfile_name_offset(l)).file_offset, current_setting('wal_block_size')::int "
        + "FROM pg_current_wal_insert_lsn() AS l"

    /// The position in a row of (lsn, offset in its WAL segment, WAL page size).
    private static func position(from result: OpaquePointer) -> CommitPosition? {
        guard PQntuples(result) == 1, PQnfields(result) == 3,
              let text = PQgetvalue(result, 0, 0), var lsn = parseLSN(String(cString: text)),
              let offsetText = PQgetvalue(result, 0, 1), let offset = UInt64(String(cString: offsetText)),
              let pageText = PQgetvalue(result, 0, 2), let page = UInt64(String(cString: pageText)), page > 0 else { return nil }
        // A segment's first page has a long header (40 bytes), every other page a short one (24).
        if offset == 40, lsn >= 40 {
            lsn -= 40
        } else if offset % page == 24, lsn >= 24 {
            lsn -= 24
        }
        return CommitPosition(rawValue: lsn)
    }

    /// `16/B374D848` as one number.
    static func parseLSN(_ text: String) -> UInt64? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16),
              high <= UInt64(UInt32.max), low <= UInt64(UInt32.max) else { return nil }
        return high << 32 | low
    }

    /// Polls the server's replay position (1 ms, doubling to 20 ms) until it
    /// reaches `position`. A server that is not in recovery (the primary, or a
    /// standby promoted since) has everything and returns at once.
    func waitForReplay(to position: CommitPosition, timeout: Duration, shouldStop: () -> Bool) throws {
        settle()
        try finishStreaming()
        let deadline = ContinuousClock.now + timeout
        var pause = 0.001
        while true {
            let result = PQexec(handle, "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text")
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_TUPLES_OK, PQntuples(result) == 1 else {
                throw PostgresError.make(result, handle, showsValues: showsValues)
            }
            let inRecovery = PQgetvalue(result, 0, 0).map { String(cString: $0) == "t" } ?? false
            if !inRecovery { return }
            let replayed = PQgetisnull(result, 0, 1) == 0 ? PQgetvalue(result, 0, 1).flatMap { Self.parseLSN(String(cString: $0)) } : nil
            if let replayed, replayed >= position.rawValue { return }
            if shouldStop() { return }
            guard ContinuousClock.now < deadline else {
                let applied = replayed.map { CommitPosition(rawValue: $0).description } ?? "nothing yet"
                throw DatabaseError(.timeout, "the standby at \(server) had not applied the log up to \(position) within \(timeout) (it has applied up to \(applied))")
            }
            Thread.sleep(forTimeInterval: pause)
            pause = min(pause * 2, 0.02)
        }
    }
}

@_spi(Sync) import Depot
import Foundation

extension SyncServer {
    /// Applies a push in one transaction: every change merged, or none.
    ///
    /// Accounts: every row belongs to the account that owns its root (the
    /// row itself for a table without parents; its first parent's root
    /// otherwise), and an account writes only the rows of its roots and of
    /// roots shared with it. A server without accounts passes the same
    /// account (the default, empty) for everyone.
    ///
    /// Exactly once: a push is a duplicate only when it is the same push (its
    /// number and the hash of its content); a push under a number the device
    /// used before for other content comes from a copy of the device (a
    /// restored backup) and is refused with ``SyncPushRefused/Reason/deviceCopied``,
    /// which a ``SyncClient`` answers by going on under a new identity.
    ///
    /// - Parameters:
    ///   - push: the device's push.
    ///   - account: who pushes, as the server authenticated them.
    /// - Throws: ``SyncAccessDenied`` for a push that names a row of a root
    ///   the account may not write, or a device of another account;
    ///   ``SyncPushRefused`` for a stamp more than ``maximumDrift`` ahead of
    ///   the server's clock, a negative stamp, a key that is not of its
    ///   table's key type and form, or a copied device; `misuse` for a push
    ///   that names a table or column the server does not sync. Nothing is
    ///   applied. A change to a root that was shared with the account and no
    ///   longer is (made before its device heard) is dropped, and named in the
    ///   answer; so is, from a device behind the compaction horizon, a change
    ///   to a row it had from the server and the server forgot after its
    ///   delete (``compact(olderThan:now:)``). Once the server has compacted,
    ///   a change to a root the account may not write is dropped, not
    ///   refused: the record that would tell an honest device's late change
    ///   from a forged one may be gone. A device behind the horizon
    ///   that speaks a protocol from before compaction is refused
    ///   (``SyncPushRefused/Reason/deviceOlder``).
    public func handle(_ push: SyncPush, account: String = "") async throws -> SyncPushAnswer {
        try checkDevice(protocolVersion: push.protocolVersion, schema: push.schema)
        do {
            let answer = try await apply(push, account: account)
            await refreshStatisticsIfGrown(by: push.changes.count)
            return answer
        } catch let duplicate as Duplicate {
            return duplicate.answer
        }
    }

    /// The refusal of a push under a number this device used before for another push.
    static func copiedDevice(_ push: SyncPush, maximumDrift: Duration) -> SyncPushRefused {
        SyncPushRefused(.deviceCopied, latestAccepted: HybridClock.bound(at: Date(), maximumDrift: maximumDrift),
                        message: "push \(push.number) of this device was another push: the device's database was restored "
                            + "from a backup or copied; it goes on under a new device identity")
    }

    /// What this server syncs.
    public var schema: SyncSchema { SyncSchema(tables) }

    /// Refuses a device that speaks a later protocol or syncs a table or
    /// column this server does not (``SyncPushRefused/Reason/deviceNewer``).
    func checkDevice(protocolVersion: Int?, schema: SyncSchema?) throws {
        let latest = HybridClock.bound(at: Date(), maximumDrift: maximumDrift)
        if let protocolVersion, protocolVersion > SyncSchema.protocolVersion {
            throw SyncPushRefused(.deviceNewer, latestAccepted: latest,
                                  message: "this device speaks sync protocol \(protocolVersion) and the server \(SyncSchema.protocolVersion): "
                                    + "update the server; the device keeps its changes until then")
        }
        guard let schema else { return }
        let missing = schema.missing(from: self.schema)
        guard !missing.isEmpty else { return }
        let named = missing.prefix(3).joined(separator: ", ") + (missing.count > 3 ? " and \(missing.count - 3) more" : "")
        throw SyncPushRefused(.deviceNewer, latestAccepted: latest,
                              message: "this device syncs \(named), which the server does not yet: update the server; the device keeps its changes until then")
    }

    /// A push applied before: its transaction rolls back, and it is answered as it was then.
    struct Duplicate: Error { var answer: SyncPushAnswer }

    /// The hash of a push's content: its changes in the wire form, keys sorted.
    static func contentHash(_ push: SyncPush) throws -> String {
        var writer = JSONWriter(capacity: push.changes.count * 512)
        SyncChange.write(push.changes, to: &writer)
        return SHA256.hex(Data(writer.bytes))
    }

    /// Refuses a push whose stamps or keys no replica would send, before anything is written.
    func validate(_ push: SyncPush, now: Date) throws {
        let nowMilliseconds = HybridClock.milliseconds(now)
        let latest = HybridClock.bound(at: now, maximumDrift: maximumDrift)
        let bound = latest.milliseconds
        for change in push.changes {
            guard let table = tables.first(where: { $0.name == change.table }) else {
                throw DatabaseError(.misuse, "a push names the table \(change.table), which this server does not sync")
            }
            if let unknown = change.row.registers.keys.first(where: { !table.columns.contains($0) }) {
                throw DatabaseError(.misuse, "a push names the column \(unknown) of \(change.table), which this server does not sync")
            }
            for (column, register) in change.row.registers.sorted(by: { $0.key < $1.key }) {
                guard register.stamp.time.rawValue >= 0 else {
                    throw SyncPushRefused(.malformedStamp, latestAccepted: latest,
                                          message: "a change of \(table.name) stamps \(column) before 1970; a replica's clock never does")
                }
                if register.stamp.time.milliseconds > bound {
                    let ahead = register.stamp.time.milliseconds - nowMilliseconds
                    throw SyncPushRefused(.stampAhead, latestAccepted: latest,
                                          message: "a change of \(table.name) stamps \(column) \(Self.span(milliseconds: ahead)) ahead of the server's clock "
                                            + "(at most \(Self.span(milliseconds: HybridClock.wholeMilliseconds(maximumDrift))) is taken): check the device's clock")
                }
            }
            guard change.row.causalLength >= 0 else {
                throw DatabaseError(.misuse, "a change of \(table.name) has a negative causal length")
            }
            try table.checkKey(change, latestAccepted: latest)
        }
    }

    /// `3 days`, `2 h`, `40 s`: a span for a message.
    static func span(milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        if seconds >= 2 * 86_400 { return "\(seconds / 86_400) days" }
        if seconds >= 2 * 3600 { return "\(seconds / 3600) h" }
        if seconds >= 120 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }

    /// Applies a device's push or, with `edits`, the server's own edits (made
    /// into a push inside the transaction: stamped by the server's clock, after
    /// every stamp the rows hold, from a writer that has seen every version).
    func apply(_ push: SyncPush, account: String, edits: [SyncEdit]? = nil) async throws -> SyncPushAnswer {
        if edits == nil { try validate(push, now: Date()) }
        let hash = edits == nil ? try Self.contentHash(push) : ""
        let (tables, resolver, afterApplying, maximumDrift) = (self.tables, self.resolver, self.afterApplying, self.maximumDrift)
        return try await store.write { db in
            try Self.planForEachPage(db)
            // The counter row first: its lock orders pushes, so versions follow commits.
            let (version, node, hlc) = try Self.nextVersion(db)
            var clock = ServerClock(node: node, last: HybridTimestamp(rawValue: hlc))
            var push = push
            if let edits {
                (push.client, push.seen) = (node, version - 1)
                push.changes = try Self.changes(for: edits, db, tables, clock: &clock)
            }
            let client = push.client.uuidString.lowercased()
            struct Client: Decodable { var last_push: Int64; var account: String }
            let known = edits != nil ? nil : try db.fetchOne(Client.self, "SELECT \"last_push\", \"account\" FROM \(ident: Self.clients) WHERE \"client\" = \(client)")
            if let known, known.account != account {
                throw SyncAccessDenied(description: "the push names a device of another account")
            }
            let last = known?.last_push ?? 0
            if push.number <= last {
                struct Logged: Decodable { var hash: String; var answer: Data }
                let logged = try db.fetchOne(Logged.self, "SELECT \"hash\", \"answer\" FROM \(ident: Self.pushes) WHERE \"client\" = \(client) AND \"number\" = \(push.number)")
                // A retry of an applied push, whose answer was lost: nothing again, and the same answer.
                // The log keeps each device's last push only: a device retries no other (the one in
                // flight is the next). An earlier number comes from a copy of the device (or is a
                // request the network delivered late, whose answer no one reads): refused, nothing
                // applied. The last push of a server from before the log has none: taken as the same.
                guard let logged else {
                    if push.number == last { throw Duplicate(answer: SyncPushAnswer(wasDuplicate: true, version: version - 1)) }
                    throw Self.copiedDevice(push, maximumDrift: maximumDrift)
                }
                if logged.hash == hash {
                    var answer = try JSONDecoder().decode(SyncPushAnswer.self, from: logged.answer)
                    answer.wasDuplicate = true
                    throw Duplicate(answer: answer)
                }
                throw Self.copiedDevice(push, maximumDrift: maximumDrift)
            }
            guard push.number == last + 1 || edits != nil else {
                throw DatabaseError(.misuse, "push \(push.number) of client \(client) follows push \(last): a push was skipped")
            }
            // A device behind the horizon may push changes to rows the server forgot after their delete.
            let horizon = try Self.horizon(db)
            let behind = Self.isBehind(push.seen, horizon: horizon)
            if behind { try Self.checkCompactionAware(protocolVersion: push.protocolVersion, maximumDrift: maximumDrift) }
            var access = AccessCheck(account: account, shared: try Self.sharedRoots(db, with: account), compacted: horizon > 0)
            var moves: [(table: SyncedTable, key: String, from: SyncScope?, to: SyncScope)] = []
            var forgotten = 0
            var droppedRows: [SyncRowID] = [], overridden: [SyncOverride] = [], notices: [(client: String, row: SyncRowID, column: String)] = []
            for table in tables {
                let incoming = SyncChange.mergedByKey(push.changes.filter { $0.table == table.name })
                guard !incoming.isEmpty else { continue }
                let stored = try db.syncRows(table, keys: incoming.map(\.key), in: .server)
                let versions = try Self.versions(db, table, keys: incoming.map(\.key))
                let columnVersions = try Self.columnVersions(db, table, keys: incoming.map(\.key))
                var merged: [(key: String, row: SyncRow)] = []
                for change in incoming {
                    let key = ExactText(change.key)
                    if stored[key] == nil, change.wasSynced, behind {
                        // Deleted and forgotten before the device heard: gone, not new.
                        droppedRows.append(SyncRowID(table: table.name, key: change.key))
                        forgotten += 1
                        continue
                    }
                    if stored[key] == nil {
                        try table.checkKey(change, isNew: true, latestAccepted: HybridClock.bound(at: Date(), maximumDrift: maximumDrift))
                    }
                    let before = stored[key] ?? SyncRow()
                    var row = before.merged(with: change.row)
                    // Concurrent: the row changed on the server after the version the client had pulled.
                    if push.seen.map({ (versions[key] ?? 0) > $0 }) ?? true {
                        try Self.settle(&row, before: before, incoming: change, table: table, resolver: resolver, clock: &clock)
                    }
                    let id = SyncRowID(table: table.name, key: change.key)
                    for (column, lost) in Self.replaced(before: before, incoming: change.row, merged: row, pushed: push,
                                                        columnVersions: columnVersions[key] ?? [:]) {
                        if lost.node == push.client { overridden.append(SyncOverride(row: id, column: column)) }
                        else if lost.node != node { notices.append((lost.node.uuidString.lowercased(), id, column)) }
                    }
                    merged.append((change.key, row))
                }
                // Every value a push brings is one the record type writes (the engine may coerce, sync does not).
                for (_, row) in merged where row.exists && table.columns.allSatisfy({ row.registers[$0] != nil }) {
                    try table.check(db, row.registers.mapValues(\.value))
                }
                let dead = Set(stored.filter { !$0.value.exists }.keys)
                let scoped = try access.check(db, merged, of: table, deadOnServer: dead)
                let dropped = merged.filter { scoped.dropped.contains(ExactText($0.key)) }.map(\.key)
                droppedRows += dropped.map { SyncRowID(table: table.name, key: $0) }
                // A dropped change's row goes back to the device as the server has it.
                try Self.touch(db, table, keys: dropped.filter { stored[ExactText($0)] != nil }, version: version)
                merged = merged.filter { !scoped.dropped.contains(ExactText($0.key)) }
                // A new row's scope goes in with its state; the other moves are made after every table's rows.
                let newScopes = Dictionary(scoped.moves.filter { $0.from == nil }.map { (ExactText($0.key), $0.to) }, uniquingKeysWith: { _, last in last })
                let placed = try db.storeSyncStates(merged, of: table, in: .server, version: version, stored: stored, scopes: newScopes)
                moves += scoped.moves.filter { $0.from != nil || !placed.contains(ExactText($0.key)) }.map { (table, $0.key, $0.from, $0.to) }
                try db.materialize(merged, of: table, among: tables, in: .server)
            }
            let droppedIDs = Set(droppedRows)
            overridden.removeAll { droppedIDs.contains($0.row) }
            notices.removeAll { droppedIDs.contains($0.row) }
            try Self.moveScopes(db, moves, among: tables, version: version)
            try afterApplying?(db, push.changes)
            for notice in notices {
                try db.insert(into: Self.notices, columns: ["client", "version", "tbl", "row_key", "col"],
                              "VALUES (\(notice.client), \(version), \(notice.row.table), \(notice.row.key), \(notice.column))",
                              onConflict: .doNothing(["client", "version", "tbl", "row_key", "col"]))
            }
            try db.execute("UPDATE \(ident: Self.state) SET \"hlc\" = \(clock.last.rawValue) WHERE \"id\" = 1")
            let answer = SyncPushAnswer(wasDuplicate: false, version: version, dropped: access.dropped + forgotten, droppedRows: droppedRows, overridden: overridden,
                                        horizon: horizon)
            // The server's own edits: no device to count pushes of.
            guard edits == nil else { return answer }
            try db.insert(into: Self.clients, columns: ["client", "last_push", "applied", "account"], "VALUES (\(client), \(push.number), 1, \(account))",
                          onConflict: .update(["client"], set: [.inserted("last_push"), .init("applied", "\(ident: Self.clients).\"applied\" + 1")]))
            try db.execute("""
                INSERT INTO \(ident: Self.pushes) ("client", "number", "hash", "answer") VALUES (\(client), \(push.number), \(hash), \(try JSONEncoder().encode(answer)))
                """)
            // One entry per device: the log grows with devices, not with pushes.
            try db.execute("DELETE FROM \(ident: Self.pushes) WHERE \"client\" = \(client) AND \"number\" < \(push.number)")
            return answer
        }
    }

    /// The columns whose value one side wrote and the merge replaced with
    /// another node's different value, where the writers had not seen each
    /// other's write: the stamp of the value that lost, by column.
    ///
    /// The pushed value lost (one the pushing device wrote itself): its
    /// device had not pulled the stored one (it would have merged it). The
    /// stored value lost: the pushing device had pulled up to `seen`, and the
    /// stored value was written after it.
    static func replaced(before: SyncRow, incoming: SyncRow, merged: SyncRow, pushed push: SyncPush,
                         columnVersions: [String: Int64]) -> [(String, SyncStamp)] {
        guard before.exists, incoming.exists, merged.exists, before.causalLength == incoming.causalLength else { return [] }
        var lost: [(String, SyncStamp)] = []
        for (column, brought) in incoming.registers.sorted(by: { $0.key < $1.key }) {
            guard let held = before.registers[column], let kept = merged.registers[column],
                  held.stamp.node != brought.stamp.node, held.value != brought.value else { continue }
            if kept.stamp == held.stamp, kept.value != brought.value, brought.stamp.node == push.client {
                lost.append((column, brought.stamp))
            } else if kept.stamp == brought.stamp, kept.value != held.value,
                      push.seen.map({ (columnVersions[column] ?? 0) > $0 }) ?? true {
                lost.append((column, held.stamp))
            }
        }
        return lost
    }

    /// The version at which each column's stamp was last written, by key.
    static func columnVersions(_ db: Database, _ table: SyncedTable, keys: [String]) throws -> [ExactText: [String: Int64]] {
        struct Version: Decodable { var row_key: String; var col: String; var version: Int64 }
        var versions: [ExactText: [String: Int64]] = [:]
        for chunk in SyncKey.chunks(keys) {
            let list = SQL.join(chunk.map { "\($0)" }, separator: ", ")
            for row in try db.fetchAll(Version.self, """
                SELECT "row_key", "col", "version" FROM \(ident: SyncStateTables.server.clocks) WHERE "tbl" = \(table.name) AND "row_key" IN (\(list))
                """) {
                versions[ExactText(row.row_key), default: [:]][row.col] = row.version
            }
        }
        return versions
    }

    /// Gives rows a new version, so that every device that sees them pulls them again.
    static func touch(_ db: Database, _ table: SyncedTable, keys: [String], version: Int64) throws {
        for chunk in SyncKey.chunks(keys) {
            try db.execute("""
                UPDATE \(ident: SyncStateTables.server.rows) SET "version" = \(version)
                WHERE "tbl" = \(table.name) AND "row_key" IN (\(SQL.join(chunk.map { "\($0)" }, separator: ", ")))
                """)
        }
    }

    /// The notices for a device in the versions after `after` up to `through`.
    static func notices(_ db: Database, for client: UUID, after: Int64, through: Int64) throws -> [SyncOverride] {
        struct Notice: Decodable { var tbl: String; var row_key: String; var col: String }
        return try db.fetchAll(Notice.self, """
            SELECT "tbl", "row_key", "col" FROM \(ident: notices)
            WHERE "client" = \(client.uuidString.lowercased()) AND "version" > \(after) AND "version" <= \(through)
            ORDER BY "version", "tbl", "row_key", "col"
            """).map { SyncOverride(row: SyncRowID(table: $0.tbl, key: $0.row_key), column: $0.col) }
    }
}

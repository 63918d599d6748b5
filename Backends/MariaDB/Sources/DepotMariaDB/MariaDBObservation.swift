import CMariaDB
import Depot
import Foundation

/// The table Depot's triggers count commits in: a version per table and
/// shard (`CONNECTION_ID() % 16`, so concurrent writers rarely share a row),
/// bumped by a row trigger of each observable table. A change listener polls
/// the sums. A table's shard 0 row, written by ``MariaDBDialect/observationSetup(tables:)``,
/// marks it observable.
let depotChangesTable = "depotChanges"

extension MariaDBDialect {
    /// The counter table and three row triggers per table. MariaDB has no
    /// statement triggers and no NOTIFY: a commit is heard when the listener
    /// next polls (every 100 ms). These are DDL, which commits at once: run
    /// them in a migration.
    ///
    /// Caveat: writes by foreign-key actions (`ON DELETE CASCADE`) and
    /// `TRUNCATE` fire no trigger in MariaDB, so they go unheard.
    public func observationSetup(tables: [String]) -> [String] {
        guard !tables.isEmpty else { return [] }
        let changes = quote(identifier: depotChangesTable)
        var statements = [
            "CREATE TABLE IF NOT EXISTS \(changes) (\"tableName\" VARCHAR(64) NOT NULL, \"shard\" TINYINT NOT NULL, "
                + "\"version\" BIGINT NOT NULL, PRIMARY KEY (\"tableName\", \"shard\"))",
        ]
        for table in tables {
            let literal = "'" + table.replacingOccurrences(of: "'", with: "''") + "'"
            statements.append("INSERT INTO \(changes) (\"tableName\", \"shard\", \"version\") VALUES (\(literal), 0, 0) "
                + "ON DUPLICATE KEY UPDATE \"version\" = \"version\"")
            for (event, suffix) in [("INSERT", "i"), ("UPDATE", "u"), ("DELETE", "d")] {
                statements.append("CREATE TRIGGER IF NOT EXISTS \(quote(identifier: Self.triggerName(table, suffix))) AFTER \(event) ON \(quote(identifier: table)) "
                    + "FOR EACH ROW INSERT INTO \(changes) (\"tableName\", \"shard\", \"version\") VALUES (\(literal), CONNECTION_ID() % 16, 1) "
                    + "ON DUPLICATE KEY UPDATE \"version\" = \"version\" + 1")
            }
        }
        return statements
    }

    /// `depot_<table>_<i|u|d>`, within MariaDB's 64 characters (trigger names are per database).
    static func triggerName(_ table: String, _ suffix: String) -> String {
        let name = "depot_" + table + "_" + suffix
        guard name.utf8.count > 64 else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in table.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return "depot_" + String(table.prefix(30)) + "_" + String(hash, radix: 16) + "_" + suffix
    }
}

extension MariaDBConnection: ReadTrackingConnection {
    /// The base tables of the statement's plan (`EXPLAIN FORMAT=JSON` with the
    /// same values): a view appears as its tables. Fails with
    /// `DatabaseError.notObservable` for a table without Depot's triggers.
    func tablesRead(bySQL sql: String, values: [Value]) throws -> Set<String>? {
        if let known = explainedReads[sql] { return known }
        let statement = try MariaDBStatement(connection: self, sql: "EXPLAIN FORMAT=JSON " + sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step(), case .text(let plan) = try statement.value(at: 0),
              let json = try? JSONSerialization.jsonObject(with: Data(plan.utf8)) else { return nil }
        var tables: Set<String> = []
        Self.collectTables(json, into: &tables)
        tables.remove(depotChangesTable)
        for table in tables { try requireObservable(table) }
        if explainedReads.count >= 1024 { explainedReads.removeAll(keepingCapacity: true) }
        explainedReads[sql] = tables
        return tables
    }

    private func requireObservable(_ table: String) throws {
        guard !observableTables.contains(table) else { return }
        let statement = try MariaDBStatement(connection: self, sql: """
            SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = ? AND TRIGGER_NAME LIKE 'depot\\_%'
            """)
        defer { statement.reset() }
        try statement.bind([.text(table)])
        guard try statement.step(), let count = statement.integer(at: 0), count >= 3 else {
            throw DatabaseError.notObservable(table)
        }
        observableTables.insert(table)
    }

    /// Every `"table_name"` of a plan, derived tables (`<derived2>`) left out.
    private static func collectTables(_ node: Any, into tables: inout Set<String>) {
        if let dictionary = node as? [String: Any] {
            if let name = dictionary["table_name"] as? String, !name.hasPrefix("<") { tables.insert(name) }
            for value in dictionary.values { collectTables(value, into: &tables) }
        } else if let array = node as? [Any] {
            for value in array { collectTables(value, into: &tables) }
        }
    }
}

extension MariaDBDriver: ChangeListeningDriver {
    func startChangeListener(_ onChange: @escaping @Sendable (ObservedChange) -> Void) -> any ChangeListener {
        MariaDBListener(configuration: configuration, cursor: cursor, onChange: onChange)
    }
}

/// Polls the commit counters on a connection and a thread of its own, outside
/// the pool and never in a transaction, and reports the tables whose counters
/// moved. After each (re)connect it reports `.unknown`: commits may have been missed.
final class MariaDBListener: ChangeListener, Sendable {
    private let loop: ListenerLoop<UnsafeMutablePointer<MYSQL>>
    static let pollInterval = 0.1

    init(configuration: MariaDBConfiguration, cursor: MariaDBNodeCursor, onChange: @escaping @Sendable (ObservedChange) -> Void) {
        loop = ListenerLoop(name: "depot.mariadb.listener",
            connect: { try MariaDBConnection.connect(configuration, cursor: cursor).mysql },
            serve: { mysql, loop in
                // The baseline first, then `.unknown`: a commit after the baseline is heard.
                guard var versions = Self.poll(mysql) else { return }
                onChange(.unknown)
                while !loop.isStopped {
                    Thread.sleep(forTimeInterval: Self.pollInterval)
                    guard let now = Self.poll(mysql) else { return }
                    let moved = Set(now.filter { versions[$0.key] != $0.value }.keys)
                    versions = now
                    if !moved.isEmpty { onChange(.tables(moved)) }
                }
            },
            close: { mysql_close($0) })
    }

    var isListening: Bool { loop.isListening }

    func stop() {
        loop.stop()
    }

    /// Each table's summed version; empty before any table was made
    /// observable; nil when the connection failed.
    private static func poll(_ mysql: UnsafeMutablePointer<MYSQL>) -> [String: String]? {
        // Backquotes: this connection keeps the server's sql_mode (no ANSI_QUOTES).
        let query = "SELECT `tableName`, CAST(SUM(`version`) AS CHAR) FROM `\(depotChangesTable)` GROUP BY `tableName`"
        if query.withCString({ mysql_real_query(mysql, $0, UInt(strlen($0))) }) != 0 {
            return mysql_errno(mysql) == 1146 ? [:] : nil // no table yet
        }
        guard let result = mysql_store_result(mysql) else { return nil }
        defer { mysql_free_result(result) }
        var versions: [String: String] = [:]
        while let row = mysql_fetch_row(result) {
            guard let name = row[0], let version = row[1] else { continue }
            versions[String(cString: name)] = String(cString: version)
        }
        return versions
    }
}

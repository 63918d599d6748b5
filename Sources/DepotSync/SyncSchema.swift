import Foundation

/// What a device syncs: its synced tables and their columns, sent with every
/// push and pull beside ``SyncSchema/protocolVersion``, so that devices of
/// several app versions share one server.
///
/// The rule, when a new app version changes what it syncs:
/// - **Add a column**: nullable or with a default, on the server first
///   (its ``SyncServer`` tables), then on devices, each in the migration that
///   adds it with `db.sync.updateReplica(of:)`. A device that does not know the
///   column yet is sent none of its values, and its pushes leave it as it
///   is on the server (per-column merge); a row it creates takes the
///   column's default. Once updated, the device pulls everything again,
///   once, to learn the values it was not sent.
/// - **Add a table**: on the server first, then on devices, the same way.
/// - **Remove a column or a table**: never from the server while devices
///   that send it remain; stop using it in the app, and let the server keep it.
///
/// A device that syncs a table or column the server does not (a device
/// updated before its server), or that speaks a later protocol, is refused
/// in one line (``SyncPushRefused/Reason/deviceNewer``), and its changes
/// wait on it until the server is updated.
public struct SyncSchema: Codable, Hashable, Sendable {
    /// The version of the sync protocol this library speaks: 3 (a device that
    /// sends none is taken for version 1, which sent no schema; version 2
    /// knew no compaction: it marks no pushed row as one it had from the
    /// server, and cannot start over).
    public static let protocolVersion = 3

    /// The synced tables' columns, by table name.
    public var tables: [String: [String]]

    /// The schema of these synced tables.
    public init(_ tables: [SyncedTable]) {
        self.tables = Dictionary(tables.map { ($0.name, $0.columns.sorted()) }, uniquingKeysWith: { first, _ in first })
    }

    /// The tables and columns (`table.column`) of this schema that `other` lacks, sorted.
    func missing(from other: SyncSchema) -> [String] {
        var missing: [String] = []
        for (table, columns) in tables.sorted(by: { $0.key < $1.key }) {
            guard let known = other.tables[table] else {
                missing.append(table)
                continue
            }
            missing += columns.filter { !known.contains($0) }.map { "\(table).\($0)" }
        }
        return missing
    }

    /// The change as a device of this schema may see it: nil for a table it
    /// does not sync, the registers of the columns it does not know left out.
    func visible(_ change: SyncChange) -> SyncChange? {
        guard let columns = tables[change.table] else { return nil }
        var change = change
        change.row.registers = change.row.registers.filter { columns.contains($0.key) }
        return change
    }
}

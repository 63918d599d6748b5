import Depot
import Foundation

/// Two writes of one row's life that disagree and did not see each other:
/// what the server held (changed after the version the pushing device had
/// pulled), and what the push brings that sets some columns otherwise.
public struct SyncConflict: Sendable {
    /// The synced table.
    public var table: String
    /// The row's key, as text.
    public var key: String
    /// The values the server held before the push.
    public var stored: [String: Value]
    /// The values the push brings.
    public var incoming: [String: Value]
    /// The values by the rules: per column, the later stamp's.
    public var merged: [String: Value]
    /// The columns where `stored` and `incoming` disagree.
    public var columns: [String]
}

/// Settles a conflict in Swift, on the server: returns the values to write
/// over the merge (none: the merge stands). They are written as the server's
/// own edit, with a stamp later than every write it saw, so every device
/// takes them. It runs inside the push's transaction: throwing refuses the
/// push, and the client will send it again.
///
/// ```swift
/// // Completing wins over un-completing, whoever wrote last.
/// let server = SyncServer(store: store, tables: tables) { conflict in
///     guard conflict.table == "reminders", conflict.columns.contains("isCompleted") else { return [:] }
///     return [conflict.stored["isCompleted"], conflict.incoming["isCompleted"]].contains(.bool(true)) ? ["isCompleted": .bool(true)] : [:]
/// }
/// ```
///
/// Caveat: the resolver sees conflicts as pushes reach the server; a rule
/// that depends on the order pushes arrive in gives answers that depend on it.
public typealias SyncResolver = @Sendable (SyncConflict) throws -> [String: Value]

/// The server's hybrid clock, for the edits it makes itself.
struct ServerClock {
    var node: UUID
    var last: HybridTimestamp

    /// A stamp later than the server's last one and than `seen`.
    mutating func stamp(after seen: HybridTimestamp) throws -> SyncStamp {
        var clock = HybridClock(last: max(last, seen))
        last = try clock.tick(at: Date())
        return SyncStamp(time: last, node: node)
    }
}

extension SyncServer {
    /// Settles what the per-column rule cannot or should not: a tie of two
    /// devices' stamps (the later push wins), and what the resolver decides.
    static func settle(_ merged: inout SyncRow, before: SyncRow, incoming change: SyncChange, table: SyncedTable,
                       resolver: SyncResolver?, clock: inout ServerClock) throws {
        guard before.exists, change.row.exists, before.causalLength == change.row.causalLength else { return }
        var ties: [String: Value] = [:], columns: [String] = []
        for column in table.columns {
            guard let held = before.registers[column], let brought = change.row.registers[column],
                  held.value != brought.value, held.stamp != brought.stamp else { continue }
            columns.append(column)
            if held.stamp.time == brought.stamp.time { ties[column] = brought.value }
        }
        guard !columns.isEmpty else { return }
        var writes = ties
        if let resolver {
            let conflict = SyncConflict(table: table.name, key: change.key, stored: before.registers.mapValues(\.value),
                                        incoming: change.row.registers.mapValues(\.value), merged: merged.registers.mapValues(\.value),
                                        columns: columns)
            for (column, value) in try resolver(conflict) {
                guard table.columns.contains(column), !table.keyColumns.contains(column) else {
                    throw DatabaseError(.misuse, "the sync resolver wrote \(column), which is not a synced column of \(table.name) besides its key")
                }
                writes[column] = value
            }
        }
        writes = writes.filter { merged.registers[$0.key]?.value != $0.value }
        guard !writes.isEmpty else { return }
        let stamp = try clock.stamp(after: merged.registers.values.map(\.stamp.time).max() ?? .zero)
        for (column, value) in writes { merged.registers[column] = SyncRegister(value: value, stamp: stamp) }
    }
}

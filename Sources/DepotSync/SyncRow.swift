import Depot
import Foundation

/// Who wrote a value and when: a ``HybridTimestamp`` and the writing node's
/// id. Ordered by the timestamp, then by the node's bytes, so two stamps are
/// never "equal but different": every replica picks the same winner.
public struct SyncStamp: Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// When.
    public var time: HybridTimestamp
    /// Which node (a device, or the server).
    public var node: UUID

    /// A stamp from its parts.
    public init(time: HybridTimestamp, node: UUID) {
        self.time = time
        self.node = node
    }

    public static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        if lhs.time != rhs.time { return lhs.time < rhs.time }
        return withUnsafeBytes(of: lhs.node.uuid) { left in
            withUnsafeBytes(of: rhs.node.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }

    /// `time@node`.
    public var description: String { "\(time)@\(node.uuidString.prefix(8).lowercased())" }
}

/// One column of a synced row: its value and the stamp of the write that set it.
public struct SyncRegister: Hashable, Sendable, Codable {
    /// The value, as Depot's mapping encodes the record's property.
    public var value: Value
    /// Who set it, when.
    public var stamp: SyncStamp

    /// A register from its parts.
    public init(value: Value, stamp: SyncStamp) {
        self.value = value
        self.stamp = stamp
    }

    /// The register of the two that wins: the later stamp; for equal stamps
    /// (one write seen twice, or a cloned node) the larger value in
    /// ``SyncValueOrder``, so the choice never depends on which side merges.
    public static func winner(_ a: SyncRegister, _ b: SyncRegister) -> SyncRegister {
        if a.stamp != b.stamp { return a.stamp < b.stamp ? b : a }
        return SyncValueOrder.precedes(a.value, b.value) ? b : a
    }
}

/// The state of one synced row: whether it exists, and one register per column.
///
/// Existence is a *causal length* (as cr-sqlite's): odd while the row exists,
/// even once deleted; an insert or a restore makes it the next odd number, a
/// delete the next even one, and merging takes the larger. So a delete wins
/// over an edit made concurrently with it, and only an explicit restore, which
/// every replica sees as a larger length, brings a row back.
///
/// ``merge(_:)`` takes the later life, and within one life, per column, the
/// winning register: it is commutative, associative and idempotent, so replicas that
/// have seen the same writes hold the same state, whatever the order, the
/// duplicates and the replays they saw them in.
public struct SyncRow: Hashable, Sendable, Codable {
    /// Odd while the row exists, even once deleted; 0 for a row never written.
    public var causalLength: Int64
    /// The registers, by column name.
    public var registers: [String: SyncRegister]

    /// A row state from its parts.
    public init(causalLength: Int64 = 0, registers: [String: SyncRegister] = [:]) {
        self.causalLength = causalLength
        self.registers = registers
    }

    /// Whether the row exists.
    public var exists: Bool { causalLength & 1 == 1 }

    /// The merge of two states of one row: the state of the later life (the
    /// larger causal length) whole, registers included; for one life, per
    /// column the winning register. A life's registers end with it: an edit
    /// made concurrently with a delete is dropped with the deleted life, and a
    /// restore writes every column afresh.
    public func merged(with other: SyncRow) -> SyncRow {
        if causalLength != other.causalLength { return causalLength > other.causalLength ? self : other }
        var result = self
        for (column, theirs) in other.registers {
            result.registers[column] = registers[column].map { SyncRegister.winner($0, theirs) } ?? theirs
        }
        return result
    }

    /// Merges another state of the row into this one.
    public mutating func merge(_ other: SyncRow) {
        self = merged(with: other)
    }

    /// A local write of these columns: each register set with `stamp`; a row
    /// that did not exist (never written, or deleted) now exists, as a new
    /// insert or an explicit restore.
    public mutating func write(_ values: [String: Value], stamp: SyncStamp) {
        if !exists {
            // A new life: the registers of the deleted one end with it.
            causalLength += 1
            registers = [:]
        }
        for (column, value) in values { registers[column] = SyncRegister(value: value, stamp: stamp) }
    }

    /// A local delete: the row no longer exists (a delete of a deleted row changes nothing).
    public mutating func delete() {
        if exists { causalLength += 1 }
    }
}

/// A total order on `Value`s, the same on every node, for the one case where
/// stamps cannot decide: the kinds of value first (in the order of `Value`'s
/// cases), then the values.
public enum SyncValueOrder {
    /// Whether `a` comes before `b`.
    public static func precedes(_ a: Value, _ b: Value) -> Bool {
        let (ka, kb) = (kind(a), kind(b))
        if ka != kb { return ka < kb }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return !x && y
        case (.integer(let x), .integer(let y)): return x < y
        case (.double(let x), .double(let y)): return x.bitPattern != y.bitPattern && x.isTotallyOrdered(belowOrEqualTo: y)
        case (.text(let x), .text(let y)), (.json(let x), .json(let y)): return x.utf8.lexicographicallyPrecedes(y.utf8)
        case (.blob(let x), .blob(let y)): return x.lexicographicallyPrecedes(y)
        case (.date(let x), .date(let y)): return x < y
        case (.uuid(let x), .uuid(let y)): return x.uuidString < y.uuidString
        case (.decimal(let x, let xs), .decimal(let y, let ys)): return x < y || (x == y && xs < ys)
        default: return false
        }
    }

    private static func kind(_ value: Value) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .integer: 2
        case .double: 3
        case .text: 4
        case .blob: 5
        case .date: 6
        case .uuid: 7
        case .json: 8
        case .decimal: 9
        }
    }
}

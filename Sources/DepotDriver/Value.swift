import Foundation

/// A value that a column holds or a statement binds, independent of the engine.
///
/// Each backend maps every case to its native storage: on SQLite a `.date` is
/// UTC date text (`2026-11-22 02:45:18.123456`) and a `.uuid` lowercase text; on PostgreSQL they are
/// `timestamptz` and `uuid`. The README's type mapping table lists every case.
///
/// ```swift
/// let title: Value = .text("Buy milk")
/// let due: Value = .date(Date())
/// ```
///
/// Reading a value back may give a different case than the one bound: SQLite
/// returns `.text` for a stored `.date`. The ``RowDecoder`` accepts both.
public enum Value: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A boolean: `boolean` on PostgreSQL, the integers 0 and 1 on SQLite.
    case bool(Bool)
    /// A signed 64-bit integer.
    case integer(Int64)
    /// A 64-bit floating-point number. NaN is never stored (SQLite turns it into NULL).
    case double(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob(Data)
    /// A point in time, kept at microsecond precision by every backend.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// JSON text: a nested Codable value.
    case json(String)
    /// An exact decimal number and its scale: how many digits after the point the
    /// engine shows. A PostgreSQL `numeric` `10.50` is `.decimal(10.5, scale: 2)`,
    /// and reads as the `String` `"10.50"`; a `Decimal` reads as `10.5` either way.
    ///
    /// Make one from a Swift `Decimal` with ``decimal(_:)`` (its own digits), or
    /// from an engine's text with ``decimal(text:)``, which refuses digits a
    /// `Decimal` would round away.
    case decimal(Decimal, scale: Int)

    /// Whether this is SQL NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The name of the case, as error messages show it: `NULL`, `INTEGER`, `TEXT`...
    public var kindName: String {
        switch self {
        case .null: "NULL"
        case .bool: "BOOLEAN"
        case .integer: "INTEGER"
        case .double: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        case .date: "DATE"
        case .uuid: "UUID"
        case .json: "JSON"
        case .decimal: "DECIMAL"
        }
    }
}

extension Value: CustomStringConvertible {
    /// A short form for messages: the kind and at most 40 characters of the content.
    ///
    /// Longer text and blobs are cut and say how long they were, so a 1 MiB blob
    /// never floods a log.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .bool(let b): return "BOOLEAN \(b)"
        case .integer(let i): return "INTEGER \(i)"
        case .double(let d): return "REAL \(d)"
        case .text(let s): return "TEXT \(Value.shorten(s))"
        case .json(let s): return "JSON \(Value.shorten(s))"
        case .blob(let d):
            let hex = d.prefix(16).map { String(format: "%02x", $0) }.joined()
            return d.count > 16 ? "BLOB x'\(hex)…' (\(d.count) bytes)" : "BLOB x'\(hex)'"
        case .date(let d): return "DATE " + (ISO8601.format(d) ?? "\(d.timeIntervalSince1970) seconds from 1970 (outside the years 0001...9999)")
        case .uuid(let u): return "UUID \(u.uuidString.lowercased())"
        case .decimal(let d, let scale): return "DECIMAL \(Value.decimalText(d, scale: scale))"
        }
    }

    static func shorten(_ s: String) -> String {
        let limit = 40
        let escaped = s.replacingOccurrences(of: "'", with: "''")
        if escaped.count <= limit { return "'\(escaped)'" }
        return "'\(escaped.prefix(limit))…' (\(s.utf8.count) bytes)"
    }
}

extension Value {
    /// A decimal with the scale its own text shows: `Decimal(string: "10.50")` is
    /// `10.5` to Foundation, so its scale is 1.
    public static func decimal(_ number: Decimal) -> Value {
        let text = number.description
        let scale = text.firstIndex(of: ".").map { text.distance(from: $0, to: text.endIndex) - 1 } ?? 0
        return .decimal(number, scale: scale)
    }

    /// A decimal's text with its scale: `10.5` at scale 2 is `10.50`. Digits are
    /// never removed: a scale smaller than the number's own digits shows them all.
    public static func decimalText(_ number: Decimal, scale: Int) -> String {
        let text = number.description
        let shown = text.firstIndex(of: ".").map { text.distance(from: $0, to: text.endIndex) - 1 } ?? 0
        guard scale > shown else { return text }
        return text + (shown == 0 ? "." : "") + String(repeating: "0", count: scale - shown)
    }
}

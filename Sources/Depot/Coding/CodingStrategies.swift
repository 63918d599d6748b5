import Foundation

/// How a `Date` is stored in a column.
public enum DateStrategy: Sendable {
    /// The backend's native form: UTC date text on SQLite (`2026-11-22 02:45:18.123456`), `timestamptz` on
    /// PostgreSQL. Microsecond precision. The default.
    case deferredToStore
    /// Date text on every engine, in the form SQLite stores natively: `2026-11-22 02:45:18.123456` (UTC).
    case iso8601Text
    /// A REAL number of seconds since 1970-01-01.
    case secondsSince1970
    /// An INTEGER number of milliseconds since 1970-01-01 (sub-millisecond parts are refused).
    case millisecondsSince1970
    /// A REAL number of seconds since 2001-01-01: `Date`'s own representation, lossless.
    case timeIntervalSinceReferenceDate
    /// Your own pair of conversions.
    case custom(encode: @Sendable (Date) throws -> Value, decode: @Sendable (Value) throws -> Date)
}

/// How a `UUID` is stored in a column.
public enum UUIDStrategy: Sendable {
    /// The backend's native form: lowercase text on SQLite, `uuid` on PostgreSQL. The default.
    case deferredToStore
    /// Lowercase text on every engine.
    case lowercaseText
    /// Uppercase text on every engine (as `UUID.uuidString` writes it).
    case uppercaseText
    /// 16 bytes.
    case blob
}

/// How `Data` is stored in a column.
public enum DataStrategy: Sendable {
    /// Bytes: `BLOB` / `bytea`. The default.
    case blob
    /// Base64 text.
    case base64Text
}

/// Everything a column value's encoding depends on; shared by ``RowEncoder`` and ``SQL``.
@usableFromInline
struct EncodingOptions: Sendable {
    var dateStrategy: DateStrategy = .deferredToStore
    var uuidStrategy: UUIDStrategy = .deferredToStore
    var dataStrategy: DataStrategy = .blob
    var jsonEncoder: @Sendable (_ column: String?) -> JSONEncoder = { _ in RowEncoder.defaultJSONEncoder() }
    var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Whether ``ColumnMapped`` types encode through their generated mapping.
    var usesGeneratedMapping = true

    static let `default` = EncodingOptions()
}

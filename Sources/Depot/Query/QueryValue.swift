import Foundation

/// The kind of SQL value an expression yields. Dialects render by it: text is
/// compared by code point, booleans are predicates, dates compare as instants.
public enum QueryType: Sendable, Hashable {
    /// A 64-bit integer.
    case integer
    /// A double.
    case double
    /// Text, compared and ordered by code point.
    case text
    /// A Boolean: a predicate.
    case bool
    /// An instant.
    case date
    /// A UUID: equality only.
    case uuid
    /// Bytes: equality only.
    case blob
    /// A decimal number: equality only (SQLite keeps it as text).
    case decimal
}

/// A Swift type a query can compare, bind and read: the integers, `Double`,
/// `Float`, `String`, `Bool`, `Date`, `UUID`, `Data`, `Decimal`, and optionals of them.
///
/// Your own enums join in one line, through their raw value:
///
/// ```swift
/// enum Priority: Int, Codable { case low = 1, medium, high }
/// extension Priority: QueryValue {}
/// ```
///
/// A bound value is encoded with the store's strategies, exactly as the column was.
public protocol QueryValue: Codable, Sendable {
    /// The type itself when it is optional, its optional otherwise: what an
    /// aggregate such as `max()` returns, NULL when there are no rows.
    associatedtype Nullable: QueryValue = Optional<Self>
    /// The kind of SQL value.
    static var queryType: QueryType { get }
}

extension QueryValue where Self: RawRepresentable, RawValue: QueryValue {
    /// The raw value's kind.
    public static var queryType: QueryType { RawValue.queryType }
}

/// A ``QueryValue`` with an order both engines agree on: numbers, text (by
/// code point), booleans (false first), dates (as instants) and UUIDs (by
/// their bytes: PostgreSQL's `uuid` order, and the order of the lowercase
/// text SQLite keeps them as).
public protocol QueryComparable: QueryValue {}

/// `String` and `String?`: the text operators (`contains`, `hasPrefix`, `folded`...).
public protocol QueryText: QueryComparable {}

/// `Bool` and `Bool?`: expressions of these types are predicates.
public protocol QueryBool: QueryValue {}

/// The optionals: `isNull()` and `isNotNull()`.
public protocol QueryOptional: QueryValue {
    /// The wrapped type.
    associatedtype Wrapped: QueryValue
    /// Whether the value is nil, which a query compares with `IS NULL`.
    var isNone: Bool { get }
}

extension QueryOptional {
    /// False: a type that only calls itself optional is never nil.
    public var isNone: Bool { false }
}

extension Int: QueryComparable { public static var queryType: QueryType { .integer } }
extension Int64: QueryComparable { public static var queryType: QueryType { .integer } }
extension Int32: QueryComparable { public static var queryType: QueryType { .integer } }
extension Int16: QueryComparable { public static var queryType: QueryType { .integer } }
extension Int8: QueryComparable { public static var queryType: QueryType { .integer } }
extension UInt32: QueryComparable { public static var queryType: QueryType { .integer } }
extension UInt16: QueryComparable { public static var queryType: QueryType { .integer } }
extension UInt8: QueryComparable { public static var queryType: QueryType { .integer } }
extension Double: QueryComparable { public static var queryType: QueryType { .double } }
extension Float: QueryComparable { public static var queryType: QueryType { .double } }
extension String: QueryText { public static var queryType: QueryType { .text } }
extension Bool: QueryComparable, QueryBool { public static var queryType: QueryType { .bool } }
extension Date: QueryComparable { public static var queryType: QueryType { .date } }
// UUIDs order by their bytes on every engine: fixed-width lowercase hex sorts as the bytes do.
extension UUID: QueryComparable { public static var queryType: QueryType { .uuid } }
// Decimals compare for equality only: SQLite keeps them as text, whose order is not theirs.
extension Data: QueryValue { public static var queryType: QueryType { .blob } }
extension Decimal: QueryValue { public static var queryType: QueryType { .decimal } }

extension Optional: QueryValue where Wrapped: QueryValue {
    /// Already optional.
    public typealias Nullable = Self
    /// The wrapped type's kind.
    public static var queryType: QueryType { Wrapped.queryType }
}
extension Optional: QueryOptional where Wrapped: QueryValue {
    /// Whether this is `nil`.
    public var isNone: Bool { self == nil }
}
extension Optional: QueryComparable where Wrapped: QueryComparable {}
extension Optional: QueryText where Wrapped: QueryText {}
extension Optional: QueryBool where Wrapped: QueryBool {}

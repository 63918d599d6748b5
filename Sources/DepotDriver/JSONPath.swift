/// The JSON path types a dialect renders.

/// One step of a path into a JSON document: an object's key or an array's index.
public enum JSONPathComponent: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    /// The member of an object with this key.
    case key(String)
    /// The element of an array at this 0-based index.
    case index(Int)

    /// A key.
    public init(stringLiteral value: String) { self = .key(value) }
    /// An index.
    public init(integerLiteral value: Int) { self = .index(value) }
}

/// The kinds of JSON value a query reads as a Swift scalar.
public enum JSONScalarKind: Sendable, Hashable {
    /// A JSON string, as `String`.
    case text
    /// A JSON number that is a whole number within 64 bits, as an integer.
    case integer
    /// Any JSON number, as a `Double`.
    case double
    /// `true` or `false`, as a `Bool`.
    case bool
}

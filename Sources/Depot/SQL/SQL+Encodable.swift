import Foundation

// Bound values of any `Encodable` type, encoded as a column is: the encoder
// lives in the core, the statement type in the driver SPI.
extension SQL.StringInterpolation {
    /// Binds a value as a parameter; it is encoded as a column is.
    ///
    /// Inlined, so that an `Int`, `Int32`, `Int64` or `String` (a key, most
    /// often) is bound without the encoder's runtime type tests.
    @inlinable
    public mutating func appendInterpolation<T: Encodable>(_ value: T) {
        if let plain = Value.plainKey(value) {
            appendInterpolation(plain)
        } else {
            appendEncoded(value)
        }
    }

    /// Binds a value through the encoder.
    @usableFromInline
    mutating func appendEncoded<T: Encodable>(_ value: T) {
        do {
            fragments.append(.value(try ValueEncoder.encode(value, options: .default, column: nil)))
        } catch {
            fragments.append(.invalid("cannot bind a \(T.self): \(error)"))
        }
    }

    /// Binds an optional value: nil binds NULL.
    public mutating func appendInterpolation<T: Encodable>(_ value: T?) {
        if let value { appendInterpolation(value) } else { fragments.append(.value(.null)) }
    }

    /// A parenthesised list of bound values, for `IN`: `\(list: ids)` becomes `(?1, ?2, ?3)`.
    ///
    /// Caveat: an empty list becomes `(NULL)`, which matches nothing, since `()` is not valid SQL.
    public mutating func appendInterpolation<T: Encodable>(list values: some Sequence<T>) {
        appendLiteral("(")
        var first = true
        for value in values {
            if !first { appendLiteral(", ") }
            first = false
            appendInterpolation(value)
        }
        if first { appendLiteral("NULL") }
        appendLiteral(")")
    }
}

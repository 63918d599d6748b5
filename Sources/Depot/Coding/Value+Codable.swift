import Foundation

extension Value: Codable {
    /// Reads a column's raw value. Only Depot's ``RowDecoder`` can decode a `Value`;
    /// other decoders throw.
    public init(from decoder: any Decoder) throws {
        if let column = decoder as? ColumnDecoder {
            self = column.value
            return
        }
        throw DecodingError.typeMismatch(Value.self, .init(
            codingPath: decoder.codingPath, debugDescription: "a Value can only be decoded by Depot's RowDecoder"))
    }

    /// Stores the value as it is. Only Depot's ``RowEncoder`` can encode a `Value`;
    /// other encoders throw.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(
            codingPath: encoder.codingPath, debugDescription: "a Value can only be encoded by Depot's RowEncoder"))
    }
}

extension Value {
    /// A decimal read from an engine's text (`-0.970`, `12`, `1.5e3`), keeping the
    /// digits after the point as its scale.
    ///
    /// Returns nil when the text is not a decimal literal, or names more
    /// significant digits (or a larger exponent) than `Decimal` holds: `Decimal`
    /// would round them away silently.
    public static func decimal(text: String) -> Value? {
        guard let literal = ValueDecoding.canonicalDecimal(text),
              let number = Decimal(string: text, locale: ValueDecoding.posix),
              ValueDecoding.canonicalDecimal(number.description) == literal else { return nil }
        var scale = 0
        var body = Substring(text)
        if let e = body.firstIndex(where: { $0 == "e" || $0 == "E" }) { body = body[..<e] }
        if let point = body.firstIndex(of: ".") { scale = body.distance(from: point, to: body.endIndex) - 1 }
        if body.count != text.count, let exponent = Int(text[text.index(after: body.endIndex)...]) {
            // 1.50e1 is 15.0: the exponent moves the point.
            scale = max(0, scale - exponent)
        }
        return .decimal(number, scale: scale)
    }
}

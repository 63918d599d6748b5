import Foundation

/// The types that map to a column value directly, without going through `Encodable`.
protocol ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value
}

extension String: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .text(self) }
}
extension Bool: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .bool(self) }
}
extension Double: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.double(self, codingPath: codingPath) }
}
extension Float: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.double(Double(self), codingPath: codingPath) }
}
extension Date: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.date(self, options: options, codingPath: codingPath) }
}
extension UUID: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { ValueEncoder.uuid(self, options: options) }
}
extension Data: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { ValueEncoder.data(self, options: options) }
}
extension Decimal: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value {
        guard !isNaN else { throw ValueEncoder.invalid(self, codingPath, "Decimal NaN cannot be stored") }
        return .decimal(self)
    }
}
extension URL: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .text(absoluteString) }
}
extension Value: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { self }
}
/// Integers whose every value fits an Int64 store as they are.
protocol LosslessIntegerColumnEncodable: ColumnEncodable, BinaryInteger {}
extension LosslessIntegerColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension Int: LosslessIntegerColumnEncodable {}
extension Int8: LosslessIntegerColumnEncodable {}
extension Int16: LosslessIntegerColumnEncodable {}
extension Int32: LosslessIntegerColumnEncodable {}
extension Int64: LosslessIntegerColumnEncodable {}
extension UInt8: LosslessIntegerColumnEncodable {}
extension UInt16: LosslessIntegerColumnEncodable {}
extension UInt32: LosslessIntegerColumnEncodable {}

/// Unsigned integers above Int64.max are refused, not wrapped.
extension UInt: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.unsigned(UInt64(self), codingPath: codingPath) }
}
extension UInt64: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.unsigned(self, codingPath: codingPath) }
}

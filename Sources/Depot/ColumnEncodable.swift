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
extension Int: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension Int8: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension Int16: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension Int32: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension Int64: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(self) }
}
extension UInt8: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension UInt16: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension UInt32: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { .integer(Int64(self)) }
}
extension UInt: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.unsigned(UInt64(self), codingPath: codingPath) }
}
extension UInt64: ColumnEncodable {
    func columnValue(_ options: EncodingOptions, _ codingPath: [any CodingKey]) throws -> Value { try ValueEncoder.unsigned(self, codingPath: codingPath) }
}

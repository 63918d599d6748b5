import Foundation

/// The types a column value converts to directly, without going through `Decodable`.
protocol ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Self
}

extension String: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> String { try ValueDecoding.string(value, ctx) }
}
extension Bool: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Bool { try ValueDecoding.bool(value, ctx) }
}
extension Double: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Double { try ValueDecoding.double(value, ctx) }
}
extension Float: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Float { try ValueDecoding.float(value, ctx) }
}
extension Date: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Date { try ValueDecoding.date(value, ctx, options) }
}
extension UUID: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> UUID { try ValueDecoding.uuid(value, ctx) }
}
extension Data: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Data { try ValueDecoding.data(value, ctx, options) }
}
extension Decimal: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Decimal { try ValueDecoding.decimal(value, ctx) }
}
extension URL: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> URL { try ValueDecoding.url(value, ctx) }
}
extension Value: ColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Value { value }
}

/// Every fixed-width integer converts with a range check.
protocol IntegerColumnDecodable: ColumnDecodable, FixedWidthInteger {}
extension IntegerColumnDecodable {
    static func decode(column value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Self {
        try ValueDecoding.integer(Self.self, value, ctx)
    }
}
extension Int: IntegerColumnDecodable {}
extension Int8: IntegerColumnDecodable {}
extension Int16: IntegerColumnDecodable {}
extension Int32: IntegerColumnDecodable {}
extension Int64: IntegerColumnDecodable {}
extension UInt: IntegerColumnDecodable {}
extension UInt8: IntegerColumnDecodable {}
extension UInt16: IntegerColumnDecodable {}
extension UInt32: IntegerColumnDecodable {}
extension UInt64: IntegerColumnDecodable {}

import Foundation

extension Row {
    /// Decodes the row into a `Decodable` type.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: RowDecoder = RowDecoder()) throws -> T {
        try decoder.decode(type, from: self)
    }
}

extension Row: Decodable {
    /// Reads every column of the current row. Only a ``RowDecoder`` can decode a `Row`.
    public init(from decoder: any Decoder) throws {
        guard let rowDecoder = decoder as? RowDecoding else {
            throw DecodingError.typeMismatch(Row.self, .init(
                codingPath: decoder.codingPath,
                debugDescription: "a Row can only be decoded by Depot's RowDecoder"))
        }
        let source = rowDecoder.source
        let columns = source.columns
        var values: [Value] = []
        values.reserveCapacity(columns.count)
        for index in 0..<columns.count {
            values.append(try source.value(at: index))
        }
        self.init(columns: columns, values: values)
    }
}

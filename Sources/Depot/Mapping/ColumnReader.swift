import Foundation

/// Reads a ``ColumnMapped`` type's properties from the current row, one column
/// after another, by position.
///
/// Only code that the ``Columns()`` macro generates calls it. Each call reads the
/// column of the next key in ``ColumnMapped/columnKeys`` (its position in the
/// row is worked out once per statement) and converts it with the same rules as
/// `RowDecoder`: the same values and the same errors.
public struct ColumnReader {
    let source: any RowSource
    /// The plan owns the column positions and outlives every reader made from it.
    unowned(unsafe) let plan: DecodePlan
    let mapping: ColumnMapping?
    var position = 0

    /// The source's ``RowSource/storesBooleansAsIntegers``, asked once.
    let booleansAreIntegers: Bool

    init(source: any RowSource, plan: DecodePlan, mapping: ColumnMapping?) {
        self.source = source
        self.plan = plan
        self.mapping = mapping
        booleansAreIntegers = source.storesBooleansAsIntegers
    }

    /// Starts again at the first key, for the statement's next row.
    mutating func rewind() {
        position = 0
    }

    /// Whether the row is read through the generated mapping; false when the
    /// store turned it off, and the type then decodes through Codable.
    @usableFromInline
    var usesGeneratedMapping: Bool { mapping != nil }

    /// The row as a record: through the generated mapping, or through Codable
    /// when the store turned the mapping off.
    @inlinable
    mutating func record<T: ColumnMapped>(_ type: T.Type) throws -> T {
        try usesGeneratedMapping ? T(columns: &self) : decodeThroughCodable(T.self)
    }

    /// Decodes the row through the type's Codable conformance, as `RowDecoder` does.
    @usableFromInline
    func decodeThroughCodable<T: Decodable>(_ type: T.Type) throws -> T {
        try RowDecoder.decode(type, from: source, plan: plan)
    }

    /// The position of the next key in `mapping`, moved past, and its column's
    /// index in the row (-1 for none); an error when the mapping read more
    /// properties than it lists.
    @inline(__always)
    private mutating func nextPosition() throws -> (position: Int, index: Int) {
        let position = self.position
        guard let mapping, position < mapping.indexes.count else {
            let message = "the generated column mapping read more properties than its columnKeys list (\(mapping?.indexes.count ?? 0))"
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: message,
                                                    underlyingError: ColumnFailure(message: message)))
        }
        self.position = position + 1
        return (position, mapping.indexes[position])
    }

    /// The key at `position`, for errors only: a read that succeeds never touches the name.
    private func key(at position: Int) -> String {
        mapping.map { $0.keys[position] } ?? ""
    }

    /// Reads the next column: `fast` answers from the cell directly when it can;
    /// otherwise `convert` reads its ``Value`` with `RowDecoder`'s rules and errors.
    @inline(__always)
    private mutating func read<T>(_ fast: (any RowSource, Int) -> T?, _ convert: (Value, ColumnContext) throws -> T) throws -> T {
        let (position, index) = try nextPosition()
        guard index >= 0 else { throw plan.keyNotFound(key(at: position)) }
        if let value = fast(source, index) { return value }
        return try convert(try source.value(at: index), plan.context(index, keyName: key(at: position)))
    }

    /// Reads the next column for an optional property: nil for NULL, and for a
    /// missing column when the strategy allows it.
    @inline(__always)
    private mutating func readIfPresent<T>(_ fast: (any RowSource, Int) -> T?, _ convert: (Value, ColumnContext) throws -> T) throws -> T? {
        let (position, index) = try nextPosition()
        guard index >= 0 else {
            if plan.options.missingColumns.throws { throw plan.keyNotFound(key(at: position)) }
            return nil
        }
        if source.isNull(at: index) { return nil }
        if let value = fast(source, index) { return value }
        let value = try source.value(at: index)
        if case .null = value { return nil }
        return try convert(value, plan.context(index, keyName: key(at: position)))
    }

    // The fast paths: each takes only the one kind of cell whose conversion cannot fail.

    @inline(__always)
    private static func fastBool(_ source: any RowSource, _ index: Int, _ integersFirst: Bool) -> Bool? {
        if !integersFirst, let bool = source.bool(at: index) { return bool }
        switch source.integer(at: index) {
        case 0: return false
        case 1: return true
        default: return integersFirst ? source.bool(at: index) : nil
        }
    }

    @inline(__always)
    private static func fastString(_ source: any RowSource, _ index: Int) -> String? {
        guard let bytes = source.unsafeTextBytes(at: index) else { return nil }
        // ASCII needs no validation; other text must be valid UTF-8, or the slow path reports it.
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    @inline(__always)
    private static func fastDate(_ source: any RowSource, _ index: Int, _ form: ColumnMapping.DateForm) -> Date? {
        if form == .custom { return nil }
        // A stored instant is itself under every strategy but a custom one.
        if let date = source.date(at: index) { return date }
        switch form {
        case .text:
            guard let bytes = source.unsafeTextBytes(at: index), let micros = ISO8601.parse(bytes: bytes) else { return nil }
            return ISO8601.exactDate(microseconds: micros)
        case .secondsSince1970:
            guard let seconds = source.double(at: index),
                  let micros = ISO8601.microseconds(secondsSince1970: seconds) else { return nil }
            return ISO8601.date(microseconds: micros)
        case .other, .custom:
            return nil
        }
    }

    /// Reads a `Bool`.
    public mutating func decode(_ type: Bool.Type) throws -> Bool {
        let integersFirst = booleansAreIntegers
        return try read({ Self.fastBool($0, $1, integersFirst) }, ValueDecoding.bool)
    }
    /// Reads a `String`.
    public mutating func decode(_ type: String.Type) throws -> String { try read(Self.fastString, ValueDecoding.string) }
    /// Reads a `Double`.
    public mutating func decode(_ type: Double.Type) throws -> Double { try read({ $0.double(at: $1) }, ValueDecoding.double) }
    /// Reads a `Float`.
    public mutating func decode(_ type: Float.Type) throws -> Float { try read({ _, _ in nil }, ValueDecoding.float) }
    /// Reads an `Int`.
    public mutating func decode(_ type: Int.Type) throws -> Int {
        try read({ $0.integer(at: $1).flatMap { Int(exactly: $0) } }, { try ValueDecoding.integer(Int.self, $0, $1) })
    }
    /// Reads an `Int32`.
    public mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try read({ $0.integer(at: $1).flatMap { Int32(exactly: $0) } }, { try ValueDecoding.integer(Int32.self, $0, $1) })
    }
    /// Reads an `Int64`.
    public mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try read({ $0.integer(at: $1) }, { try ValueDecoding.integer(Int64.self, $0, $1) })
    }
    /// Reads a `Date`, with the store's date strategy.
    public mutating func decode(_ type: Date.Type) throws -> Date {
        let plan = self.plan, form = mapping?.dateForm ?? .custom
        return try read({ Self.fastDate($0, $1, form) }, { try ValueDecoding.date($0, $1, plan.options) })
    }
    /// Reads any other `Decodable` type, as `RowDecoder` reads a property of that type.
    public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let options = plan.options
        return try read({ _, _ in nil }, { try ValueDecoding.decode(type, from: $0, $1, options) })
    }

    /// Reads an optional `Bool`: nil for NULL.
    public mutating func decode(_ type: Bool?.Type) throws -> Bool? {
        let integersFirst = booleansAreIntegers
        return try readIfPresent({ Self.fastBool($0, $1, integersFirst) }, ValueDecoding.bool)
    }
    /// Reads an optional `String`: nil for NULL.
    public mutating func decode(_ type: String?.Type) throws -> String? { try readIfPresent(Self.fastString, ValueDecoding.string) }
    /// Reads an optional `Double`: nil for NULL.
    public mutating func decode(_ type: Double?.Type) throws -> Double? { try readIfPresent({ $0.double(at: $1) }, ValueDecoding.double) }
    /// Reads an optional `Int`: nil for NULL.
    public mutating func decode(_ type: Int?.Type) throws -> Int? {
        try readIfPresent({ $0.integer(at: $1).flatMap { Int(exactly: $0) } }, { try ValueDecoding.integer(Int.self, $0, $1) })
    }
    /// Reads an optional `Int64`: nil for NULL.
    public mutating func decode(_ type: Int64?.Type) throws -> Int64? {
        try readIfPresent({ $0.integer(at: $1) }, { try ValueDecoding.integer(Int64.self, $0, $1) })
    }
    /// Reads an optional `Date`: nil for NULL.
    public mutating func decode(_ type: Date?.Type) throws -> Date? {
        let plan = self.plan, form = mapping?.dateForm ?? .custom
        return try readIfPresent({ Self.fastDate($0, $1, form) }, { try ValueDecoding.date($0, $1, plan.options) })
    }
    /// Reads any other optional `Decodable` type: nil for NULL.
    public mutating func decode<T: Decodable>(_ type: T?.Type) throws -> T? {
        let options = plan.options
        return try readIfPresent({ _, _ in nil }, { try ValueDecoding.decode(T.self, from: $0, $1, options) })
    }
}

/// Where each of a ``ColumnMapped`` type's keys sits in one statement's columns.
final class ColumnMapping {
    let keys: [String]
    /// Column positions by key order; -1 for a key with no column.
    let indexes: [Int]
    let type: any ColumnMapped.Type
    /// How the store's date strategy reads a date, worked out once.
    let dateForm: DateForm

    /// The date strategies, as far as a fast read of a cell cares.
    enum DateForm {
        /// Text in one of the ISO 8601 forms (the store's default, and `iso8601Text`).
        case text
        /// A number of seconds since 1970.
        case secondsSince1970
        /// Another built-in strategy: read through the checked path.
        case other
        /// The caller's own: never read by a fast path.
        case custom
    }

    init(type: any ColumnMapped.Type, plan: DecodePlan) {
        self.type = type
        keys = type.columnKeys
        indexes = keys.map { plan.columnIndex(forKey: $0) ?? -1 }
        dateForm = switch plan.options.dateStrategy {
        case .deferredToStore, .iso8601Text: .text
        case .secondsSince1970: .secondsSince1970
        case .custom: .custom
        default: .other
        }
    }
}

extension ColumnMapped {
    /// Decodes the current row of `source` as `T`, which is `Self`.
    static func decodeMapped<T>(_ target: T.Type, from source: some RowSource, plan: DecodePlan, mapping: ColumnMapping) throws -> T {
        var reader = ColumnReader(source: source, plan: plan, mapping: mapping)
        let value = try Self(columns: &reader)
        if Self.self == T.self {
            // The identity check makes the cast a no-op conversion from Self to Self.
            return unsafeBitCast(value, to: T.self)
        }
        guard let typed = value as? T else {
            throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "the column mapping of \(Self.self) cannot produce \(T.self)"))
        }
        return typed
    }
}


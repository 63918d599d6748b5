import Foundation

/// Reads a ``ColumnMapped`` type's properties from the current row, one column
/// after another, by position.
///
/// Only code that the ``Columns()`` macro generates calls it. Each call reads the
/// column of the next key in ``ColumnMapped/columnKeys`` (its position in the
/// row is worked out once per statement) and converts it with the same rules as
/// `RowDecoder`: the same values and the same errors.
public struct ColumnReader {
    // An object (a value source is boxed), so a call on it needs no
    // projection of an existential buffer. A `var`, never changed: read
    // through `inout self` as a stored `let`, each call on it copied the
    // whole reader first.
    private(set) var source: any RowSource & AnyObject
    /// The plan owns the column positions and outlives every reader made from it.
    unowned(unsafe) let plan: DecodePlan
    /// The plan's mapping, as long-lived as the plan.
    unowned(unsafe) let mapping: ColumnMapping?
    /// The mapping's column positions, by key order (-1 for a key with no
    /// column), read without reference counting: every read goes through them.
    private let indexes: UnsafePointer<Int>?
    private let keyCount: Int
    /// How the store's date strategy reads a date.
    private let dateForm: ColumnMapping.DateForm
    var position = 0

    /// The source's ``RowSource/storesBooleansAsIntegers``, asked once.
    let booleansAreIntegers: Bool

    /// The current row's cells, one per key in key order, read ahead in one
    /// call when the source can (``RowSource/readCells(at:into:)``); nil when
    /// each read asks the source. The memory belongs to the caller and
    /// outlives the reader.
    private var cells: UnsafeMutablePointer<RowCell>?

    init(source: any RowSource, plan: DecodePlan, mapping: ColumnMapping?) {
        self.init(object: source.asObject ?? RowSourceBox(source), plan: plan, mapping: mapping)
    }

    /// A reader of a source that is an object already (a statement): no box,
    /// no question asked. With `cells` (room for one cell per key of the
    /// mapping), each row is read ahead in one call when the source can.
    init(object source: any RowSource & AnyObject, plan: DecodePlan, mapping: ColumnMapping?,
         cells: UnsafeMutablePointer<RowCell>? = nil) {
        self.source = source
        self.cells = mapping == nil ? nil : cells
        self.plan = plan
        self.mapping = mapping
        indexes = mapping?.indexBuffer.baseAddress
        keyCount = mapping?.indexBuffer.count ?? 0
        dateForm = mapping?.dateForm ?? .custom
        usesGeneratedMapping = mapping != nil
        booleansAreIntegers = source.storesBooleansAsIntegers
    }

    /// Starts again at the first key, for the statement's next row, and
    /// reads the row ahead when the source can (a source that cannot is
    /// not asked again).
    mutating func rewind() {
        position = 0
        if let cells, let indexes,
           !source.readCells(at: UnsafeBufferPointer(start: indexes, count: keyCount), into: cells) {
            self.cells = nil
        }
    }

    /// How many rows the statement holds in all, when its engine knows (``RowSource/rowCountHint``).
    @usableFromInline
    var rowCountHint: Int? { source.rowCountHint }

    /// Whether the row is read through the generated mapping; false when the
    /// store turned it off, and the type then decodes through Codable.
    @usableFromInline
    let usesGeneratedMapping: Bool

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

    /// The next key's column index in the row, moved past; an error when the
    /// row has no column for it, or when the mapping read more properties
    /// than it lists.
    @inline(__always)
    private mutating func nextIndex() throws -> Int {
        let position = self.position
        guard position < keyCount, let indexes else { throw Self.readTooMany(keyCount) }
        self.position = position &+ 1
        let index = indexes[position]
        guard index >= 0 else { throw plan.keyNotFound(key(at: position)) }
        return index
    }

    /// The next key's column index for an optional property: nil for a
    /// missing column when the strategy allows it.
    @inline(__always)
    private mutating func nextIndexIfPresent() throws -> Int? {
        let position = self.position
        guard position < keyCount, let indexes else { throw Self.readTooMany(keyCount) }
        self.position = position &+ 1
        let index = indexes[position]
        guard index >= 0 else {
            if plan.options.missingColumns.throws { throw plan.keyNotFound(key(at: position)) }
            return nil
        }
        return index
    }

    private static func readTooMany(_ count: Int) -> DecodingError {
        let message = "the generated column mapping read more properties than its columnKeys list (\(count))"
        return DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: message,
                                                 underlyingError: ColumnFailure(message: message)))
    }

    /// The key at `position`, for errors only: a read that succeeds never touches the name.
    private func key(at position: Int) -> String {
        mapping.map { $0.keys[position] } ?? ""
    }

    /// The cell the fast path declined, read as a ``Value`` and converted with
    /// `RowDecoder`'s rules and errors. The key is the one just moved past.
    private mutating func converted<T>(_ index: Int, _ convert: (Value, ColumnContext) throws -> T) throws -> T {
        try convert(try source.value(at: index), plan.context(index, keyName: key(at: position - 1)))
    }

    /// The same for an optional property: nil for NULL.
    private mutating func convertedIfPresent<T>(_ index: Int, _ convert: (Value, ColumnContext) throws -> T) throws -> T? {
        let value = try source.value(at: index)
        if case .null = value { return nil }
        return try convert(value, plan.context(index, keyName: key(at: position - 1)))
    }

    // The fast paths: each takes only the one kind of cell whose conversion
    // cannot fail, and calls the source in place. They and the conversions
    // are `mutating` though they change nothing: called on `inout self`, a
    // non-mutating method made the compiler copy the reader (and retain its
    // source) for every cell.

    // Each fast path reads the key's cell from the row read ahead when there
    // is one: a cell of another kind declines at once, as the source's own
    // fast path would; a cell not read ahead (``RowCell/Kind/other``) is asked
    // of the source.

    /// The cell of the key just moved past, when the row was read ahead and
    /// the cell with it; nil to ask the source.
    @inline(__always)
    private func readAhead() -> RowCell? {
        guard let cells else { return nil }
        let cell = cells[position &- 1]
        return cell.kind == .other ? nil : cell
    }

    @inline(__always)
    private mutating func fastInteger(_ index: Int) -> Int64? {
        if let cell = readAhead() { return cell.kind == .integer ? cell.integer : nil }
        return source.integer(at: index)
    }

    @inline(__always)
    private mutating func fastDouble(_ index: Int) -> Double? {
        if let cell = readAhead() { return cell.kind == .double ? cell.double : nil }
        return source.double(at: index)
    }

    @inline(__always)
    private mutating func fastTextBytes(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        if let cell = readAhead() { return cell.kind == .text ? cell.textBytes : nil }
        return source.unsafeTextBytes(at: index)
    }

    @inline(__always)
    private mutating func isNull(_ index: Int) -> Bool {
        if let cell = readAhead() { return cell.kind == .null }
        return source.isNull(at: index)
    }

    @inline(__always)
    private mutating func fastBool(_ index: Int) -> Bool? {
        if let cell = readAhead() {
            switch cell.kind {
            case .bool: return cell.bool
            case .integer:
                switch cell.integer {
                case 0: return false
                case 1: return true
                default: return nil
                }
            default: return nil
            }
        }
        let integersFirst = booleansAreIntegers
        if !integersFirst, let bool = source.bool(at: index) { return bool }
        switch source.integer(at: index) {
        case 0: return false
        case 1: return true
        default: return integersFirst ? source.bool(at: index) : nil
        }
    }

    @inline(__always)
    private mutating func fastString(_ index: Int) -> String? {
        guard let bytes = fastTextBytes(index) else { return nil }
        // ASCII needs no validation; other text must be valid UTF-8, or the slow path reports it.
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    @inline(__always)
    private mutating func fastDate(_ index: Int) -> Date? {
        let form = dateForm
        if form == .custom { return nil }
        // A stored instant is itself under every strategy but a custom one.
        if let cell = readAhead() {
            if cell.kind == .date { return cell.date }
        } else if let date = source.date(at: index) {
            return date
        }
        switch form {
        case .text:
            guard let bytes = fastTextBytes(index) else { return nil }
            return ISO8601.parseDate(bytes: bytes)
        case .secondsSince1970:
            guard let seconds = fastDouble(index),
                  let micros = ISO8601.microseconds(secondsSince1970: seconds) else { return nil }
            return ISO8601.date(microseconds: micros)
        case .other, .custom:
            return nil
        }
    }

    /// Reads a `Bool`.
    public mutating func decode(_ type: Bool.Type) throws -> Bool {
        let index = try nextIndex()
        if let value = fastBool(index) { return value }
        return try converted(index, ValueDecoding.bool)
    }
    /// Reads a `String`.
    public mutating func decode(_ type: String.Type) throws -> String {
        let index = try nextIndex()
        if let value = fastString(index) { return value }
        return try converted(index, ValueDecoding.string)
    }
    /// Reads a `Double`.
    public mutating func decode(_ type: Double.Type) throws -> Double {
        let index = try nextIndex()
        if let value = fastDouble(index) { return value }
        return try converted(index, ValueDecoding.double)
    }
    /// Reads a `Float`.
    public mutating func decode(_ type: Float.Type) throws -> Float {
        try converted(try nextIndex(), ValueDecoding.float)
    }
    /// Reads an `Int`.
    public mutating func decode(_ type: Int.Type) throws -> Int {
        let index = try nextIndex()
        if let integer = fastInteger(index), let value = Int(exactly: integer) { return value }
        return try converted(index) { try ValueDecoding.integer(Int.self, $0, $1) }
    }
    /// Reads an `Int32`.
    public mutating func decode(_ type: Int32.Type) throws -> Int32 {
        let index = try nextIndex()
        if let integer = fastInteger(index), let value = Int32(exactly: integer) { return value }
        return try converted(index) { try ValueDecoding.integer(Int32.self, $0, $1) }
    }
    /// Reads an `Int64`.
    public mutating func decode(_ type: Int64.Type) throws -> Int64 {
        let index = try nextIndex()
        if let value = fastInteger(index) { return value }
        return try converted(index) { try ValueDecoding.integer(Int64.self, $0, $1) }
    }
    /// Reads a `Date`, with the store's date strategy.
    public mutating func decode(_ type: Date.Type) throws -> Date {
        let index = try nextIndex()
        if let value = fastDate(index) { return value }
        let options = plan.options
        return try converted(index) { try ValueDecoding.date($0, $1, options) }
    }
    /// Reads any other `Decodable` type, as `RowDecoder` reads a property of that type.
    public mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let options = plan.options
        return try converted(try nextIndex()) { try ValueDecoding.decode(type, from: $0, $1, options) }
    }

    // An optional property tries the fast path first: it says nil for a NULL
    // cell (the ``RowSource`` contract), so only a cell it declined is asked
    // whether it is NULL.

    /// Reads an optional `Bool`: nil for NULL.
    public mutating func decode(_ type: Bool?.Type) throws -> Bool? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastBool(index) { return value }
        if isNull(index) { return nil }
        return try convertedIfPresent(index, ValueDecoding.bool)
    }
    /// Reads an optional `String`: nil for NULL.
    public mutating func decode(_ type: String?.Type) throws -> String? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastString(index) { return value }
        if isNull(index) { return nil }
        return try convertedIfPresent(index, ValueDecoding.string)
    }
    /// Reads an optional `Double`: nil for NULL.
    public mutating func decode(_ type: Double?.Type) throws -> Double? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastDouble(index) { return value }
        if isNull(index) { return nil }
        return try convertedIfPresent(index, ValueDecoding.double)
    }
    /// Reads an optional `Int`: nil for NULL.
    public mutating func decode(_ type: Int?.Type) throws -> Int? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let integer = fastInteger(index), let value = Int(exactly: integer) { return value }
        if isNull(index) { return nil }
        return try convertedIfPresent(index) { try ValueDecoding.integer(Int.self, $0, $1) }
    }
    /// Reads an optional `Int64`: nil for NULL.
    public mutating func decode(_ type: Int64?.Type) throws -> Int64? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastInteger(index) { return value }
        if isNull(index) { return nil }
        return try convertedIfPresent(index) { try ValueDecoding.integer(Int64.self, $0, $1) }
    }
    /// Reads an optional `Date`: nil for NULL.
    public mutating func decode(_ type: Date?.Type) throws -> Date? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastDate(index) { return value }
        if isNull(index) { return nil }
        let options = plan.options
        return try convertedIfPresent(index) { try ValueDecoding.date($0, $1, options) }
    }
    /// Reads any other optional `Decodable` type: nil for NULL.
    public mutating func decode<T: Decodable>(_ type: T?.Type) throws -> T? {
        guard let index = try nextIndexIfPresent(), !isNull(index) else { return nil }
        let options = plan.options
        return try convertedIfPresent(index) { try ValueDecoding.decode(T.self, from: $0, $1, options) }
    }
}

/// A value source (a ``Row``) as an object, for a ``ColumnReader``.
final class RowSourceBox: RowSource {
    let base: any RowSource

    init(_ base: any RowSource) {
        self.base = base
    }

    var columns: ColumnSet { base.columns }
    func value(at index: Int) throws -> Value { try base.value(at: index) }
    func isNull(at index: Int) -> Bool { base.isNull(at: index) }
    func integer(at index: Int) -> Int64? { base.integer(at: index) }
    func double(at index: Int) -> Double? { base.double(at: index) }
    func bool(at index: Int) -> Bool? { base.bool(at: index) }
    var storesBooleansAsIntegers: Bool { base.storesBooleansAsIntegers }
    func date(at index: Int) -> Date? { base.date(at: index) }
    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? { base.unsafeTextBytes(at: index) }
}

/// Where each of a ``ColumnMapped`` type's keys sits in one statement's columns.
final class ColumnMapping {
    let keys: [String]
    /// Column positions by key order; -1 for a key with no column.
    let indexes: [Int]
    /// The same positions in memory the mapping owns, which readers use
    /// without reference counting.
    let indexBuffer: UnsafeBufferPointer<Int>
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
        let buffer = UnsafeMutableBufferPointer<Int>.allocate(capacity: indexes.count)
        _ = buffer.initialize(from: indexes)
        indexBuffer = UnsafeBufferPointer(buffer)
        dateForm = switch plan.options.dateStrategy {
        case .deferredToStore, .iso8601Text: .text
        case .secondsSince1970: .secondsSince1970
        case .custom: .custom
        default: .other
        }
    }

    deinit {
        indexBuffer.deallocate()
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


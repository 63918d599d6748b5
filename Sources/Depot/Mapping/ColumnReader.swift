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
    @usableFromInline private(set) var source: any RowSource & AnyObject
    /// The plan owns the column positions and outlives every reader made from it.
    unowned(unsafe) let plan: DecodePlan
    /// The plan's mapping, as long-lived as the plan.
    unowned(unsafe) let mapping: ColumnMapping?
    /// The mapping's column positions, by key order (-1 for a key with no
    /// column), read without reference counting: every read goes through them.
    @usableFromInline let indexes: UnsafePointer<Int>?
    @usableFromInline let keyCount: Int
    /// How the store's date strategy reads a date.
    let dateForm: ColumnMapping.DateForm
    @usableFromInline var position = 0

    /// The source's ``RowSource/storesBooleansAsIntegers``, asked once.
    @usableFromInline let booleansAreIntegers: Bool

    /// The current row's cells, one per key in key order, read ahead in one
    /// call when the source can (``RowSource/readCells(at:into:)``); nil when
    /// each read asks the source. The memory belongs to the caller and
    /// outlives the reader.
    @usableFromInline private(set) var cells: UnsafeMutablePointer<RowCell>?

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
    @inlinable @inline(__always)
    mutating func nextIndex() throws -> Int {
        let position = self.position
        guard position < keyCount, let indexes else { try Self.failReadingTooMany(keyCount) }
        self.position = position &+ 1
        let index = indexes[position]
        guard index >= 0 else { try failFindingKey(at: position) }
        return index
    }

    /// The next key's column index for an optional property: nil for a
    /// missing column when the strategy allows it.
    @inlinable @inline(__always)
    mutating func nextIndexIfPresent() throws -> Int? {
        let position = self.position
        guard position < keyCount, let indexes else { try Self.failReadingTooMany(keyCount) }
        self.position = position &+ 1
        let index = indexes[position]
        guard index >= 0 else { return try missingOptionalKey(at: position) }
        return index
    }

    /// A key with no column, for an optional property: nil when the strategy
    /// allows it, an error otherwise.
    @usableFromInline @inline(never)
    func missingOptionalKey(at position: Int) throws -> Int? {
        if plan.options.missingColumns.throws { try failFindingKey(at: position) }
        return nil
    }

    // The failures are made out of line (`@inline(never)`), here and in the
    // conversions below: inlined, the errors they build gave every read a
    // large stack frame to set up and tear down, on every cell.

    @usableFromInline @inline(never)
    static func failReadingTooMany(_ count: Int) throws -> Never {
        let message = "the generated column mapping read more properties than its columnKeys list (\(count))"
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: message,
                                                underlyingError: ColumnFailure(message: message)))
    }

    @usableFromInline @inline(never)
    func failFindingKey(at position: Int) throws -> Never {
        throw plan.keyNotFound(key(at: position))
    }

    /// The key at `position`, for errors only: a read that succeeds never touches the name.
    private func key(at position: Int) -> String {
        mapping.map { $0.keys[position] } ?? ""
    }

    /// The cell the fast path declined, read as a ``Value`` and converted with
    /// `RowDecoder`'s rules and errors. The key is the one just moved past.
    @inline(never)
    mutating func converted<T>(_ index: Int, _ convert: (Value, ColumnContext) throws -> T) throws -> T {
        try convert(try source.value(at: index), plan.context(index, keyName: key(at: position - 1)))
    }

    /// The same for an optional property: nil for NULL.
    @inline(never)
    mutating func convertedIfPresent<T>(_ index: Int, _ convert: (Value, ColumnContext) throws -> T) throws -> T? {
        let value = try source.value(at: index)
        if case .null = value { return nil }
        return try convert(value, plan.context(index, keyName: key(at: position - 1)))
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


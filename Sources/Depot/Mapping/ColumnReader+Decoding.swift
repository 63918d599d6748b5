import Foundation

// The reads the generated `init(columns:)` calls, one per property.
//
// The common types' reads are `@inlinable`: compiled into the caller's
// generated initializer, a read costs what its fast path costs, without a
// call and a stack frame per cell. Each fast path takes only the one kind of
// cell whose conversion cannot fail; any other cell goes to an out-of-line
// slow path (`slow…`), which reads the cell as a ``Value`` and converts it
// with `RowDecoder`'s rules and errors.
//
// Each fast path reads the key's cell from the row read ahead when there is
// one: a cell of another kind declines at once, as the source's own fast
// path would; a cell not read ahead (``RowCell/Kind/other``) is asked of the
// source. They are `mutating` though they change nothing: called on `inout
// self`, a non-mutating method made the compiler copy the reader (and retain
// its source) for every cell.

extension ColumnReader {
    /// The cell of the key just moved past, when the row was read ahead and
    /// the cell with it; nil to ask the source.
    @inlinable @inline(__always)
    func readAhead() -> RowCell? {
        guard let cells else { return nil }
        let cell = cells[position &- 1]
        return cell.kind == .other ? nil : cell
    }

    @inlinable @inline(__always)
    mutating func fastInteger(_ index: Int) -> Int64? {
        if let cell = readAhead() { return cell.kind == .integer ? cell.integer : nil }
        return source.integer(at: index)
    }

    @inlinable @inline(__always)
    mutating func fastDouble(_ index: Int) -> Double? {
        if let cell = readAhead() { return cell.kind == .double ? cell.double : nil }
        return source.double(at: index)
    }

    @inlinable @inline(__always)
    mutating func fastTextBytes(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        if let cell = readAhead() { return cell.kind == .text ? cell.textBytes : nil }
        return source.unsafeTextBytes(at: index)
    }

    @inlinable @inline(__always)
    mutating func isNull(_ index: Int) -> Bool {
        if let cell = readAhead() { return cell.kind == .null }
        return source.isNull(at: index)
    }

    @inlinable @inline(__always)
    mutating func fastBool(_ index: Int) -> Bool? {
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

    @inlinable @inline(__always)
    mutating func fastString(_ index: Int) -> String? {
        guard let bytes = fastTextBytes(index) else { return nil }
        // ASCII needs no validation; other text must be valid UTF-8, or the slow path reports it.
        if TextBytes.isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }

    @inline(__always)
    mutating func fastDate(_ index: Int) -> Date? {
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

    // The slow paths, out of line.

    @usableFromInline @inline(never)
    mutating func slowBool(_ index: Int) throws -> Bool { try converted(index, ValueDecoding.bool) }
    @usableFromInline @inline(never)
    mutating func slowString(_ index: Int) throws -> String { try converted(index, ValueDecoding.string) }
    @usableFromInline @inline(never)
    mutating func slowDouble(_ index: Int) throws -> Double { try converted(index, ValueDecoding.double) }
    @usableFromInline @inline(never)
    mutating func slowInteger<T: FixedWidthInteger>(_ type: T.Type, _ index: Int) throws -> T {
        try converted(index) { try ValueDecoding.integer(T.self, $0, $1) }
    }
    @usableFromInline @inline(never)
    mutating func slowOptionalBool(_ index: Int) throws -> Bool? { try convertedIfPresent(index, ValueDecoding.bool) }
    @usableFromInline @inline(never)
    mutating func slowOptionalString(_ index: Int) throws -> String? { try convertedIfPresent(index, ValueDecoding.string) }
    @usableFromInline @inline(never)
    mutating func slowOptionalDouble(_ index: Int) throws -> Double? { try convertedIfPresent(index, ValueDecoding.double) }
    @usableFromInline @inline(never)
    mutating func slowOptionalInteger<T: FixedWidthInteger>(_ type: T.Type, _ index: Int) throws -> T? {
        try convertedIfPresent(index) { try ValueDecoding.integer(T.self, $0, $1) }
    }

    /// Reads a `Bool`.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Bool.Type) throws -> Bool {
        let index = try nextIndex()
        if let value = fastBool(index) { return value }
        return try slowBool(index)
    }
    /// Reads a `String`.
    @inlinable @inline(__always)
    public mutating func decode(_ type: String.Type) throws -> String {
        let index = try nextIndex()
        if let value = fastString(index) { return value }
        return try slowString(index)
    }
    /// Reads a `Double`.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Double.Type) throws -> Double {
        let index = try nextIndex()
        if let value = fastDouble(index) { return value }
        return try slowDouble(index)
    }
    /// Reads a `Float`.
    public mutating func decode(_ type: Float.Type) throws -> Float {
        try converted(try nextIndex(), ValueDecoding.float)
    }
    /// Reads an `Int`.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Int.Type) throws -> Int {
        let index = try nextIndex()
        if let integer = fastInteger(index), let value = Int(exactly: integer) { return value }
        return try slowInteger(Int.self, index)
    }
    /// Reads an `Int32`.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Int32.Type) throws -> Int32 {
        let index = try nextIndex()
        if let integer = fastInteger(index), let value = Int32(exactly: integer) { return value }
        return try slowInteger(Int32.self, index)
    }
    /// Reads an `Int64`.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Int64.Type) throws -> Int64 {
        let index = try nextIndex()
        if let value = fastInteger(index) { return value }
        return try slowInteger(Int64.self, index)
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
    @inlinable @inline(__always)
    public mutating func decode(_ type: Bool?.Type) throws -> Bool? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastBool(index) { return value }
        if isNull(index) { return nil }
        return try slowOptionalBool(index)
    }
    /// Reads an optional `String`: nil for NULL.
    @inlinable @inline(__always)
    public mutating func decode(_ type: String?.Type) throws -> String? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastString(index) { return value }
        if isNull(index) { return nil }
        return try slowOptionalString(index)
    }
    /// Reads an optional `Double`: nil for NULL.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Double?.Type) throws -> Double? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastDouble(index) { return value }
        if isNull(index) { return nil }
        return try slowOptionalDouble(index)
    }
    /// Reads an optional `Int`: nil for NULL.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Int?.Type) throws -> Int? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let integer = fastInteger(index), let value = Int(exactly: integer) { return value }
        if isNull(index) { return nil }
        return try slowOptionalInteger(Int.self, index)
    }
    /// Reads an optional `Int64`: nil for NULL.
    @inlinable @inline(__always)
    public mutating func decode(_ type: Int64?.Type) throws -> Int64? {
        guard let index = try nextIndexIfPresent() else { return nil }
        if let value = fastInteger(index) { return value }
        if isNull(index) { return nil }
        return try slowOptionalInteger(Int64.self, index)
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

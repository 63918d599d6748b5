import Foundation

/// One cell of a source's current row, read ahead with the others by
/// ``RowSource/readCells(at:into:)``: its kind and contents, without a ``Value``.
///
/// A generated column mapping asks its source for a whole row's cells in one
/// call, then reads them from memory, where asking cell by cell cost a call
/// through the protocol and the backend's bookkeeping for every cell.
///
/// Caveat: a ``Kind/text`` cell's bytes belong to the engine, as
/// ``RowSource/unsafeTextBytes(at:)``'s do: valid until the source moves to
/// another row.
public struct RowCell {
    /// What a cell holds, as far as the fast reads care.
    public enum Kind: UInt8 {
        /// Not read ahead: the reader asks the source for this cell alone, as
        /// it would without ``RowSource/readCells(at:into:)`` (a blob, a type
        /// the backend reads only through ``RowSource/value(at:)``).
        case other
        /// NULL.
        case null
        /// An integer, in ``integer``.
        case integer
        /// A floating-point number, in ``double``.
        case double
        /// A Boolean cell of an engine that has them, in ``bool``.
        case bool
        /// Text, in ``textBytes``; the bytes may not be valid UTF-8.
        case text
        /// An instant the engine stores as a date or timestamp, in ``date``.
        case date
    }

    /// The kind of cell.
    public var kind: Kind
    /// A text's length in bytes: a text cell longer than `Int32.max` is left to the reader.
    private var count: Int32
    /// The integer, the number's or the instant's bits, the Boolean, or the text's address.
    private var payload: UInt64

    @inline(__always)
    private init(_ kind: Kind, payload: UInt64 = 0, count: Int32 = 0) {
        self.kind = kind
        self.count = count
        self.payload = payload
    }

    /// A cell to read through the source, cell by cell.
    public static var other: RowCell { RowCell(.other) }
    /// A NULL cell.
    public static var null: RowCell { RowCell(.null) }
    /// An integer cell.
    @inline(__always)
    public static func integer(_ value: Int64) -> RowCell { RowCell(.integer, payload: UInt64(bitPattern: value)) }
    /// A floating-point cell.
    @inline(__always)
    public static func double(_ value: Double) -> RowCell { RowCell(.double, payload: value.bitPattern) }
    /// A Boolean cell.
    @inline(__always)
    public static func bool(_ value: Bool) -> RowCell { RowCell(.bool, payload: value ? 1 : 0) }
    /// A text cell: `count` bytes at `start`, which the engine keeps until the
    /// source moves; a cell to read alone (``other``) when `count` is negative
    /// or does not fit in 32 bits.
    @inline(__always)
    public static func text(_ start: UnsafePointer<UInt8>?, count: Int) -> RowCell {
        guard let count = Int32(exactly: count), count >= 0 else { return .other }
        return RowCell(.text, payload: UInt64(UInt(bitPattern: start)), count: count)
    }
    /// A date or timestamp cell.
    @inline(__always)
    public static func date(_ value: Date) -> RowCell { RowCell(.date, payload: value.timeIntervalSinceReferenceDate.bitPattern) }

    /// The integer of an ``Kind/integer`` cell.
    @inline(__always) public var integer: Int64 { Int64(bitPattern: payload) }
    /// The number of a ``Kind/double`` cell.
    @inline(__always) public var double: Double { Double(bitPattern: payload) }
    /// The Boolean of a ``Kind/bool`` cell.
    @inline(__always) public var bool: Bool { payload != 0 }
    /// The bytes of a ``Kind/text`` cell.
    @inline(__always) public var textBytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafePointer(bitPattern: UInt(truncatingIfNeeded: payload)), count: Int(count))
    }
    /// The instant of a ``Kind/date`` cell.
    @inline(__always) public var date: Date { Date(timeIntervalSinceReferenceDate: Double(bitPattern: payload)) }
}

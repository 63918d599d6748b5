import Foundation

/// The names of a result's columns, with a lookup from name to position.
///
/// Built once per statement and shared by all its rows.
public final class ColumnSet: Sendable, Hashable, CustomStringConvertible {
    /// The column names, in order. Names may repeat (`SELECT a.id, b.id`).
    public let names: [String]
    private let positions: [String: Int]

    /// Creates a column set; a repeated name resolves to its first position.
    public init(_ names: [String]) {
        self.names = names
        var positions: [String: Int] = [:]
        positions.reserveCapacity(names.count)
        for (index, name) in names.enumerated() where positions[name] == nil {
            positions[name] = index
        }
        self.positions = positions
    }

    /// The number of columns.
    public var count: Int { names.count }

    /// The position of the first column with this exact name.
    public func index(of name: String) -> Int? { positions[name] }

    public static func == (lhs: ColumnSet, rhs: ColumnSet) -> Bool { lhs.names == rhs.names }
    public func hash(into hasher: inout Hasher) { hasher.combine(names) }
    public var description: String { names.joined(separator: ", ") }
}

/// A source of column values: a materialized ``Row``, or a backend's statement
/// positioned on a row (so decoding reads straight from the engine).
public protocol RowSource {
    /// The result's columns.
    var columns: ColumnSet { get }
    /// The value of the column at `index`, which is in `0..<columns.count`.
    func value(at index: Int) throws -> Value

    // Fast paths, for a backend that can read a cell without building a ``Value``.
    // Each answers only for the one kind of cell it names and says nil otherwise;
    // the caller then reads ``value(at:)``, whose rules (and errors) always hold.
    // The defaults read ``value(at:)``.

    /// Whether the cell is NULL.
    func isNull(at index: Int) -> Bool
    /// The cell's integer, when the cell holds an integer; nil for any other cell.
    func integer(at index: Int) -> Int64?
    /// The cell's floating-point number, when it holds one; nil for any other cell.
    func double(at index: Int) -> Double?
    /// The cell's Boolean, when the engine stores it as one; nil for any other cell.
    func bool(at index: Int) -> Bool?
    /// Whether the engine has no Boolean cells and stores a Bool as the
    /// integer 0 or 1 (SQLite): a Bool is then read as an integer first, and
    /// ``bool(at:)`` asked only after. A hint for speed, never for meaning:
    /// both answers read the same values. The default is false.
    var storesBooleansAsIntegers: Bool { get }
    /// The cell's instant, when the engine stores it as a date or timestamp; nil
    /// for any other cell (text and numbers included).
    func date(at index: Int) -> Date?
    /// The bytes of a text cell, which may not be valid UTF-8; nil for any other cell.
    ///
    /// Caveat: the bytes belong to the engine and stay valid only until the
    /// source moves to another row or another cell of this row is read; copy
    /// them before then.
    func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>?

    /// Reads the current row's cells at `columns` (a column index each, or
    /// -1 for none) into `cells`, one per index, in order; false when the
    /// source reads cell by cell only. The default is false.
    ///
    /// Each cell is what the fast reads above would say for it: a cell they
    /// answer for gets its kind and contents, NULL is ``RowCell/null``, and
    /// any other cell (or one the backend would rather not read ahead) is
    /// ``RowCell/other``, which the reader then asks for alone. Reading ahead
    /// must change no cell: SQLite's text of a number, for one, is not asked for.
    func readCells(at columns: UnsafeBufferPointer<Int>, into cells: UnsafeMutablePointer<RowCell>) -> Bool

    /// How many rows the result holds in all, when the engine knows it once
    /// the first row is read (PostgreSQL's buffered results); nil otherwise.
    /// A hint, for reserving room: the rows read decide.
    var rowCountHint: Int? { get }

    /// The source itself when it is an object, as a backend's statement is;
    /// nil for a value. Provided by Depot (a class gets itself): the generated
    /// mapping's reader calls an object without the indirection a value in an
    /// existential needs, on every cell.
    var asObject: (any RowSource & AnyObject)? { get }
}

extension RowSource where Self: AnyObject {
    /// The source itself.
    public var asObject: (any RowSource & AnyObject)? { self }
}

extension RowSource {
    /// Nil: unknown.
    public var rowCountHint: Int? { nil }

    /// Nil: the source is a value.
    public var asObject: (any RowSource & AnyObject)? { nil }

    /// Whether ``value(at:)`` is NULL.
    public func isNull(at index: Int) -> Bool {
        (try? value(at: index))?.isNull ?? false
    }

    /// The integer ``value(at:)`` holds, if it holds one.
    public func integer(at index: Int) -> Int64? {
        if case .integer(let integer)? = try? value(at: index) { return integer }
        return nil
    }

    /// The floating-point number ``value(at:)`` holds, if it holds one.
    public func double(at index: Int) -> Double? {
        if case .double(let double)? = try? value(at: index) { return double }
        return nil
    }

    /// The Boolean ``value(at:)`` holds, if it holds one.
    public func bool(at index: Int) -> Bool? {
        if case .bool(let bool)? = try? value(at: index) { return bool }
        return nil
    }

    /// The date ``value(at:)`` holds, if it holds one.
    public func date(at index: Int) -> Date? {
        if case .date(let date)? = try? value(at: index) { return date }
        return nil
    }

    /// False: a Bool is asked for as a Boolean first.
    public var storesBooleansAsIntegers: Bool { false }

    /// False: the source is read cell by cell.
    public func readCells(at columns: UnsafeBufferPointer<Int>, into cells: UnsafeMutablePointer<RowCell>) -> Bool {
        false
    }

    /// None: a source without its own bytes to lend has its text read through ``value(at:)``.
    public func unsafeTextBytes(at index: Int) -> UnsafeBufferPointer<UInt8>? {
        nil
    }
}

/// One row of a result: column names and their values.
///
/// ```swift
/// let rows = try db.fetchAll(Row.self, "SELECT id, title FROM lists")
/// rows[0]["title"]   // .text("Groceries")
/// let list = try rows[0].decode(RemindersList.self)
/// ```
///
/// `Row` is `Decodable` only through a ``RowDecoder``: fetching `Row.self` gives
/// the raw values of each row, whatever its columns.
public struct Row: Sendable, Hashable, RowSource {
    /// The columns, in order.
    public let columns: ColumnSet
    /// The values, in column order.
    public let values: [Value]

    /// Creates a row. `values` must have one value per column.
    public init(columns: ColumnSet, values: [Value]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the first column with this name, or nil when there is no such column.
    ///
    /// Caveat: a column holding NULL gives `.null`, not nil.
    public subscript(_ name: String) -> Value? {
        columns.index(of: name).map { values[$0] }
    }

    /// The value at a position, which must be in `0..<values.count`.
    public subscript(_ index: Int) -> Value { values[index] }

    /// The value at a position, for decoders.
    public func value(at index: Int) throws -> Value { values[index] }
}

extension Row: CustomStringConvertible {
    /// `[id: INTEGER 1, title: TEXT 'Groceries']`.
    public var description: String {
        "[" + zip(columns.names, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}

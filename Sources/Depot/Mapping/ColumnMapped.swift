/// A type that maps its columns by position: generated code reads and writes each
/// property in turn, with none of Codable's container machinery.
///
/// Don't conform by hand; attach ``Columns()`` to the type:
///
/// ```swift
/// @Columns
/// struct Reminder: Record {
///     static let tableName = "reminders"
///     var id: Int64?
///     var title: String
///     var dueDate: Date?
/// }
/// ```
///
/// The generated mapping means exactly what the type's synthesized `Codable`
/// means: the same column names (after the key strategy), the same stored values,
/// the same decoded values and the same errors, word for word. Depot uses it for
/// every fetch, cursor, insert, update and upsert of the type; set
/// ``Store/Configuration/usesGeneratedMapping`` to false to go through `Codable`
/// instead, which the conformance suite does to prove the two identical.
///
/// Caveat: a type with its own `init(from:)` or `encode(to:)` is refused by the
/// macro, because the generated mapping could not follow them.
public protocol ColumnMapped: Codable {
    /// The typed columns, one ``QueryExpression`` per stored property, that
    /// ``Query`` closures receive as `$0`.
    associatedtype Columns: QueryColumns
    /// The coding keys of the stored properties, in the order the mapping reads and writes them.
    static var columnKeys: [String] { get }
    /// Reads each property in ``columnKeys`` order.
    init(columns: inout ColumnReader) throws
    /// Writes each property in ``columnKeys`` order.
    func encode(columns: inout ColumnWriter) throws
}

extension ColumnMapped {
    /// The typed columns of the query's first table.
    public static var columns: Columns { Columns(source: .root) }
}

/// Generates a ``ColumnMapped`` conformance: positional, Codable-free reading and
/// writing of the type's stored properties, for hand-written speed.
///
/// ```swift
/// @Columns
/// struct Item: Record {
///     static let tableName = "items"
///     var id: Int64
///     var title: String
///     var createdAt: Date
/// }
/// ```
///
/// A `CodingKeys` enum is followed: its raw values name the columns, and
/// properties it leaves out are neither read nor written (they need a default).
/// Caveat: every stored property needs a type annotation (`var count: Int = 0`,
/// not `var count = 0`), so that the generated code reads the right type.
@attached(extension, conformances: ColumnMapped, names: named(Columns), named(columnKeys), named(init(columns:)), named(init(depotColumnValues:)), named(encode(columns:)))
public macro Columns() = #externalMacro(module: "DepotMacros", type: "ColumnsMacro")

/// A Codable type stored as the rows of one table.
///
/// ```swift
/// struct RemindersList: Record {
///     static let tableName = "remindersLists"
///     var id: Int64?          // nil until inserted: the engine assigns it
///     var title: String
///     var color: Int64
/// }
///
/// try await store.write { db in
///     let saved = try db.insert(RemindersList(id: nil, title: "Groceries", color: 0x4a99efff))
///     print(saved.id!)      // the generated id, read back with RETURNING
/// }
/// ```
///
/// The record's coding keys (after the store's key strategy) are its column names.
/// Caveat: a primary key property that is nil is left out of an INSERT so the
/// engine generates it; every other nil property is written as NULL.
public protocol Record: Codable, Sendable {
    /// The table that holds the records.
    static var tableName: String { get }
    /// The primary key's column names. Default: `["id"]`.
    static var primaryKey: [String] { get }
}

extension Record {
    /// The default primary key: a single `id` column.
    public static var primaryKey: [String] { ["id"] }
}

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
    /// The column that counts the record's saves, for optimistic concurrency;
    /// nil (the default) for none.
    ///
    /// With a version column, ``Database/update(_:)``, the upserts and
    /// ``Database/delete(_:)->Bool`` write only over the version the record was read
    /// at, in the statement itself, and store the version plus one. When
    /// another writer saved the row first they throw a `conflict`
    /// ``DatabaseError``: two people edit one reminder, the second save is
    /// refused instead of silently overwriting the first.
    ///
    /// ```swift
    /// struct Note: Record {
    ///     static let tableName = "notes"
    ///     static let versionColumn: String? = "version"
    ///     var id: Int64
    ///     var text: String
    ///     var version: Int64 = 0     // an INTEGER NOT NULL column
    /// }
    ///
    /// var note = try db.find(Note.self, id: 1)!
    /// note.text = "Buy oat milk"
    /// note = try db.update(note)   // version 3 -> 4; `conflict` if it was not 3
    /// ```
    ///
    /// The builder's ``Database/update(_:set:)`` bumps the version of every row
    /// it changes, so a record read before it conflicts too. Caveat: the
    /// version is an integer that is never NULL; insert the record with
    /// any starting value (0).
    static var versionColumn: String? { get }
}

extension Record {
    /// The default primary key: a single `id` column.
    public static var primaryKey: [String] { ["id"] }
    /// No version column: saves overwrite (the default).
    public static var versionColumn: String? { nil }
}

/// What an INSERT of ``Database/insert(into:columns:_:onConflict:)`` does
/// with a stored row whose values of `target` (a primary key or a unique
/// constraint) clash with a row it inserts: keep it, or update it.
///
/// ```swift
/// // Count visits: insert 1, or add 1 to the stored count.
/// try db.insert(into: "visits", columns: ["page", "count"], "VALUES (\(page), 1)",
///               onConflict: .update(["page"], set: [.init("count", "\(ident: "visits").\"count\" + \(inserted: "count")")]))
/// ```
///
/// One meaning on every engine: `ON CONFLICT … DO NOTHING | DO UPDATE` where
/// the engine has it, the engine's own clause where it has not (MariaDB's
/// `ON DUPLICATE KEY UPDATE`, for a table whose one unique key is the target).
/// An assignment reads the stored row as it was before the statement
/// (`"t"."c"`) and the row the statement would have inserted (`\(inserted: "c")`).
public struct OnConflict: Sendable, Hashable {
    /// One column the update sets, and its new value.
    public struct Assignment: Sendable, Hashable {
        /// The column set.
        public var column: String
        /// Its new value: an expression that may read the stored row and `\(inserted:)` values.
        public var value: SQL

        /// Sets `column` to `value`.
        public init(_ column: String, _ value: SQL) {
            self.column = column
            self.value = value
        }

        /// Sets `column` to the value the statement would have inserted.
        public static func inserted(_ column: String) -> Assignment {
            Assignment(column, "\(inserted: column)")
        }
    }

    /// The columns whose values clash: a primary key or a unique constraint, exactly.
    public var target: [String]
    /// What the update sets; nil keeps the stored row.
    public var assignments: [Assignment]?

    /// Keeps the stored row: the clashing row is not inserted.
    public static func doNothing(_ target: [String]) -> OnConflict {
        OnConflict(target: target, assignments: nil)
    }

    /// Updates the stored row with these assignments (none: leaves it as it is).
    public static func update(_ target: [String], set assignments: [Assignment]) -> OnConflict {
        OnConflict(target: target, assignments: assignments)
    }

    /// Updates these columns of the stored row to the values the statement would have inserted.
    public static func update(_ target: [String], setting columns: [String]) -> OnConflict {
        OnConflict(target: target, assignments: columns.map(Assignment.inserted))
    }
}

import Depot
import Foundation

/// Rows as an aligned text table, for inline snapshots in tests.
///
/// ```swift
/// let table = try await store.read { db in try db.snapshot("SELECT id, title FROM lists ORDER BY id") }
/// #expect(table == """
///     id | title
///     ---+--------
///     1  | Inbox
///     2  | NULL
///     """)
/// ```
///
/// Cells show the values the engine returned (a date stored as text on
/// SQLite reads as text): integers and doubles as
/// Swift prints them, booleans as `true`/`false`, text as it is (a newline as
/// `\n`, a tab as `\t`, a backslash doubled), NULL as `NULL`, bytes as
/// `x'…'` in hex, dates as Depot stores them on SQLite (`2026-11-25 17:00:00.000001`, UTC, to the microsecond). Columns are padded
/// to their widest cell, counted in characters.
public enum Snapshot {
    /// The table of these rows; the header comes from the first row's columns
    /// (`columns` when there are no rows).
    public static func table(_ rows: [Row], columns: [String] = []) -> String {
        let names = rows.first?.columns.names ?? columns
        let cells = rows.map { $0.values.map(cell) }
        var widths = names.map(\.count)
        for row in cells {
            for (index, text) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], text.count) }
        }
        func line(_ texts: [String]) -> String {
            texts.enumerated().map { index, text in
                index == texts.count - 1 ? text : text.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: " | ")
        }
        let rule = widths.enumerated().map { index, width in
            String(repeating: "-", count: index == 0 || index == widths.count - 1 ? width + 1 : width + 2)
        }.joined(separator: "+")
        return ([line(names), rule] + cells.map(line)).joined(separator: "\n")
    }

    /// One cell as the table shows it.
    public static func cell(_ value: Value) -> String {
        switch value {
        case .null: return "NULL"
        case .bool(let bool): return bool ? "true" : "false"
        case .integer(let integer): return String(integer)
        case .double(let double): return "\(double)"
        case .text(let text), .json(let text):
            return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
                .replacingOccurrences(of: "\t", with: "\\t").replacingOccurrences(of: "\r", with: "\\r")
        case .blob(let data): return "x'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        case .date(let date): return ISO8601.format(date) ?? "\(date)"
        case .uuid(let uuid): return uuid.uuidString.lowercased()
        case .decimal(let decimal, let scale): return Value.decimalText(decimal, scale: scale)
        }
    }
}

extension Database {
    /// The rows a statement returns, as a ``Snapshot`` table.
    public func snapshot(_ sql: SQL) throws -> String {
        Snapshot.table(try fetchAll(Row.self, sql))
    }
}

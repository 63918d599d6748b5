/// How property names become column names, for both ``RowEncoder`` and ``RowDecoder``.
///
/// The mapping always goes from the Swift name to the column name, so one
/// strategy serves both directions:
///
/// ```swift
/// var decoder = RowDecoder()
/// decoder.keyStrategy = .snakeCase   // `dueDate` reads the column `due_date`
/// ```
public enum KeyStrategy: Sendable {
    /// Column names are the coding keys as they are.
    case useDefaultKeys
    /// `dueDate` is stored in `due_date`, `remindersListID` in `reminders_list_id`.
    case snakeCase
    /// Your own mapping from a coding key to a column name.
    case custom(@Sendable (String) -> String)

    /// The column name for a coding key.
    public func columnName(for key: String) -> String {
        switch self {
        case .useDefaultKeys: key
        case .snakeCase: Self.snakeCased(key)
        case .custom(let transform): transform(key)
        }
    }

    var isDefault: Bool {
        if case .useDefaultKeys = self { return true }
        return false
    }

    /// `myURLValue2` → `my_url_value2`: a word starts at an upper-case letter that
    /// follows a lower-case letter or digit, or that begins a capitalised word after an acronym.
    static func snakeCased(_ key: String) -> String {
        let scalars = Array(key.unicodeScalars)
        guard !scalars.isEmpty else { return key }
        var result = String.UnicodeScalarView()
        func isUpper(_ s: Unicode.Scalar) -> Bool { s.properties.isUppercase }
        func isLowerOrDigit(_ s: Unicode.Scalar) -> Bool {
            s.properties.isLowercase || ("0"..."9").contains(s)
        }
        for (i, scalar) in scalars.enumerated() {
            if i > 0, isUpper(scalar), scalars[i - 1] != "_" {
                let previous = scalars[i - 1]
                let nextIsLower = i + 1 < scalars.count && scalars[i + 1].properties.isLowercase
                if isLowerOrDigit(previous) || (isUpper(previous) && nextIsLower) {
                    result.append("_")
                }
            }
            result.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
        }
        return String(result)
    }
}

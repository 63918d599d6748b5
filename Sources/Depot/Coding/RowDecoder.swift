import Foundation

/// Decodes a row into a `Decodable` value.
///
/// Modeled on `JSONDecoder`. Each property reads the column of the same name
/// (after the ``keyStrategy``); nested structs, arrays and dictionaries read
/// JSON; RawRepresentable enums read their raw value.
///
/// ```swift
/// let reminder = try RowDecoder().decode(Reminder.self, from: row)
/// ```
///
/// Decoding is strict, and every failure is a `DecodingError` whose description
/// names the column and its index, the Swift type wanted and what the column
/// held (`column "priority" (index 4): cannot decode Int8 from INTEGER 300: out of range -128...127`):
/// - NULL into a non-optional property is `valueNotFound`, never 0 or "".
/// - A missing column is `keyNotFound`, even for an optional property: a typo in
///   a query must not read as nil. Set ``missingColumnStrategy`` to allow it.
/// - Integers never wrap; a Double column decodes into an integer only when whole.
/// - "" and NULL stay distinct; an empty blob is empty `Data`.
/// - UUIDs read from native UUIDs, text in either case, or 16-byte blobs.
public struct RowDecoder: Sendable {
    /// What to do when a property has no column.
    public enum MissingColumnStrategy: Sendable {
        /// Throw `keyNotFound`, for optional properties too. The default.
        case `throw`
        /// An optional property with no column decodes as nil; a non-optional one still throws.
        case decodeOptionalAsNil
    }

    /// How `Date` properties are read. Default: the store's native form or ISO-8601 text.
    public var dateDecodingStrategy: DateStrategy = .deferredToStore
    /// How `Data` properties are read. Default: blobs.
    public var dataDecodingStrategy: DataStrategy = .blob
    /// How property names become column names. Default: unchanged.
    public var keyStrategy: KeyStrategy = .useDefaultKeys
    /// What a property with no column does. Default: throw.
    public var missingColumnStrategy: MissingColumnStrategy = .throw
    /// The JSON decoder for nested values.
    public var jsonDecoder: JSONDecoder = JSONDecoder()
    /// JSON decoders for particular columns, by column name; others use ``jsonDecoder``.
    public var columnJSONDecoders: [String: JSONDecoder] = [:]
    /// Values your `init(from:)` implementations can read from `decoder.userInfo`,
    /// for the row and for nested values read from JSON (added to the JSON
    /// decoder's own `userInfo`, whose entries win on a shared key).
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// A decoder with default strategies.
    public init() {}

    var options: DecodingOptions {
        let json = jsonDecoder.adding(userInfo: userInfo)
        let columns = columnJSONDecoders.mapValues { $0.adding(userInfo: userInfo) }
        return DecodingOptions(
            dateStrategy: dateDecodingStrategy,
            dataStrategy: dataDecodingStrategy,
            keyStrategy: keyStrategy,
            missingColumns: missingColumnStrategy,
            jsonDecoder: { column in column.flatMap { columns[$0] } ?? json },
            userInfo: userInfo)
    }

    /// Decodes a row.
    public func decode<T: Decodable>(_ type: T.Type = T.self, from row: Row) throws -> T {
        try Self.decode(type, from: row, plan: DecodePlan(columns: row.columns, options: options, type: type))
    }

    /// Decodes the current row of a source through a plan made once for all its rows.
    static func decode<T: Decodable>(_ type: T.Type, from source: some RowSource, plan: DecodePlan) throws -> T {
        if plan.readsSingleColumn, let known = try plan.decodeKnownSingleColumn(type, from: source) {
            return known
        }
        if plan.readsJSONCollection { return try plan.decodeJSONSingleColumn(type, from: source) }
        do {
            if let mapping = plan.mapping {
                return try mapping.type.decodeMapped(type, from: source, plan: plan, mapping: mapping)
            }
            return try T(from: plan.decoder(for: source))
        } catch is NeedsJSON {
            // An array, a set or another type that reads an unkeyed container: a
            // row has no list of values, so the type is one column holding JSON.
            return try plan.decodeJSONSingleColumn(type, from: source)
        } catch let error as DecodingError {
            throw plan.locating(error, type, from: source)
        }
    }
}

/// Dictionaries with string keys: at the top of a row they read one column holding
/// a JSON object, not the row's columns by name (which would read `{"a":1}` as
/// a one-entry dictionary of text).
private protocol JSONDictionaryMarker {}
extension Dictionary: JSONDictionaryMarker where Key == String {}

/// Builds a copy of a JSON coder with `userInfo` added, so nested values see the
/// row coder's user info. The coder's own entries win over the row coder's.
extension JSONDecoder {
    func adding(userInfo extra: [CodingUserInfoKey: any Sendable]) -> JSONDecoder {
        guard !extra.isEmpty else { return self }
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = dateDecodingStrategy
        copy.dataDecodingStrategy = dataDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        copy.keyDecodingStrategy = keyDecodingStrategy
        copy.allowsJSON5 = allowsJSON5
        copy.assumesTopLevelDictionary = assumesTopLevelDictionary
        copy.userInfo = userInfo.merging(extra.mapValues { $0 as Any }) { own, _ in own }
        return copy
    }
}

struct DecodingOptions: Sendable {
    var dateStrategy: DateStrategy = .deferredToStore
    var dataStrategy: DataStrategy = .blob
    var keyStrategy: KeyStrategy = .useDefaultKeys
    var missingColumns: RowDecoder.MissingColumnStrategy = .throw
    var jsonDecoder: @Sendable (_ column: String?) -> JSONDecoder = { _ in JSONDecoder() }
    var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// Whether ``ColumnMapped`` types decode through their generated mapping.
    var usesGeneratedMapping = true
}

/// What decoding one statement's rows into one type needs, computed once and
/// reused for every row: the columns, each coding key's column index, and
/// whether the type reads a single column.
///
/// Keys are usually asked for in the same order on every row, so after the first
/// row a lookup is one string comparison with the key expected next; any other
/// order falls back to a dictionary.
final class DecodePlan {
    let columns: ColumnSet
    let options: DecodingOptions
    /// Whether the type is one of the directly converted single-value types.
    let readsSingleColumn: Bool
    /// Whether the type is a dictionary, read from one column holding a JSON object.
    let readsJSONCollection: Bool
    // @exclusivity(unchecked) below: the dynamic exclusivity checks cost, in Benchmarks/instructions, fetch
    // through Codable: 165.6M instructions with these checks, 148.0M without (stream: 161.6M, 144.0M).
    // Touched for every value of every row, on one thread.
    @exclusivity(unchecked) private var keyIndexes: [String: Int] = [:]
    @exclusivity(unchecked) private var keyOrder: [(key: String, index: Int?)] = []
    @exclusivity(unchecked) private var cursor = 0
    @exclusivity(unchecked) private var learning = true
    @exclusivity(unchecked) private var rows = 0
    @exclusivity(unchecked) private var decoding: RowDecoding?
    private static let missing = -1
    /// A ``ColumnMapped`` type's column positions, when it decodes through its generated mapping.
    /// Set once, in `init` (it needs the plan): readers hold it unowned.
    private(set) var mapping: ColumnMapping?

    init(columns: ColumnSet, options: DecodingOptions, type: Any.Type) {
        self.columns = columns
        self.options = options
        self.readsSingleColumn = ValueDecoding.isKnown(type)
        self.readsJSONCollection = type is any JSONDictionaryMarker.Type
        if options.usesGeneratedMapping, !readsSingleColumn, let mapped = type as? any ColumnMapped.Type {
            mapping = ColumnMapping(type: mapped, plan: self)
        }
    }

    /// The column position for a coding key, after the key strategy; nil when the row has no such column.
    func columnIndex(forKey key: String) -> Int? {
        columns.index(of: columnName(forKey: key))
    }

    func keyNotFound(_ key: String) -> DecodingError {
        let column = columnName(forKey: key)
        let named = column == key ? "" : " (column \"\(column)\")"
        let message = "no column for key \"\(key)\"\(named); the row has columns: \(columns)"
        return .keyNotFound(NamedKey(stringValue: key), .init(codingPath: [], debugDescription: message,
                                      underlyingError: ColumnFailure(column: column, index: nil, message: message)))
    }

    /// The decoder for the current row of `source`: one object, reused row after row.
    func decoder(for source: some RowSource) -> RowDecoding {
        if rows > 0 { learning = false }
        rows += 1
        cursor = 0
        if let decoding {
            decoding.source = source
            return decoding
        }
        let decoding = RowDecoding(source: source, plan: self)
        self.decoding = decoding
        return decoding
    }

    /// The column index for a coding key, or nil when the row has no such column.
    @inline(__always)
    func index(forKey key: String) -> Int? {
        if cursor < keyOrder.count, keyOrder[cursor].key == key {
            cursor += 1
            return keyOrder[cursor - 1].index
        }
        if cursor > 0, keyOrder[cursor - 1].key == key { return keyOrder[cursor - 1].index }
        let index = lookup(key)
        if learning {
            keyOrder.append((key, index))
            cursor = keyOrder.count
        }
        return index
    }

    private func lookup(_ key: String) -> Int? {
        if let cached = keyIndexes[key] { return cached == Self.missing ? nil : cached }
        let name = options.keyStrategy.isDefault ? key : options.keyStrategy.columnName(for: key)
        let index = columns.index(of: name)
        keyIndexes[key] = index ?? Self.missing
        return index
    }

    func columnName(forKey key: String) -> String {
        options.keyStrategy.isDefault ? key : options.keyStrategy.columnName(for: key)
    }

    /// A known value type (Int, String, Date...) decoded from the row's only column.
    func decodeKnownSingleColumn<T>(_ type: T.Type, from source: some RowSource) throws -> T? {
        let value = try onlyValue(of: type, from: source)
        return try ValueDecoding.decodeKnown(type, from: value, context(0, keyName: nil), options)
    }

    /// A collection decoded from the JSON of the row's only column.
    func decodeJSONSingleColumn<T: Decodable>(_ type: T.Type, from source: some RowSource) throws -> T {
        let value = try onlyValue(of: type, from: source, hint: "a collection reads one column holding JSON; decode a struct to read several columns")
        return try ValueDecoding.decodeJSON(type, from: value, context(0, keyName: nil), options)
    }

    /// An error that a type's own `init(from:)` threw (an enum's unknown raw value,
    /// a validation), given the column it concerns: the first key of its coding
    /// path, or the only column of the row.
    func locating(_ error: DecodingError, _ type: Any.Type, from source: some RowSource) -> DecodingError {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c), .keyNotFound(_, let c): context = c
        @unknown default: return error
        }
        if context.underlyingError is ColumnFailure { return error }
        let index: Int?
        if let first = context.codingPath.first {
            index = columns.index(of: columnName(forKey: first.stringValue))
        } else {
            index = columns.count == 1 ? 0 : nil
        }
        guard let index, let value = try? source.value(at: index) else {
            let message = "cannot decode \(type) from a row of columns \(columns): \(context.debugDescription)"
            return .dataCorrupted(.init(codingPath: context.codingPath, debugDescription: message,
                                        underlyingError: ColumnFailure(message: message)))
        }
        return ValueDecoding.locating(error, type, value, ColumnContext(columns: columns, index: index, parentPath: context.codingPath))
    }

    func onlyValue(of type: Any.Type, from source: some RowSource, hint: String = "a single value needs exactly one column") throws -> Value {
        guard columns.count == 1 else {
            let message = "cannot decode \(type) from a row of \(columns.count) columns (\(columns)): \(hint)"
            throw DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: message,
                                                         underlyingError: ColumnFailure(message: message)))
        }
        return try source.value(at: 0)
    }

    @inline(__always)
    func context(_ index: Int, keyName: String?) -> ColumnContext {
        ColumnContext(columns: columns, index: index, keyName: keyName)
    }
}

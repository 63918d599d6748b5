import Foundation

/// An SQL statement and its bound values, built by string interpolation.
///
/// A plain interpolation always becomes a bound parameter, never text, so
/// user input cannot change the statement:
///
/// ```swift
/// let title = "Robert'); DROP TABLE reminders;--"
/// let query: SQL = "SELECT * FROM \(ident: "reminders") WHERE title = \(title)"
/// // SQLite: SELECT * FROM "reminders" WHERE title = ?1
/// // PostgreSQL: SELECT * FROM "reminders" WHERE title = $1
/// ```
///
/// Other interpolations say what they are: `\(ident:)` quotes an identifier,
/// `\(list:)` binds a parenthesised list of values, `\(type:)` writes an engine's
/// column type, `\(sql)` splices another `SQL`, and `\(unsafeRaw:)` pastes text as
/// it is. Only `unsafeRaw` can inject SQL: never give it user input.
///
/// Values are encoded as a ``RowEncoder`` with default strategies encodes a
/// column, so `\(priority)` binds an enum's raw value and `\(dueDate)` a date.
/// Caveat: a record stored with non-default strategies (dates as seconds, say)
/// must be queried with values in the same form.
public struct SQL: Sendable, Hashable {
    package enum Fragment: Sendable, Hashable {
        case raw(String)
        case value(Value)
        case identifier(String)
        case type(ColumnType)
        case castType(ColumnType)
        case keyType(ColumnType)
        /// The value an upsert would have inserted into a column, in its update.
        case inserted(String)
        /// A value that could not be encoded; rendering throws this message.
        case invalid(String)
        /// The place of a value the query builder bound apart, by its index in
        /// the builder's bind order; only the builder's own rendering reads it.
        case slot(Int)
    }

    package var fragments: [Fragment]

    package init(fragments: [Fragment]) {
        self.fragments = fragments
    }

    /// Raw SQL text with no bound values.
    ///
    /// Caveat: the text is used as it is. Never build it from user input; use
    /// interpolation, which binds values.
    public init(unsafeRaw text: String) {
        fragments = [.raw(text)]
    }

    /// Joins statements or fragments with a separator.
    ///
    /// ```swift
    /// let columns: [SQL] = ["\(ident: "a")", "\(ident: "b")"]
    /// let list = SQL.join(columns, separator: ", ")
    /// ```
    public static func join(_ parts: [SQL], separator: String) -> SQL {
        var result = SQL(fragments: [])
        for (i, part) in parts.enumerated() {
            if i > 0 { result.fragments.append(.raw(separator)) }
            result.fragments.append(contentsOf: part.fragments)
        }
        return result
    }

    /// Concatenates two statements.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        SQL(fragments: lhs.fragments + rhs.fragments)
    }

    /// Appends another statement.
    public static func += (lhs: inout SQL, rhs: SQL) {
        lhs.fragments += rhs.fragments
    }

    /// The statement as one engine sees it: text with that engine's placeholders,
    /// and the values to bind, in order.
    public func rendered(for dialect: some SQLDialect) throws(DatabaseError) -> (text: String, values: [Value]) {
        var text = ""
        var values: [Value] = []
        for fragment in fragments {
            if let plain = fragment.text(for: dialect) {
                // The first text taken as it is (a literal's, shared): one copy fewer.
                if text.isEmpty { text = plain } else { text += plain }
                continue
            }
            switch fragment {
            case .raw, .identifier, .type, .castType, .keyType: break
            case .value(let value):
                values.append(value)
                text += dialect.placeholder(values.count)
            case .inserted(let column): text += dialect.insertedValue(column: dialect.quote(identifier: column))
            case .invalid(let message): throw DatabaseError(.encoding, message)
            case .slot: throw DatabaseError(.misuse, "a query builder's operand was run as a statement of its own")
            }
        }
        return (text, values)
    }
}

extension SQL.Fragment {
    /// The fragment's text for `dialect` when it is text alone (raw text, a
    /// quoted identifier, a type name); nil for a value, a slot or an upsert's inserted value.
    package func text(for dialect: some SQLDialect) -> String? {
        switch self {
        case .raw(let raw): raw
        case .identifier(let name): dialect.quote(identifier: name)
        case .type(let type): dialect.typeName(type)
        case .castType(let type): dialect.castTypeName(type)
        case .keyType(let type): dialect.keyTypeName(type)
        case .value, .inserted, .invalid, .slot: nil
        }
    }
}

extension SQL: ExpressibleByStringInterpolation {
    /// SQL text from a literal with no interpolation.
    public init(stringLiteral value: String) {
        fragments = [.raw(value)]
    }

    /// SQL from a literal with interpolations.
    public init(stringInterpolation: StringInterpolation) {
        fragments = stringInterpolation.fragments
    }

    /// Builds ``SQL`` from an interpolated literal: values become bound parameters.
    public struct StringInterpolation: StringInterpolationProtocol {
        package var fragments: [Fragment] = []

        /// Starts an interpolation; Swift calls this for a literal.
        public init(literalCapacity: Int, interpolationCount: Int) {
            fragments.reserveCapacity(interpolationCount * 2 + 1)
        }

        /// Appends literal SQL text from the string literal itself.
        public mutating func appendLiteral(_ literal: String) {
            if literal.isEmpty { return }
            if case .raw(let previous)? = fragments.last {
                fragments[fragments.count - 1] = .raw(previous + literal)
            } else {
                fragments.append(.raw(literal))
            }
        }

        /// Binds a ``Value`` as it is.
        public mutating func appendInterpolation(_ value: Value) {
            fragments.append(.value(value))
        }

        /// Splices another statement, its bound values included.
        public mutating func appendInterpolation(_ sql: SQL) {
            fragments.append(contentsOf: sql.fragments)
        }

        /// A quoted identifier: a table or column name.
        ///
        /// `\(ident: "dueDate")` becomes `"dueDate"`, so the name keeps its case on
        /// PostgreSQL. A dotted name is not split: use `\(ident: "t").\(ident: "c")`.
        public mutating func appendInterpolation(ident name: String) {
            fragments.append(.identifier(name))
        }

        /// The engine's column type for a portable type, for DDL that runs on every engine.
        ///
        /// ```swift
        /// "CREATE TABLE t (id \(type: .autoIncrementingPrimaryKey), due \(type: .date))"
        /// ```
        public mutating func appendInterpolation(type: ColumnType) {
            fragments.append(.type(type))
        }

        /// The engine's type for a portable type as the target of a cast.
        ///
        /// ```swift
        /// "SELECT CAST(\(text) AS \(castType: .date))"
        /// ```
        public mutating func appendInterpolation(castType: ColumnType) {
            fragments.append(.castType(castType))
        }

        /// The engine's type for a portable type in a primary key or an index
        /// (``SQLDialect/keyTypeName(_:)``): text and blobs take a bounded type
        /// where the engine cannot key its unbounded ones (MariaDB).
        ///
        /// ```swift
        /// "CREATE TABLE t (\(ident: "id") \(keyType: .text) PRIMARY KEY)"
        /// ```
        public mutating func appendInterpolation(keyType: ColumnType) {
            fragments.append(.keyType(keyType))
        }

        /// In an upsert's update (``OnConflict``), the value the statement
        /// would have inserted into `column`: `excluded."c"` on SQLite and
        /// PostgreSQL, ``SQLDialect/insertedValue(column:)`` on another engine.
        ///
        /// ```swift
        /// OnConflict.update(["id"], set: [.init("count", "\(ident: "counters").\"count\" + \(inserted: "count")")])
        /// ```
        public mutating func appendInterpolation(inserted column: String) {
            fragments.append(.inserted(column))
        }

        /// Text pasted into the statement as it is.
        ///
        /// Caveat: this is the one way to inject SQL. Never give it user input.
        public mutating func appendInterpolation(unsafeRaw text: String) {
            appendLiteral(text)
        }
    }
}

extension SQL: CustomStringConvertible {
    /// The statement with `?` placeholders, for messages; values are not shown.
    public var description: String {
        fragments.map { fragment -> String in
            switch fragment {
            case .raw(let raw): raw
            case .value: "?"
            case .identifier(let name): "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            case .type(let type), .castType(let type), .keyType(let type): "<\(type)>"
            case .inserted(let column): "excluded.\"" + column.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            case .invalid: "<invalid value>"
            case .slot: "?"
            }
        }.joined()
    }
}

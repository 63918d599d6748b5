import Foundation

/// SQL being written: its text and, where values go, their places in the bind
/// order (``SQL`` slots), so a dialect may wrap, reorder or repeat an operand
/// and every engine still numbers its placeholders in the order of the text.
/// When only the bound values are wanted (the text is cached for the query's
/// shape) it holds nothing at all: appends are not even evaluated.
struct SQLBuffer {
    /// Text written since the last fragment, not yet one.
    private var pending = ""
    private var fragments: [SQL.Fragment] = []
    var isEnabled = true

    static func += (buffer: inout SQLBuffer, text: @autoclosure () -> String) {
        if buffer.isEnabled { buffer.pending += text() }
    }

    /// Appends SQL a dialect wrote around operands cut from this buffer.
    mutating func append(_ sql: @autoclosure () -> SQL) {
        guard isEnabled else { return }
        for fragment in sql().fragments {
            if case .raw(let raw) = fragment { pending += raw } else { close(); fragments.append(fragment) }
        }
    }

    /// The place of the value at `index` in the bind order.
    mutating func appendSlot(_ index: Int) {
        guard isEnabled else { return }
        close()
        fragments.append(.slot(index))
    }

    private mutating func close() {
        if !pending.isEmpty { fragments.append(.raw(pending)); pending = "" }
    }

    /// Where the SQL ends now, to cut what follows out again.
    mutating func mark() -> Int {
        close()
        return fragments.count
    }

    /// Removes and returns the SQL written since `mark`.
    mutating func cut(from mark: Int) -> SQL {
        guard isEnabled else { return SQL(fragments: []) }
        close()
        let piece = SQL(fragments: Array(fragments[mark...]))
        fragments.removeSubrange(mark...)
        return piece
    }

    /// The text written so far, when it holds no value's place (a SELECT's start).
    var plainText: String? {
        guard fragments.isEmpty else { return nil }
        return pending
    }

    /// The statement for `dialect`: placeholders numbered in the order of the
    /// text, and for each the index of its value in the bind order; nil when
    /// that is the bind order itself (each of the `valueCount` values once, in order).
    func statement(for dialect: some SQLDialect, valueCount: Int) throws -> (text: String, order: [Int]?) {
        var text = ""
        var order: [Int] = []
        var inBindOrder = true
        for fragment in fragments {
            if let plain = fragment.text(for: dialect) {
                text += plain
                continue
            }
            switch fragment {
            case .raw, .identifier, .type, .castType, .keyType: break
            case .slot(let index):
                if index != order.count { inBindOrder = false }
                order.append(index)
                text += dialect.placeholder(order.count)
            case .inserted, .value, .invalid:
                throw DatabaseError.misuse("\(dialect.engineName)'s query dialect wrote a bound value or an upsert's inserted value into a query; a dialect method writes its operands and constant SQL only")
            }
        }
        text += pending
        return (text, inBindOrder && order.count == valueCount ? nil : order)
    }
}

extension Array where Element == Value {
    /// The values in the order of a statement's placeholders (see ``SQLBuffer/statement(for:)``).
    func inTextOrder(_ order: [Int]?) -> [Value] {
        guard let order else { return self }
        return order.map { self[$0] }
    }
}

/// Renders a query's syntax tree into one engine's SQL and its bound values.
final class QueryRenderer {
    let dialect: any QueryDialect
    let keyStrategy: KeyStrategy
    let encoding: EncodingOptions
    var text = SQLBuffer()
    var values: [Value] = []
    /// Whether columns are written with their table's alias (`"t0"."id"`), as in a join.
    var qualifiesColumns = false
    /// The table of a query over one table, which an `exists` subquery names its columns by.
    var rootTable: String?
    /// The column names of a `@Columns` type, which a selection decoded into it names its outputs by.
    var mappedNames: ((any ColumnMapped.Type) -> [String])?
    /// Where a declared query's parameters go among the bound values: set
    /// (empty) only while a declared query renders; nil refuses parameters.
    var parameterSlots: [(value: Int, parameter: Int)]?
    /// Qualifiers other than the aliases `t0`, `t1`..., by source.
    var qualifiers: [Int: String] = [:]
    /// Columns read from a page found first (``pageAlias``), by the names it gives them.
    var pageColumns: [QueryNode.QueryColumn: String]?
    /// The name of a subquery that finds a page's rows first.
    static let pageAlias = "depot_page"
    /// Whether the node being rendered is a condition (a WHERE, ON, HAVING or
    /// FILTER, a CASE's WHEN), or an AND or OR part of one: only its truth
    /// counts there, so NULL means what false means (see ``renderConnective(_:isAnd:)``).
    var rendersCondition = false

    init(dialect: any QueryDialect, keyStrategy: KeyStrategy, encoding: EncodingOptions) {
        self.dialect = dialect
        self.keyStrategy = keyStrategy
        self.encoding = encoding
    }



    /// A bound value, encoded as its column was. The commonest types are
    /// recognised by their metatype, which costs less than the conformance
    /// lookup of the general path.
    static func encode<T: QueryValue>(_ value: T, _ options: EncodingOptions) throws -> Value {
        if T.self == BoundValue.self, let bound = value as? BoundValue { return bound.value }
        if T.self == Int.self, let int = value as? Int { return .integer(Int64(int)) }
        if T.self == String.self, let text = value as? String { return .text(text) }
        if T.self == Int64.self, let int = value as? Int64 { return .integer(int) }
        if T.self == Bool.self, let truth = value as? Bool { return .bool(truth) }
        if T.self == Date.self, let date = value as? Date { return try ValueEncoder.date(date, options: options, codingPath: []) }
        if T.self == UUID.self, let uuid = value as? UUID { return ValueEncoder.uuid(uuid, options: options) }
        return try ValueEncoder.encode(value, options: options, column: nil)
    }

    func bind(_ value: Value) {
        values.append(value)
        text.appendSlot(values.count - 1)
    }

    /// The statement rendered, for its engine: text with placeholders in text
    /// order, the values in that order.
    func statement() throws -> (text: String, values: [Value]) {
        let (text, order) = try self.text.statement(for: dialect, valueCount: values.count)
        return (text, values.inTextOrder(order))
    }

    func identifier(_ name: String) {
        text += dialect.quote(identifier: name)
    }

    func column(key: String) {
        identifier(keyStrategy.isDefault ? key : keyStrategy.columnName(for: key))
    }

    /// The column's name in the table, after the key strategy.
    func name(of column: QueryNode.QueryColumn) -> String {
        column.isColumnName || keyStrategy.isDefault ? column.key : keyStrategy.columnName(for: column.key)
    }

    /// The alias of the table at `source` in a join.
    static func alias(_ source: Int) -> String { "t\(source)" }

    func column(_ column: QueryNode.QueryColumn) {
        guard text.isEnabled else { return }
        if let alias = pageColumns?[column] {
            identifier(Self.pageAlias)
            text += "."
            identifier(alias)
            return
        }
        if qualifiesColumns { text += dialect.quote(identifier: qualifiers[column.source] ?? Self.alias(column.source)) + "." }
        identifier(name(of: column))
    }

    /// The SQL of a node, rendered on its own: for dialect methods that wrap an operand.
    func rendered(_ node: QueryNode) throws -> SQL {
        let mark = text.mark()
        try render(node)
        return text.cut(from: mark)
    }

    /// A text operand compared or ordered by code point, rendered apart.
    func renderedBinary(_ node: QueryNode, ordering: Bool) throws -> SQL {
        let mark = text.mark()
        try renderBinary(node, ordering: ordering)
        return text.cut(from: mark)
    }

    /// Renders a text operand compared or ordered by code point.
    func renderBinary(_ node: QueryNode, ordering: Bool) throws {
        guard node.type == .text else { return try render(node) }
        let piece = try rendered(node)
        // A computed text gets its collation spelled out even for equality: it
        // has no index to keep usable, and operands of two collations would leave
        // PostgreSQL unable to pick one.
        text.append(dialect.binaryCollated(piece, ordering: ordering || node.isComputed))
    }

    func render(_ node: QueryNode) throws {
        // Only an AND or OR of a condition is a condition itself (NOT tells NULL from false).
        let saved = rendersCondition
        if saved {
            switch node.kind {
            case .and, .or: break
            default: rendersCondition = false
            }
        }
        defer { rendersCondition = saved }
        switch node.kind {
        case .column(let reference):
            column(reference)
        case .value(let value):
            do {
                bind(try Self.encode(value, encoding))
            } catch let error as EncodingError {
                throw DatabaseError(encoding: error, table: nil)
            }
        case .constant(let truth):
            text += dialect.booleanLiteral(truth)
        case .parameter(let position):
            guard parameterSlots != nil else {
                throw DatabaseError.misuse("a declared query's parameter was used in another query: it has a value only in its own DeclaredQuery")
            }
            bind(.null)
            parameterSlots?.append((values.count - 1, position))
        case .compare(let lhs, let op, let rhs):
            // Beside a NULL the query alone decides, NULL without the other operand (and its
            // overflow) on every engine, as PostgreSQL folds it (as arithmetic does, below).
            if lhs.known == .null || rhs.known == .null {
                text += "CAST(NULL AS \(dialect.castTypeName(.bool)))"
                return
            }
            try guardingParameters(lhs, rhs) {
                text += "("
                try renderBinary(lhs, ordering: op.isOrdering)
                text += " \(op.rawValue) "
                try renderBinary(rhs, ordering: op.isOrdering)
                text += ")"
            }
        case .isNull(let operand, let negated):
            text += "("
            try render(operand)
            text += negated ? " IS NOT NULL)" : " IS NULL)"
        case .isNotDistinct(let lhs, let rhs, let negated):
            let left = try renderedBinary(lhs, ordering: false)
            let right = try renderedBinary(rhs, ordering: false)
            text.append("(" + dialect.isNotDistinct(left, right, negated: negated) + ")")
        case .inList(let operand, let list, let negated):
            guard !list.isEmpty else {
                text += dialect.booleanLiteral(negated)
                return
            }
            text += "("
            try renderBinary(operand, ordering: false)
            text += negated ? " NOT IN (" : " IN ("
            for (index, item) in list.enumerated() {
                if index > 0 { text += ", " }
                try render(item)
            }
            text += "))"
        case .and(let parts), .or(let parts):
            let isAnd: Bool
            if case .and = node.kind { isAnd = true } else { isAnd = false }
            guard !parts.isEmpty else {
                text += dialect.booleanLiteral(isAnd)
                return
            }
            // A false part of AND, or a true part of OR, that the query alone decides decides it
            // without computing the others (and their overflow), as PostgreSQL folds it.
            if case .truth(let truth)? = node.known {
                text += dialect.booleanLiteral(truth)
                return
            }
            try renderConnective(parts, isAnd: isAnd)
        case .not(let operand):
            text += "(NOT "
            try render(operand)
            text += ")"
        case .textMatch(let operand, let match, let needle, let caseInsensitive):
            try renderMatch(operand, match, needle: needle, caseInsensitive: caseInsensitive)
        case .length(let operand):
            let piece = try rendered(operand)
            text.append(dialect.characterLength(piece))
        case .folded(let operand):
            let piece = try rendered(operand)
            text.append(dialect.asciiLowercased(piece))
        case .aggregate(let aggregate, let operand, let filter):
            try renderAggregate(aggregate, operand, filter: filter, type: node.type)
        case .exists(let table, let filters, let negated):
            // Every column is qualified inside: the subquery's table is `t2`, and
            // the outer query's keep their aliases, or its table's name.
            let (qualified, saved) = (qualifiesColumns, qualifiers)
            if !qualifiesColumns, let rootTable { qualifiers[0] = rootTable }
            qualifiesColumns = true
            defer { (qualifiesColumns, qualifiers) = (qualified, saved) }
            text += negated ? "(NOT EXISTS (SELECT 1 FROM " : "(EXISTS (SELECT 1 FROM "
            identifier(table)
            text += " AS "
            identifier(Self.alias(QuerySource.correlated.index))
            try renderWhere(filters)
            text += "))"
        case .inSubquery(let operand, let subquery, let negated):
            text += "("
            try renderBinary(operand, ordering: false)
            text += negated ? " NOT IN " : " IN "
            try subquery.render(self)
            text += ")"
        case .arithmetic, .concatenate, .coalesce, .nullIf, .caseWhen, .substring, .json:
            try renderComputed(node)
        case .search(let key, let search):
            try renderSearch(key, search)
        }
    }

    /// The expressions that compute a value from others.
    private func renderComputed(_ node: QueryNode) throws {
        switch node.kind {
        case .arithmetic(let lhs, let op, let rhs):
            // Beside a NULL the query alone decides, NULL without the other
            // operand (and its overflow) on every engine, as PostgreSQL folds it.
            if lhs.known == .null || rhs.known == .null {
                text += "CAST(NULL AS \(dialect.castTypeName(.integer)))"
                return
            }
            try guardingParameters(lhs, rhs) {
                // Both rendered first: with the text cached, `+=` does not evaluate its operand.
                let left = try rendered(lhs), right = try rendered(rhs)
                text.append(dialect.integerArithmetic(op, left, right))
            }
        case .concatenate(let lhs, let rhs):
            let left = try rendered(lhs), right = try rendered(rhs)
            text.append(dialect.concatenate(left, right))
        case .coalesce(let operands):
            text += "COALESCE("
            for (index, operand) in operands.enumerated() {
                if index > 0 { text += ", " }
                try render(operand)
            }
            text += ")"
        case .nullIf(let lhs, let rhs):
            // Text compares by code point here too: under the column's own
            // collation, SQLite's NULLIF would find 'a' equal to 'A'.
            text += "NULLIF("
            try renderBinary(lhs, ordering: true)
            text += ", "
            try renderBinary(rhs, ordering: true)
            text += ")"
        case .caseWhen(let parts, let hasElse):
            text += "CASE"
            let pairs = hasElse ? parts.count - 1 : parts.count
            for index in stride(from: 0, to: pairs - 1, by: 2) {
                text += " WHEN "
                try renderCondition(parts[index])
                text += " THEN "
                try render(parts[index + 1])
            }
            if hasElse, let last = parts.last {
                text += " ELSE "
                try render(last)
            }
            text += " END"
        case .substring(let operand, let offset, let count):
            guard offset >= 0, count >= 0 else {
                throw DatabaseError.misuse("substring(from:count:) takes an offset and a count of at least 0 (\(offset), \(count))")
            }
            // 1-based on the engines. No text holds 2^31 code points on either
            // engine (both stop near 1 GB), so larger numbers mean the same
            // clamped to 32 bits, which PostgreSQL's substr takes.
            let start = Int64(Swift.min(offset, Int(Int32.max) - 1) + 1), length = Int64(Swift.min(count, Int(Int32.max)))
            text += "substr("
            try render(operand)
            text += ", CAST("
            bind(.integer(start))
            text += " AS INTEGER), CAST("
            bind(.integer(length))
            text += " AS INTEGER))"
        case .json(let document, let path, let kind):
            for component in path {
                switch component {
                case .key(let key) where key.contains("\"") || key.contains("\\"):
                    throw DatabaseError.misuse("a JSON path key cannot hold \" or \\ (\(key.debugDescription))")
                case .index(let index) where index < 0:
                    throw DatabaseError.misuse("a JSON path index cannot be negative (\(index))")
                default: break
                }
            }
            let rendered = try rendered(document)
            let placeholder = bindingPlaceholder(dialect.jsonPath(path))
            let scalar = dialect.jsonScalar(kind, in: rendered, at: placeholder)
            // Where an index would read a non-array as an array of one, each index reads only an array.
            let guards = !dialect.jsonIndexWrapsScalars ? [] : path.indices.compactMap { index -> SQL? in
                guard case .index = path[index] else { return nil }
                return dialect.jsonIsArray(rendered, at: bindingPlaceholder(dialect.jsonPath(Array(path[..<index]))))
            }
            text.append(guards.isEmpty ? scalar : "(CASE WHEN " + SQL.join(guards, separator: " AND ") + " THEN " + scalar + " END)")
        default:
            try render(node)
        }
    }

    private func renderMatch(_ operand: QueryNode, _ match: QueryNode.TextMatch, needle: String, caseInsensitive: Bool) throws {
        let subject = try rendered(operand)
        guard !needle.isEmpty else {
            // Every text contains the empty string; NULL stays unknown.
            text.append("(\(subject) = \(subject))")
            return
        }
        if caseInsensitive {
            var pattern = ""
            for scalar in needle.unicodeScalars {
                switch scalar {
                case "\\", "%", "_": pattern += "\\" + String(scalar)
                case "A"..."Z": pattern += String(Character(Unicode.Scalar(scalar.value + 32) ?? scalar))
                default: pattern.unicodeScalars.append(scalar)
                }
            }
            switch match {
            case .contains: pattern = "%" + pattern + "%"
            case .prefix: pattern += "%"
            case .suffix: pattern = "%" + pattern
            }
            let patternPlaceholder = bindingPlaceholder(.text(pattern))
            let escapePlaceholder = bindingPlaceholder(.text("\\"))
            text.append("(" + dialect.like(dialect.asciiLowercased(subject), pattern: patternPlaceholder, escape: escapePlaceholder) + ")")
            return
        }
        switch match {
        case .contains:
            let placeholder = bindingPlaceholder(.text(needle))
            text.append("(" + dialect.position(of: placeholder, in: subject) + " > 0)")
        case .prefix:
            let count = bindingPlaceholder(.integer(Int64(needle.unicodeScalars.count)))
            text.append("(" + dialect.binaryCollated("substr(\(subject), 1, CAST(\(count) AS INTEGER))", ordering: false) + " = ")
            bind(.text(needle))
            text += ")"
        case .suffix:
            let count = bindingPlaceholder(.integer(Int64(needle.unicodeScalars.count)))
            text.append("(" + dialect.binaryCollated(dialect.suffix(of: subject, count: "CAST(\(count) AS INTEGER)"), ordering: false) + " = ")
            bind(.text(needle))
            text += ")"
        }
    }

    /// Binds a value and returns its placeholder without writing it.
    func bindingPlaceholder(_ value: Value) -> SQL {
        values.append(value)
        return SQL(fragments: [.slot(values.count - 1)])
    }

    private func renderAggregate(_ aggregate: QueryNode.Aggregate, _ operand: QueryNode?, filter: QueryNode?, type: QueryType?) throws {
        var argument: SQL
        if let operand {
            if aggregate == .min || aggregate == .max, operand.type == .text {
                argument = dialect.binaryCollated(try rendered(operand), ordering: true)
            } else {
                argument = try rendered(operand)
            }
        } else {
            argument = "*"
        }
        var filter = filter
        if let condition = filter, !dialect.hasAggregateFilter {
            // The same meaning without FILTER: the rows it leaves out become NULLs, which aggregates skip.
            let mark = text.mark()
            try renderCondition(condition)
            let condition = text.cut(from: mark)
            argument = "CASE WHEN " + condition + " THEN " + (operand == nil ? "1" : argument) + " END"
            filter = nil
        }
        switch aggregate {
        case .count: text.append("count(\(argument))")
        case .min where operand?.type == .bool, .max where operand?.type == .bool: text.append(dialect.booleanExtreme(argument, max: aggregate == .max))
        case .min: text.append("min(\(argument))")
        case .max: text.append("max(\(argument))")
        case .sum: text.append(type == .integer ? dialect.integerSum(argument) : "sum(\(argument))")
        case .average: text.append(dialect.average(argument))
        }
        if let filter {
            text += " FILTER (WHERE "
            try renderCondition(filter)
            text += ")"
        }
    }
}

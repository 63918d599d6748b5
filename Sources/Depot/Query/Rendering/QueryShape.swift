/// A query's shape: its structure without its values. Queries of one shape
/// render the same SQL, so a connection renders each shape once and afterwards
/// only collects the values to bind.
///
/// The key finds a cached shape by the record type, a 64-bit hash of the
/// structure and the number of nodes; the cached ``RenderedShape`` then
/// compares its structure with the query's, node for node, so two shapes are
/// the same only when they are. Queries holding a subquery are not cached.
struct QueryShapeKey: Hashable {
    let type: ObjectIdentifier
    let hash: UInt64
    let nodes: Int

    /// The key of a record query, or nil when it cannot be cached.
    init?<T>(_ query: Query<T>, operation: UInt8) {
        var hasher = ShapeHasher()
        guard Self.feed(query, operation: operation, into: &hasher) else { return nil }
        type = ObjectIdentifier(T.self)
        hash = hasher.state
        nodes = hasher.nodes
    }

    /// Feeds a record query's whole structure to `sink`, in one order: the
    /// hash of the key, the words a rendered shape keeps and the comparison
    /// with them all come from this one projection. False when it holds a
    /// node that cannot be cached.
    static func feed<T, S: ShapeSink>(_ query: Query<T>, operation: UInt8, into sink: inout S) -> Bool {
        sink.word(UInt64(operation))
        sink.word(UInt64(query.filters.count))
        for filter in query.filters where !filter.feedShape(&sink) { return false }
        sink.word(UInt64(query.orderings.count))
        for ordering in query.orderings {
            guard ordering.node.feedShape(&sink) else { return false }
            sink.mix(ordering.descending, ordering.nulls == .first)
        }
        sink.mix(query.limitCount != nil, query.offsetCount != nil)
        return true
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}

/// The SQL rendered for one shape, with the shape it was rendered for: the
/// words of its projection (``QueryShapeKey/feed(_:operation:into:)``), which
/// say its structure exactly (a key's hash may collide; these words do not).
struct RenderedShape {
    let words: [UInt64]
    let operation: UInt8
    let sql: String
    /// The bind-order index of each placeholder's value, nil when in bind order
    /// (``SQLBuffer/statement(for:valueCount:)``).
    let order: [Int]?

    init?<T>(_ query: Query<T>, operation: UInt8, sql: String, order: [Int]?) {
        var recorder = ShapeRecorder()
        guard QueryShapeKey.feed(query, operation: operation, into: &recorder) else { return nil }
        words = recorder.words
        self.operation = operation
        self.sql = sql
        self.order = order
    }

    /// Whether `query` has exactly this shape (its values aside).
    func matches<T>(_ query: Query<T>) -> Bool {
        var matcher = ShapeMatcher(words)
        return QueryShapeKey.feed(query, operation: operation, into: &matcher) && matcher.matchedAll
    }
}

/// What a query's projection is fed to: one word at a time.
protocol ShapeSink {
    mutating func word(_ word: UInt64)
    /// Counts a node (the hasher keeps the count in the key).
    mutating func countNode()
}

extension ShapeSink {
    mutating func countNode() {}

    mutating func mix(_ a: Bool, _ b: Bool) {
        word((a ? 1 : 0) | (b ? 2 : 0))
    }

    /// A text's bytes, eight to a word, then its length: "ab" + "c" and "a" + "bc" differ.
    mutating func mix(_ text: String) {
        var chunk: UInt64 = 0
        var shift: UInt64 = 0
        for byte in text.utf8 {
            chunk |= UInt64(byte) << shift
            shift += 8
            if shift == 64 {
                word(chunk)
                (chunk, shift) = (0, 0)
            }
        }
        word(chunk)
        word(UInt64(text.utf8.count))
    }

    mutating func mix(_ number: UInt64) { word(number) }

    /// A node: its tag and its type.
    mutating func node(_ tag: UInt64, _ type: QueryType?) {
        countNode()
        word(tag << 8 | UInt64(type.map(ShapeHasher.code) ?? 0))
    }
}

/// Keeps the words, for a rendered shape.
struct ShapeRecorder: ShapeSink {
    var words: [UInt64] = []
    mutating func word(_ word: UInt64) { words.append(word) }
}

/// Compares the words with recorded ones, as they come.
struct ShapeMatcher: ShapeSink {
    private let expected: [UInt64]
    private var index = 0
    private var differs = false

    init(_ expected: [UInt64]) { self.expected = expected }

    mutating func word(_ word: UInt64) {
        guard !differs, index < expected.count, expected[index] == word else { differs = true; return }
        index += 1
    }

    /// Whether every word matched and none is left over.
    var matchedAll: Bool { !differs && index == expected.count }
}

/// A cheap, well-mixing hash of a query's structure, and a count of its nodes:
/// `Hasher`'s SipHash costs more than the rest of a cached lookup.
struct ShapeHasher: ShapeSink {
    private(set) var state: UInt64 = 0x243F_6A88_85A3_08D3
    private(set) var nodes = 0

    /// Mixes one word in; each step is a bijection of the state.
    @inline(__always)
    mutating func word(_ word: UInt64) {
        state = (state ^ word) &* 0x9E37_79B9_7F4A_7C15
        state ^= state >> 31
    }

    mutating func countNode() { nodes += 1 }

    static func code(_ type: QueryType) -> UInt8 {
        switch type {
        case .integer: 1
        case .double: 2
        case .text: 3
        case .bool: 4
        case .date: 5
        case .uuid: 6
        case .blob: 7
        case .decimal: 8
        }
    }
}

extension QueryNode {
    /// Feeds the node's structure (never its values) to `hasher`; false for a
    /// node whose SQL cannot be cached (a subquery).
    func feedShape<S: ShapeSink>(_ hasher: inout S) -> Bool {
        switch kind {
        case .column(let column):
            hasher.node(1, type)
            hasher.mix(UInt64(column.source) << 1 | (column.isColumnName ? 1 : 0))
            hasher.mix(column.key)
        case .value:
            hasher.node(2, type)
            // A NULL or a Boolean value is no value bound into the SQL: the renderer
            // folds the operators it decides (KnownValue), so it is part of the shape.
            switch known {
            case .null: hasher.mix(1)
            case .truth(let truth): hasher.mix(truth ? 2 : 3)
            case nil: hasher.mix(0)
            }
        case .constant(let truth):
            hasher.node(3, type)
            hasher.mix(truth, false)
        case .compare(let lhs, let op, let rhs):
            hasher.node(4, type)
            hasher.mix(op.shapeCode)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .isNull(let operand, let negated):
            hasher.node(5, type)
            hasher.mix(negated, false)
            return operand.feedShape(&hasher)
        case .isNotDistinct(let lhs, let rhs, let negated):
            hasher.node(6, type)
            hasher.mix(negated, false)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .inList(let operand, let list, let negated):
            hasher.node(7, type)
            hasher.mix(negated, false)
            hasher.mix(UInt64(list.count))
            return operand.feedShape(&hasher) && list.allSatisfy { $0.feedShape(&hasher) }
        case .and(let parts), .or(let parts):
            if case .and = kind { hasher.node(8, type) } else { hasher.node(9, type) }
            hasher.mix(UInt64(parts.count))
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .not(let operand):
            hasher.node(10, type)
            return operand.feedShape(&hasher)
        case .textMatch(let operand, let match, let needle, let caseInsensitive):
            // The needle is bound; only whether it is empty changes the SQL.
            hasher.node(11, type)
            hasher.mix(UInt64(match.shapeCode) << 2 | (needle.isEmpty ? 1 : 0) | (caseInsensitive ? 2 : 0))
            return operand.feedShape(&hasher)
        case .length(let operand):
            hasher.node(12, type)
            return operand.feedShape(&hasher)
        case .folded(let operand):
            hasher.node(13, type)
            return operand.feedShape(&hasher)
        case .aggregate(let aggregate, let operand, let filter):
            hasher.node(14, type)
            hasher.mix(UInt64(aggregate.shapeCode) << 2 | (operand != nil ? 1 : 0) | (filter != nil ? 2 : 0))
            return (operand?.feedShape(&hasher) ?? true) && (filter?.feedShape(&hasher) ?? true)
        case .inSubquery, .parameter, .search:
            // A parameter's value comes only through its declared query.
            return false
        case .exists(let table, let filters, let negated):
            hasher.node(15, type)
            hasher.mix(table)
            hasher.mix(negated, false)
            hasher.mix(UInt64(filters.count))
            return filters.allSatisfy { $0.feedShape(&hasher) }
        case .arithmetic(let lhs, let op, let rhs):
            hasher.node(16, type)
            hasher.mix(op.shapeCode)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .concatenate(let lhs, let rhs):
            hasher.node(17, type)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .coalesce(let parts):
            hasher.node(18, type)
            hasher.mix(UInt64(parts.count))
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .nullIf(let lhs, let rhs):
            hasher.node(19, type)
            return lhs.feedShape(&hasher) && rhs.feedShape(&hasher)
        case .caseWhen(let parts, let hasElse):
            hasher.node(20, type)
            hasher.mix(hasElse, false)
            hasher.mix(UInt64(parts.count))
            return parts.allSatisfy { $0.feedShape(&hasher) }
        case .substring(let operand, _, _):
            hasher.node(21, type)
            return operand.feedShape(&hasher)
        case .json(let operand, let path, let kind):
            // The path is bound, but where it indexes changes the SQL (an engine
            // that reads a scalar as an array of one guards each index).
            hasher.node(22, type)
            hasher.mix(kind == .text ? 1 : kind == .integer ? 2 : kind == .double ? 3 : 4)
            hasher.mix(UInt64(path.count))
            for component in path {
                if case .index = component { hasher.mix(1) } else { hasher.mix(0) }
            }
            return operand.feedShape(&hasher)
        }
        return true
    }
}

extension QueryNode.ComparisonOperator {
    var shapeCode: UInt64 {
        switch self {
        case .equal: 1
        case .notEqual: 2
        case .less: 3
        case .lessOrEqual: 4
        case .greater: 5
        case .greaterOrEqual: 6
        }
    }
}

extension ArithmeticOperator {
    var shapeCode: UInt64 {
        switch self {
        case .add: 1
        case .subtract: 2
        case .multiply: 3
        case .divide: 4
        case .remainder: 5
        }
    }
}

extension QueryNode.TextMatch {
    var shapeCode: UInt8 {
        switch self {
        case .contains: 1
        case .prefix: 2
        case .suffix: 3
        }
    }
}

extension QueryNode.Aggregate {
    var shapeCode: UInt8 {
        switch self {
        case .count: 1
        case .sum: 2
        case .min: 3
        case .max: 4
        case .average: 5
        }
    }
}

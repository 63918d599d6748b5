import Depot
import Foundation
import DepotTesting

/// Random computed expressions (integer arithmetic at the Int64 edges and with
/// zero and negative divisors, coalesce, NULLIF and CASE with NULLs, text joins
/// and substrings over accents and emoji) selected, filtered and ordered on
/// both engines and in the model: the same values in the same order, or an
/// `encoding` error on both when the model's arithmetic fails on a row.
extension QueryFuzz {
    /// A model value, or the failure (an overflow or a zero divisor) that fails the statement.
    enum Outcome<T: Equatable>: Equatable {
        case value(T?)
        case failure
    }

    struct IntExpression {
        let build: (FuzzRow.Columns) -> QueryExpression<Int?>
        let evaluate: (FuzzRow) -> Outcome<Int>
        let text: String
        /// NULL whatever the row (a CASE whose conditions are all false): an
        /// operator beside it is NULL without computing its other operand.
        var isKnownNull = false
    }

    struct TextExpression {
        let build: (FuzzRow.Columns) -> QueryExpression<String?>
        let evaluate: (FuzzRow) -> [UInt8]?
        let text: String
    }

    static let literals = [0, 1, -1, 2, -2, 3, Int.max, Int.min, Int.min + 1, Int.max - 1]

    static func arithmetic(_ x: Int, _ op: ArithmeticOperator, _ y: Int) -> Outcome<Int> {
        let (result, overflow): (Int, Bool)
        switch op {
        case .add: (result, overflow) = x.addingReportingOverflow(y)
        case .subtract: (result, overflow) = x.subtractingReportingOverflow(y)
        case .multiply: (result, overflow) = x.multipliedReportingOverflow(by: y)
        case .divide, .remainder:
            guard y != 0 else { return .failure }
            if y == -1 {
                if op == .remainder { return .value(0) }
                (result, overflow) = 0.subtractingReportingOverflow(x)
            } else {
                (result, overflow) = (op == .divide ? x / y : x % y, false)
            }
        }
        return overflow ? .failure : .value(result)
    }

    static func combine(_ x: Outcome<Int>, _ op: ArithmeticOperator, _ y: Outcome<Int>) -> Outcome<Int> {
        guard case .value(let a) = x, case .value(let b) = y else { return .failure }
        guard let a, let b else { return .value(nil) }
        return arithmetic(a, op, b)
    }

    static func apply(_ x: QueryExpression<Int?>, _ op: ArithmeticOperator, _ y: QueryExpression<Int?>) -> QueryExpression<Int?> {
        switch op {
        case .add: x + y
        case .subtract: x - y
        case .multiply: x * y
        case .divide: x / y
        case .remainder: x % y
        }
    }

    /// An integer expression that names a column; literals appear only beside
    /// one, so no engine can compute a failing part before it sees a row.
    static func intExpression(_ g: inout Generator, depth: Int = 0) -> IntExpression {
        if depth >= 3 || g.chance(3) {
            return g.chance(2)
                ? IntExpression(build: { $0.a }, evaluate: { .value($0.a) }, text: "a")
                : IntExpression(build: { $0.b }, evaluate: { .value($0.b) }, text: "b")
        }
        switch Int.random(in: 0..<7, using: &g) {
        case 0, 1, 2:
            let op = g.pick(ArithmeticOperator.allCases)
            let x = intExpression(&g, depth: depth + 1)
            if g.chance(2) {
                let y = intExpression(&g, depth: depth + 1)
                let isKnownNull = x.isKnownNull || y.isKnownNull
                return IntExpression(build: { apply(x.build($0), op, y.build($0)) },
                                     evaluate: { isKnownNull ? .value(nil) : combine(x.evaluate($0), op, y.evaluate($0)) },
                                     text: "(\(x.text) \(op.rawValue) \(y.text))", isKnownNull: isKnownNull)
            }
            let literal = g.pick(literals), literalFirst = g.chance(2)
            if literalFirst {
                return IntExpression(build: { apply(QueryExpression(literal), op, x.build($0)) },
                                     evaluate: { x.isKnownNull ? .value(nil) : combine(.value(literal), op, x.evaluate($0)) },
                                     text: "(\(literal) \(op.rawValue) \(x.text))", isKnownNull: x.isKnownNull)
            }
            return IntExpression(build: { apply(x.build($0), op, QueryExpression(literal)) },
                                 evaluate: { x.isKnownNull ? .value(nil) : combine(x.evaluate($0), op, .value(literal)) },
                                 text: "(\(x.text) \(op.rawValue) \(literal))", isKnownNull: x.isKnownNull)
        case 3:
            let x = intExpression(&g, depth: depth + 1), y = intExpression(&g, depth: depth + 1)
            return IntExpression(build: { x.build($0) ?? y.build($0) }, evaluate: { row in
                let first = x.evaluate(row)
                if case .value(nil) = first { return y.evaluate(row) }
                return first
            }, text: "coalesce(\(x.text), \(y.text))", isKnownNull: x.isKnownNull && y.isKnownNull)
        case 4:
            let x = intExpression(&g, depth: depth + 1)
            let literal: Int? = g.chance(4) ? nil : g.pick([0, 1, -1, 2, Int.max])
            return IntExpression(build: { x.build($0).nullIf(literal) }, evaluate: { row in
                guard case .value(let value) = x.evaluate(row) else { return .failure }
                // NULLIF(x, NULL) is x: nothing equals NULL.
                return .value(value == literal && literal != nil ? nil : value)
            }, text: "nullif(\(x.text), \(literal.map(String.init) ?? "NULL"))", isKnownNull: x.isKnownNull)
        default:
            let condition = predicate(&g, depth: 2)
            let x = intExpression(&g, depth: depth + 1), y = intExpression(&g, depth: depth + 1)
            let hasElse = !g.chance(4)
            return IntExpression(
                build: { hasElse ? Case.when(condition.build($0), then: x.build($0)).else(y.build($0)) : Case.when(condition.build($0), then: x.build($0)).end() },
                evaluate: { row in condition.evaluate(row) == true ? x.evaluate(row) : hasElse ? y.evaluate(row) : .value(nil) },
                text: "CASE WHEN \(condition.text) THEN \(x.text)\(hasElse ? " ELSE \(y.text)" : "") END",
                isKnownNull: condition.constant == true ? x.isKnownNull : condition.constant == false ? (hasElse ? y.isKnownNull : true) : false)
        }
    }

    static func codePoints(_ text: String, _ offset: Int, _ count: Int) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.dropFirst(offset).prefix(count)))
    }

    static func textExpression(_ g: inout Generator, depth: Int = 0) -> TextExpression {
        if depth >= 3 || g.chance(3) {
            return g.chance(2)
                ? TextExpression(build: { $0.t }, evaluate: { $0.t.map { Array($0.utf8) } }, text: "t")
                : TextExpression(build: { $0.u }, evaluate: { $0.u.map { Array($0.utf8) } }, text: "u")
        }
        switch Int.random(in: 0..<6, using: &g) {
        case 0:
            let x = textExpression(&g, depth: depth + 1), y = textExpression(&g, depth: depth + 1)
            return TextExpression(build: { x.build($0) + y.build($0) }, evaluate: { row in
                guard let a = x.evaluate(row), let b = y.evaluate(row) else { return nil }
                return a + b
            }, text: "(\(x.text) || \(y.text))")
        case 1:
            let x = textExpression(&g, depth: depth + 1), literal = g.pick(texts.compactMap { $0 })
            return TextExpression(build: { x.build($0) + literal }, evaluate: { x.evaluate($0).map { $0 + Array(literal.utf8) } },
                                  text: "(\(x.text) || \(literal.debugDescription))")
        case 2:
            let x = textExpression(&g, depth: depth + 1)
            let offset = Int.random(in: 0...4, using: &g), count = g.chance(6) ? Int.max : Int.random(in: 0...3, using: &g)
            return TextExpression(build: { x.build($0).substring(from: offset, count: count) }, evaluate: { row in
                x.evaluate(row).map { Array(codePoints(String(decoding: $0, as: UTF8.self), offset, count).utf8) }
            }, text: "substring(\(x.text), \(offset), \(count))")
        case 3:
            let x = textExpression(&g, depth: depth + 1), y = textExpression(&g, depth: depth + 1)
            return TextExpression(build: { x.build($0) ?? y.build($0) }, evaluate: { x.evaluate($0) ?? y.evaluate($0) },
                                  text: "coalesce(\(x.text), \(y.text))")
        case 4:
            let x = textExpression(&g, depth: depth + 1), literal = g.pick(texts.compactMap { $0 })
            return TextExpression(build: { x.build($0).nullIf(literal) }, evaluate: { row in
                x.evaluate(row).flatMap { $0 == Array(literal.utf8) ? nil : $0 }
            }, text: "nullif(\(x.text), \(literal.debugDescription))")
        default:
            let condition = predicate(&g, depth: 2)
            let x = textExpression(&g, depth: depth + 1), y = textExpression(&g, depth: depth + 1)
            return TextExpression(build: { Case.when(condition.build($0), then: x.build($0)).else(y.build($0)) },
                                  evaluate: { condition.evaluate($0) == true ? x.evaluate($0) : y.evaluate($0) },
                                  text: "CASE WHEN \(condition.text) THEN \(x.text) ELSE \(y.text) END")
        }
    }

    static func show(_ bytes: [UInt8]?) -> String {
        bytes.map { String(decoding: $0, as: UTF8.self).unicodeScalars.map { $0.isASCII ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined() } ?? "NULL"
    }

    static func randomComputedExpressions(_ run: DifferentialRun) async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEPOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        let count = (environment["DEPOT_FUZZ_QUERIES"].flatMap { Int($0) } ?? 2_000) / 2
        print("QueryFuzz (expressions): seed \(seed), \(count) queries (replay with DEPOT_FUZZ_SEED=\(seed))")
        var g = Generator(seed: seed)
        let (engines, rows, _) = try await Self.setUp(run, &g)
        defer { Task { await engines.close() } }
        var disagreements = 0
        for index in 0..<count {
            let number = Self.intExpression(&g), text = Self.textExpression(&g)
            // The filter is either a plain predicate (no arithmetic: the rows it
            // keeps are the rows computed), or a comparison of the number alone
            // (computed for every row).
            let filtersOnNumber = g.chance(3)
            let filter = Self.predicate(&g)
            // Now and then a NULL threshold: a comparison beside a NULL the query decides is NULL
            // without computing the number, so no row passes and none fails.
            let threshold: Int? = g.chance(8) ? nil : g.pick([-2, 0, 1, 3])
            // Now and then AND or OR with a Boolean the query decides: false AND, or true OR,
            // decides without computing the number; the other way, the comparison decides.
            let connective = filtersOnNumber ? g.pick([Connective.none, .none, .and, .or]) : .none
            let flag = g.chance(2)
            // Now and then the other side is the row's predicate instead (it cannot fail): a row it
            // decides (false or NULL AND, true OR) never computes the number, whichever order the engine prefers.
            let joinsRow = connective != .none && g.chance(2)
            let descending = g.chance(2), nullsFirst = g.chance(2)
            var query = filtersOnNumber ? FuzzRow.where {
                connective.apply(number.build($0) > QueryExpression<Int?>(threshold), joinsRow ? filter.build($0) : QueryExpression<Bool>(flag))
            }
                : FuzzRow.where(filter.build)
            // Now and then a page in id order instead: the number is computed for the page's rows alone,
            // however the engine finds them (by the key, skipping the offset, or sorting all).
            let page: (limit: Int, offset: Int)? = !filtersOnNumber && g.chance(3)
                ? (Int.random(in: 0...4, using: &g), Int.random(in: 0...rows.count, using: &g)) : nil
            if let page {
                query = query.order { $0.id }.limit(page.limit, offset: page.offset)
            } else {
                query = query.order { descending ? number.build($0).descending(nulls: nullsFirst ? .first : .last)
                    : number.build($0).ascending(nulls: nullsFirst ? .first : .last) }
            }
            let selection = query.select { ($0.id, number.build($0), text.build($0)) }
            // Now and then the filter is a declared query's instead, the threshold and the Boolean its
            // parameters (unknown when the query is rendered: the same meaning however the engine plans
            // the run), in the order of the rows' ids: only the filter computes the number there.
            let declared = filtersOnNumber && !joinsRow && g.chance(2) ? DeclaredQuery { (bound: QueryExpression<Int?>, flagged: QueryExpression<Bool>) in
                FuzzRow.where { connective.apply(number.build($0) > bound, flagged) }
            } : nil

            // The model.
            let expected: [String]
            let computed = rows.map { (row: $0, number: number.evaluate($0)) }
            let keepsAll = !joinsRow && connective == .or && flag, keepsNone = !joinsRow && connective == .and && !flag
            if let page {
                let kept = computed.filter { filter.evaluate($0.row) == true }.sorted { $0.row.id < $1.row.id }
                let shown = kept.dropFirst(page.offset).prefix(page.limit)
                expected = shown.contains(where: { $0.number == .failure }) ? ["error: encoding"]
                    : shown.map { "\($0.row.id) \(Self.key($0.number).map(String.init) ?? "NULL") \(Self.show(text.evaluate($0.row)))" }
            } else if joinsRow {
                // Row by row: the predicate decides, or the comparison computes the number (and fails).
                var kept: [(row: FuzzRow, number: Outcome<Int>)] = [], failed = false
                for (row, value) in computed {
                    let side = filter.evaluate(row)
                    let result: Bool?
                    // A WHERE is a condition: a NULL side leaves the row out as false does, without the number.
                    if connective == .and ? side != true : side == true {
                        result = connective == .or
                    } else {
                        let comparison: Bool?
                        if let threshold {
                            guard case .value(let v) = value else { failed = true; break }
                            comparison = v.map { $0 > threshold }
                        } else {
                            comparison = nil
                        }
                        result = connective == .and ? Self.and(side, comparison) : Self.or(side, comparison)
                    }
                    if result == true { kept.append((row, value)) }
                }
                // The rows kept compute their number for the selection and the order.
                expected = failed || kept.contains(where: { $0.number == .failure }) ? ["error: encoding"]
                    : Self.ordered(kept, descending: descending, nullsFirst: nullsFirst, text: text)
            } else if keepsNone || filtersOnNumber && threshold == nil && !keepsAll {
                expected = []
            } else if filtersOnNumber, computed.contains(where: { $0.number == .failure }) {
                // Every row's number is computed: by the filter, or by the order of the rows it keeps.
                expected = ["error: encoding"]
            } else {
                let kept = computed.filter { row, value in
                    if keepsAll { return true }
                    if filtersOnNumber { if case .value(let v?) = value, let threshold { return v > threshold } else { return false } }
                    return filter.evaluate(row) == true
                }
                expected = kept.contains(where: { $0.number == .failure }) ? ["error: encoding"]
                    : Self.ordered(kept, descending: descending, nullsFirst: nullsFirst, text: text)
            }
            let described = "query \(index): SELECT id, \(number.text), \(text.text) WHERE "
                + (filtersOnNumber ? "\(number.text) > \(threshold.map(String.init) ?? "NULL")\(joinsRow ? connective.text(filter.text) : connective.text("\(flag)"))" : filter.text) + (page.map { " ORDER BY id LIMIT \($0.limit) OFFSET \($0.offset)" }
                    ?? " ORDER BY \(number.text) \(descending ? "DESC" : "ASC") NULLS \(nullsFirst ? "FIRST" : "LAST"), id")
            for (name, store) in engines.both {
                let got: [String]
                do {
                    got = try await store.read { db in
                        try db.fetchAll(selection).map { "\($0.0) \($0.1.map(String.init) ?? "NULL") \(Self.show($0.2.map { Array($0.utf8) }))" }
                    }
                } catch let error as DatabaseError {
                    got = ["error: \(error.kind)"]
                }
                if got != expected {
                    disagreements += 1
                    run.record("seed \(seed), \(described): \(name) gave \(got), the model \(expected)")
                }
                guard let declared else { continue }
                // The rows' ids, in order (or the error), through the declared query, run three
                // times: PostgreSQL may plan a later run for any value.
                let ids: [String]
                if keepsAll {
                    ids = rows.map(\.id).sorted().map { "\($0)" }
                } else if keepsNone || threshold == nil {
                    ids = []
                } else if computed.contains(where: { $0.number == .failure }) {
                    ids = ["error: encoding"]
                } else {
                    ids = computed.filter { if case .value(let v?) = $0.number, let threshold { v > threshold } else { false } }
                        .map(\.row.id).sorted().map { "\($0)" }
                }
                for attempt in 1...3 {
                    let gotIDs: [String]
                    do {
                        gotIDs = try await store.read { db in try db.fetchAll(declared, threshold, flag).map { "\($0.id)" } }
                    } catch let error as DatabaseError {
                        gotIDs = ["error: \(error.kind)"]
                    }
                    if gotIDs != ids {
                        disagreements += 1
                        run.record("seed \(seed), \(described), through a declared query (the threshold and the Boolean its parameters, the rows in id order), run \(attempt): \(name) gave \(gotIDs), the model \(ids)")
                    }
                }
            }
            if disagreements > 5 { break }
        }
        run.expect(disagreements == 0, "\(disagreements) disagreements")
    }
}

extension QueryFuzz {
    /// How a fuzzed comparison is joined to a Boolean the query decides.
    enum Connective: Sendable {
        case none, and, or

        func apply(_ comparison: QueryExpression<Bool>, _ flag: QueryExpression<Bool>) -> QueryExpression<Bool> {
            switch self {
            case .none: comparison
            case .and: comparison && flag
            case .or: comparison || flag
            }
        }

        func text(_ other: String) -> String {
            switch self {
            case .none: ""
            case .and: " AND \(other)"
            case .or: " OR \(other)"
            }
        }
    }

    /// The model's rows as the query selects them (id, number, text), in its order: the number's, NULLs
    /// where asked, then the id.
    static func ordered(_ kept: [(row: FuzzRow, number: Outcome<Int>)], descending: Bool, nullsFirst: Bool, text: TextExpression) -> [String] {
        let sorted = kept.sorted { x, y in
            switch (key(x.number), key(y.number)) {
            case (nil, nil): return x.row.id < y.row.id
            case (nil, _): return nullsFirst
            case (_, nil): return !nullsFirst
            case (let a?, let b?): return a == b ? x.row.id < y.row.id : descending ? a > b : a < b
            }
        }
        return sorted.map { "\($0.row.id) \(key($0.number).map(String.init) ?? "NULL") \(show(text.evaluate($0.row)))" }
    }

    /// A computed number's value, nil for NULL or a failure.
    static func key(_ outcome: Outcome<Int>) -> Int? { if case .value(let v) = outcome { v } else { nil } }

    /// SQL's three-valued AND and OR.
    static func and(_ a: Bool?, _ b: Bool?) -> Bool? { a == false || b == false ? false : a == true && b == true ? true : nil }
    static func or(_ a: Bool?, _ b: Bool?) -> Bool? { a == true || b == true ? true : a == false && b == false ? false : nil }
}

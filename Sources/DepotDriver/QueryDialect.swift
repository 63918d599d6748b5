/// How one engine spells each meaning of the query builder, so that a query
/// returns the same rows in the same order on every engine.
///
/// A backend that implements it runs ``Query``s; each method receives its
/// operands as ``SQL`` (their text and the places of their bound values) and
/// returns ``SQL`` with exactly the meaning its documentation states, or the
/// builder would give two engines two answers. Write the result by
/// interpolating the operands, `"lower(\(text))"`, or joining them with `+`:
/// an operand may appear twice or in any order, since each engine numbers its
/// placeholders in the order the text holds them.
///
/// Caveat: a method writes its operands and constant SQL only. It binds no
/// value of its own, and interpolates no `String` (which would bind it):
/// use `\(unsafeRaw:)` for constant text such as a type name.
/// The conformance suite's `query` area holds every dialect to those meanings.
public protocol QueryDialect: SQLDialect {
    /// `text` compared or ordered by Unicode code point, whatever the column's
    /// or database's collation. `ordering` is false for `=`, `<>` and `IN`,
    /// where an engine whose default collations all compare bytes for equality
    /// may leave the collation out and keep its indexes usable.
    func binaryCollated(_ text: SQL, ordering: Bool) -> SQL
    /// `text` with A–Z lowered and every other character unchanged.
    func asciiLowercased(_ text: SQL) -> SQL
    /// The 1-based position of the first occurrence of `needle` in `text`
    /// (compared by code point), 0 when there is none; 1 when `needle` is empty.
    func position(of needle: SQL, in text: SQL) -> SQL
    /// The last `count` code points of `text`; all of it when it is shorter.
    /// `count` is at least 1.
    func suffix(of text: SQL, count: SQL) -> SQL
    /// Skips `offset` rows with no limit on how many follow.
    func offsetWithoutLimit(_ offset: SQL) -> SQL
    /// The sum of integer values as a 64-bit integer: NULL when there are no
    /// values, an error (never a wrap or a rounded float) when it overflows.
    func integerSum(_ expression: SQL) -> SQL
    /// The mean of numeric values as a double: the values summed as doubles, then
    /// divided once by their count; NULL when there are no values.
    func average(_ expression: SQL) -> SQL
    /// `lhs op rhs` on 64-bit integers, with one meaning on every engine: NULL
    /// when either side is NULL; an overflow, and a zero divisor, is an error
    /// of kind `encoding` (never a wrap, a float or a NULL); division truncates
    /// toward zero, a remainder has the dividend's sign, and `Int64.min % -1` is 0.
    func integerArithmetic(_ op: ArithmeticOperator, _ lhs: SQL, _ rhs: SQL) -> SQL
    /// The value bound for a JSON path (keys without `"` or `\`, indexes of
    /// at least 0), as ``jsonScalar(_:in:at:)`` takes it. The default is the
    /// SQL/JSON path text, `$."key"[0]` (SQLite and MariaDB read it).
    func jsonPath(_ path: [JSONPathComponent]) -> Value
    /// The scalar of `kind` at the bound `path` in the JSON `document`, NULL
    /// when the path is missing, the value is JSON null or of another kind: no
    /// conversion (the string "3" is no integer); an integer is a number written
    /// without fraction or exponent within 64 bits.
    func jsonScalar(_ kind: JSONScalarKind, in document: SQL, at path: SQL) -> SQL
    /// The smallest (`max` false: true only when every value is) or largest
    /// (`max` true: true when any value is) of Boolean values: NULL when there are none.
    func booleanExtreme(_ expression: SQL, max: Bool) -> SQL

    // Standard SQL that not every engine spells the standard way. Each has a
    // default that writes the standard form (right for SQLite and PostgreSQL);
    // an engine without it writes another with the same meaning.

    /// A Boolean constant. The default: `TRUE`, `FALSE`.
    func booleanLiteral(_ value: Bool) -> String
    /// Whether `lhs` and `rhs` are equal, a NULL equal to a NULL (never unknown);
    /// `negated`: not so. The default: `lhs IS [NOT] DISTINCT FROM rhs`.
    func isNotDistinct(_ lhs: SQL, _ rhs: SQL, negated: Bool) -> SQL
    /// Whether `subject` matches the LIKE `pattern`, in which `escape` (one
    /// character) makes the next `%`, `_` or itself literal; matched case-sensitively
    /// for A–Z (the builder lowers both sides where it folds case). The default:
    /// `subject LIKE pattern ESCAPE escape`.
    func like(_ subject: SQL, pattern: SQL, escape: SQL) -> SQL
    /// `lhs` and `rhs` joined into one text; NULL when either is NULL. The
    /// default: `(lhs || rhs)`.
    func concatenate(_ lhs: SQL, _ rhs: SQL) -> SQL
    /// The number of code points in `text`; NULL when it is NULL. The default:
    /// `length(text)`, which counts characters on SQLite and PostgreSQL (an
    /// engine whose `length` counts bytes writes another function).
    func characterLength(_ text: SQL) -> SQL
    /// Whether an aggregate may take `FILTER (WHERE …)`. The default is true;
    /// where it is false, the builder gives the aggregate `CASE WHEN condition
    /// THEN argument END` (`1` for `*`), which means the same, since aggregates
    /// leave NULLs out.
    var hasAggregateFilter: Bool { get }
    /// Whether a subquery with LIMIT or OFFSET inside `IN (…)` must be wrapped
    /// in a derived table: `IN (SELECT * FROM (SELECT … LIMIT ?) AS "depot_page")`
    /// (MariaDB and MySQL refuse LIMIT directly in an `IN` subquery). The
    /// default is false: the subquery is written as it is.
    var wrapsPagedSubqueries: Bool { get }
    /// An ORDER BY term: `expression` ascending or descending, its NULLs first
    /// or last whatever the direction. The default: `expression ASC|DESC NULLS FIRST|LAST`.
    func ordering(_ expression: SQL, descending: Bool, nullsFirst: Bool) -> SQL
    /// The key of an index on a text `column` that orders by code point, as
    /// the search index's token index needs for prefix queries. The default:
    /// ``binaryCollated(_:ordering:)`` of the column (an expression index); an
    /// engine without expression indexes whose key text type already collates
    /// by code point (MariaDB) names the column alone.
    func binaryCollatedIndexKey(_ column: SQL) -> SQL
    /// Whether an index in a JSON path reads a value that is no array as an
    /// array of one (MariaDB: `$.a[0]` of `{"a": 7}` is 7). The default is
    /// false; where true, the builder reads at a path with indexes only when
    /// ``jsonIsArray(_:at:)`` holds for the path before each index.
    var jsonIndexWrapsScalars: Bool { get }
    /// A condition: the value of `document` at the bound `path` (as
    /// ``jsonPath(_:)`` gives it) is a JSON array. Called only when
    /// ``jsonIndexWrapsScalars`` is true; the default is `FALSE`.
    func jsonIsArray(_ document: SQL, at path: SQL) -> SQL
}

extension QueryDialect {
    /// `$."key"[0]`: the SQL/JSON path text.
    public func jsonPath(_ path: [JSONPathComponent]) -> Value {
        var text = "$"
        for component in path {
            switch component {
            case .key(let key): text += ".\"" + key + "\""
            case .index(let index): text += "[\(index)]"
            }
        }
        return .text(text)
    }

    /// `TRUE`, `FALSE`.
    public func booleanLiteral(_ value: Bool) -> String { value ? "TRUE" : "FALSE" }

    /// `lhs IS [NOT] DISTINCT FROM rhs`.
    public func isNotDistinct(_ lhs: SQL, _ rhs: SQL, negated: Bool) -> SQL {
        lhs + (negated ? " IS DISTINCT FROM " : " IS NOT DISTINCT FROM ") + rhs
    }

    /// `subject LIKE pattern ESCAPE escape`.
    public func like(_ subject: SQL, pattern: SQL, escape: SQL) -> SQL {
        subject + " LIKE " + pattern + " ESCAPE " + escape
    }

    /// `(lhs || rhs)`.
    public func concatenate(_ lhs: SQL, _ rhs: SQL) -> SQL { "(" + lhs + " || " + rhs + ")" }

    /// `length(text)`.
    public func characterLength(_ text: SQL) -> SQL { "length(" + text + ")" }

    /// True: `FILTER (WHERE …)`.
    public var hasAggregateFilter: Bool { true }

    /// False: a paged subquery is written as it is.
    public var wrapsPagedSubqueries: Bool { false }

    /// False: an index reads only arrays.
    public var jsonIndexWrapsScalars: Bool { false }

    /// `FALSE`: not called while ``jsonIndexWrapsScalars`` is false.
    public func jsonIsArray(_ document: SQL, at path: SQL) -> SQL { SQL(unsafeRaw: booleanLiteral(false)) }

    /// The column, collated by code point.
    public func binaryCollatedIndexKey(_ column: SQL) -> SQL { binaryCollated(column, ordering: true) }

    /// `expression ASC|DESC NULLS FIRST|LAST`.
    public func ordering(_ expression: SQL, descending: Bool, nullsFirst: Bool) -> SQL {
        expression + (descending ? " DESC" : " ASC") + (nullsFirst ? " NULLS FIRST" : " NULLS LAST")
    }
}

/// An operator of the query builder's integer arithmetic; see
/// ``QueryDialect/integerArithmetic(_:_:_:)``.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    /// `+`
    case add = "+"
    /// `-`
    case subtract = "-"
    /// `*`
    case multiply = "*"
    /// `/`, truncating toward zero.
    case divide = "/"
    /// `%`, with the dividend's sign.
    case remainder = "%"
}

/// The integer types and their optionals: the arithmetic operators.
///
/// Arithmetic runs on 64-bit integers on every engine, whatever the Swift type;
/// the result must fit the Swift type when it is read (a `UInt8` sum of 300 is
/// a decoding error).
public protocol QueryInteger: QueryNumeric {}

extension Int: QueryInteger {}
extension Int64: QueryInteger {}
extension Int32: QueryInteger {}
extension Int16: QueryInteger {}
extension Int8: QueryInteger {}
extension UInt32: QueryInteger {}
extension UInt16: QueryInteger {}
extension UInt8: QueryInteger {}
extension Optional: QueryInteger where Wrapped: QueryInteger {}

/// Integer arithmetic with one meaning on every engine.
///
/// ```swift
/// Reminder.where { $0.priority * 10 + $0.position > 25 }
/// ```
///
/// - NULL on either side gives NULL. Beside a NULL that the query alone
///   decides (a `nil` value, a `Case` whose conditions are all false, an empty
///   `in` list's condition) the other side is not computed, so its overflow is
///   no error, on every engine (PostgreSQL's planner folds such operators).
/// - An overflow of 64 bits is an error of kind `encoding`, never a wrapped
///   number or a float (SQLite's own `+` would give a float).
/// - Division truncates toward zero (`-7 / 2` is `-3`) and a remainder has the
///   dividend's sign (`-7 % 2` is `-1`), as in Swift; dividing by zero is an
///   error of kind `encoding` (SQLite's own `/` would give NULL); `Int64.min % -1` is 0.
///
/// Caveat: an error on any row fails the whole statement, and which rows an
/// engine computes a filter's expression for is its own choice (it may test
/// another condition first): keep an expression that can fail on some rows out
/// of a filter that relies on another condition to exclude them.
extension QueryExpression where Value: QueryInteger {
    /// The sum.
    public static func + (lhs: Self, rhs: Self) -> Self { arithmetic(lhs.node, .add, rhs.node) }
    /// The sum.
    public static func + (lhs: Self, rhs: Value) -> Self { arithmetic(lhs.node, .add, .value(rhs)) }
    /// The sum.
    public static func + (lhs: Value, rhs: Self) -> Self { arithmetic(.value(lhs), .add, rhs.node) }
    /// The difference.
    public static func - (lhs: Self, rhs: Self) -> Self { arithmetic(lhs.node, .subtract, rhs.node) }
    /// The difference.
    public static func - (lhs: Self, rhs: Value) -> Self { arithmetic(lhs.node, .subtract, .value(rhs)) }
    /// The difference.
    public static func - (lhs: Value, rhs: Self) -> Self { arithmetic(.value(lhs), .subtract, rhs.node) }
    /// The product.
    public static func * (lhs: Self, rhs: Self) -> Self { arithmetic(lhs.node, .multiply, rhs.node) }
    /// The product.
    public static func * (lhs: Self, rhs: Value) -> Self { arithmetic(lhs.node, .multiply, .value(rhs)) }
    /// The product.
    public static func * (lhs: Value, rhs: Self) -> Self { arithmetic(.value(lhs), .multiply, rhs.node) }
    /// The quotient, truncated toward zero; dividing by zero is an error.
    public static func / (lhs: Self, rhs: Self) -> Self { arithmetic(lhs.node, .divide, rhs.node) }
    /// The quotient, truncated toward zero; dividing by zero is an error.
    public static func / (lhs: Self, rhs: Value) -> Self { arithmetic(lhs.node, .divide, .value(rhs)) }
    /// The quotient, truncated toward zero; dividing by zero is an error.
    public static func / (lhs: Value, rhs: Self) -> Self { arithmetic(.value(lhs), .divide, rhs.node) }
    /// The remainder, with the dividend's sign; a zero divisor is an error.
    public static func % (lhs: Self, rhs: Self) -> Self { arithmetic(lhs.node, .remainder, rhs.node) }
    /// The remainder, with the dividend's sign; a zero divisor is an error.
    public static func % (lhs: Self, rhs: Value) -> Self { arithmetic(lhs.node, .remainder, .value(rhs)) }
    /// The remainder, with the dividend's sign; a zero divisor is an error.
    public static func % (lhs: Value, rhs: Self) -> Self { arithmetic(.value(lhs), .remainder, rhs.node) }

    /// The negation (`0 - x`): an error for `Int64.min`.
    public static prefix func - (operand: Self) -> Self {
        arithmetic(QueryNode(.value(Int64(0)), type: .integer), .subtract, operand.node)
    }

    static func arithmetic(_ lhs: QueryNode, _ op: ArithmeticOperator, _ rhs: QueryNode) -> Self {
        Self(.arithmetic(lhs, op, rhs), type: .integer)
    }
}

extension QueryExpression where Value: QueryOptional, Value.Wrapped: QueryInteger {
    /// The sum of an optional and a non-optional integer: NULL when the optional is.
    public static func + (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> Self { mixed(lhs.node, .add, rhs.node) }
    /// The sum of a non-optional and an optional integer.
    public static func + (lhs: QueryExpression<Value.Wrapped>, rhs: Self) -> Self { mixed(lhs.node, .add, rhs.node) }
    /// The difference of an optional and a non-optional integer.
    public static func - (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> Self { mixed(lhs.node, .subtract, rhs.node) }
    /// The difference of a non-optional and an optional integer.
    public static func - (lhs: QueryExpression<Value.Wrapped>, rhs: Self) -> Self { mixed(lhs.node, .subtract, rhs.node) }
    /// The product of an optional and a non-optional integer.
    public static func * (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> Self { mixed(lhs.node, .multiply, rhs.node) }
    /// The product of a non-optional and an optional integer.
    public static func * (lhs: QueryExpression<Value.Wrapped>, rhs: Self) -> Self { mixed(lhs.node, .multiply, rhs.node) }
    /// The quotient of an optional and a non-optional integer.
    public static func / (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> Self { mixed(lhs.node, .divide, rhs.node) }
    /// The quotient of a non-optional and an optional integer.
    public static func / (lhs: QueryExpression<Value.Wrapped>, rhs: Self) -> Self { mixed(lhs.node, .divide, rhs.node) }
    /// The remainder of an optional and a non-optional integer.
    public static func % (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> Self { mixed(lhs.node, .remainder, rhs.node) }
    /// The remainder of a non-optional and an optional integer.
    public static func % (lhs: QueryExpression<Value.Wrapped>, rhs: Self) -> Self { mixed(lhs.node, .remainder, rhs.node) }

    private static func mixed(_ lhs: QueryNode, _ op: ArithmeticOperator, _ rhs: QueryNode) -> Self {
        Self(.arithmetic(lhs, op, rhs), type: .integer)
    }
}

// MARK: Text

extension QueryExpression where Value: QueryText {
    /// The two texts joined; NULL when either is NULL.
    ///
    /// ```swift
    /// RemindersList.all.select { $0.title + " (" + $0.color + ")" }
    /// ```
    public static func + (lhs: Self, rhs: Self) -> Self { Self(.concatenate(lhs.node, rhs.node), type: .text) }
    /// The text with `rhs` after it.
    public static func + (lhs: Self, rhs: Value) -> Self { Self(.concatenate(lhs.node, .value(rhs)), type: .text) }
    /// `lhs` with the text after it.
    public static func + (lhs: Value, rhs: Self) -> Self { Self(.concatenate(.value(lhs), rhs.node), type: .text) }

    /// `count` code points of the text from the 0-based code point `offset`;
    /// fewer when the text ends first, and empty past its end.
    ///
    /// Code points, not bytes and not Swift's `Character`s: `e` followed by a
    /// combining accent is two.
    ///
    /// - Throws: nothing here; a negative offset or count is a `misuse` error when the query runs.
    public func substring(from offset: Int, count: Int) -> QueryExpression<Value> {
        QueryExpression(.substring(node, offset: offset, count: count), type: .text)
    }
}

extension QueryExpression where Value: QueryOptional, Value.Wrapped: QueryText {
    /// An optional text and a text joined; NULL when the optional is.
    public static func + (lhs: Self, rhs: QueryExpression<Value.Wrapped>) -> Self { Self(.concatenate(lhs.node, rhs.node), type: .text) }
    /// A text and an optional text joined; NULL when the optional is.
    public static func + (lhs: QueryExpression<Value.Wrapped>, rhs: Self) -> Self { Self(.concatenate(lhs.node, rhs.node), type: .text) }
}

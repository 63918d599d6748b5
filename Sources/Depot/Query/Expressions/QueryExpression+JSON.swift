import Foundation

/// A Swift type a JSON path reads into: `String`, `Int`, `Int64`, `Double`, `Bool`.
public protocol QueryJSONScalar: QueryValue {
    /// The JSON kind this type reads.
    static var jsonKind: JSONScalarKind { get }
}

extension String: QueryJSONScalar { public static var jsonKind: JSONScalarKind { .text } }
extension Int: QueryJSONScalar { public static var jsonKind: JSONScalarKind { .integer } }
extension Int64: QueryJSONScalar { public static var jsonKind: JSONScalarKind { .integer } }
extension Double: QueryJSONScalar { public static var jsonKind: JSONScalarKind { .double } }
extension Bool: QueryJSONScalar { public static var jsonKind: JSONScalarKind { .bool } }

extension QueryExpression {
    /// The scalar at `path` in this JSON column (a nested `Codable` property,
    /// or text that holds JSON), read as `type`; NULL when the path is missing,
    /// the value is JSON `null`, or it is another kind of value.
    ///
    /// ```swift
    /// Plant.where { $0.care.json("waterEveryDays", as: Int.self) <= 3 }
    /// Order.all.select { $0.payload.json("lines", 0, "sku", as: String.self) }
    /// ```
    ///
    /// One meaning on every engine, whatever each engine's JSON functions do:
    /// - a value is never converted: the string `"3"` is no `Int`, the number
    ///   `3` no `String`, and `3.5` no `Int` (each reads as NULL);
    /// - an `Int` is a whole number written without a fraction or exponent
    ///   within 64 bits (`3.0` and `1e2` read as NULL), a `Double` any number;
    /// - a missing key, an index past the end and JSON `null` all read as NULL.
    ///
    /// - Throws: nothing here; a key holding `"` or `\`, or a negative index,
    ///   is a `misuse` error when the query runs.
    public func json<V: QueryJSONScalar>(_ path: JSONPathComponent..., as type: V.Type) -> QueryExpression<V?> {
        json(path, as: type)
    }

    /// The scalar at `path`, a path built at run time, with the rules of the variadic `json(_:as:)`.
    public func json<V: QueryJSONScalar>(_ path: [JSONPathComponent], as type: V.Type) -> QueryExpression<V?> {
        QueryExpression<V?>(.json(node, path, V.jsonKind), type: V.queryType)
    }
}

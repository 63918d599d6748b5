import Foundation

/// Where a value being decoded came from, for error messages. Cheap to make:
/// the column name and coding path are only built when an error needs them.
struct ColumnContext {
    /// The plan that holds the column set outlives every context made from it.
    unowned(unsafe) let columns: ColumnSet?
    let index: Int?
    let parentPath: [any CodingKey]
    /// The coding key's name, kept as a string so no existential is boxed per value.
    let keyName: String?

    init(columns: ColumnSet? = nil, index: Int? = nil, parentPath: [any CodingKey] = [], keyName: String? = nil) {
        self.columns = columns
        self.index = index
        self.parentPath = parentPath
        self.keyName = keyName
    }

    var column: String? {
        guard let columns, let index, index < columns.count else { return nil }
        return columns.names[index]
    }

    var codingPath: [any CodingKey] {
        guard let keyName else { return parentPath }
        return parentPath + [NamedKey(stringValue: keyName)]
    }

    var prefix: String {
        guard let column else { return "" }
        if let index { return "column \"\(column)\" (index \(index)): " }
        return "column \"\(column)\": "
    }
}

/// A coding key rebuilt from its name, for error paths.
struct NamedKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// The column details of a decoding failure, carried as a `DecodingError`'s
/// underlying error so a store can report them in its ``DatabaseError``.
struct ColumnFailure: Error, Sendable {
    var column: String?
    var index: Int?
    var message: String
}

/// Thrown by a column's decoder when the type asks for a container: the column holds JSON.
struct NeedsJSON: Error {}

/// How values read from a column become Swift values. Strict by design:
/// NULL never becomes a default, integers never wrap, nothing is rounded away.
enum ValueDecoding {
    static func failure(_ ctx: ColumnContext, _ message: String) -> ColumnFailure {
        ColumnFailure(column: ctx.column, index: ctx.index, message: message)
    }

    static func mismatch(_ type: Any.Type, _ value: Value, _ ctx: ColumnContext, _ hint: String = "") -> DecodingError {
        if case .null = value { return null(type, ctx) }
        let message = "cannot decode \(type) from \(value)" + (hint.isEmpty ? "" : ": \(hint)")
        return .typeMismatch(type, .init(codingPath: ctx.codingPath, debugDescription: ctx.prefix + message,
                                         underlyingError: failure(ctx, message)))
    }

    static func null(_ type: Any.Type, _ ctx: ColumnContext) -> DecodingError {
        let message = "NULL cannot be decoded as non-optional \(type)"
        return .valueNotFound(type, .init(codingPath: ctx.codingPath, debugDescription: ctx.prefix + message,
                                          underlyingError: failure(ctx, message)))
    }

    static func corrupted(_ type: Any.Type, _ value: Value, _ ctx: ColumnContext, _ reason: String) -> DecodingError {
        let message = "cannot decode \(type) from \(value): \(reason)"
        return .dataCorrupted(.init(codingPath: ctx.codingPath, debugDescription: ctx.prefix + message,
                                    underlyingError: failure(ctx, message)))
    }

    // MARK: Dispatch

    /// Decodes any `Decodable` from one column value.
    static func decode<T: Decodable>(_ type: T.Type, from value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> T {
        if let known = try decodeKnown(type, from: value, ctx, options) { return known }
        do {
            return try T(from: ColumnDecoder(value: value, context: ctx, options: options))
        } catch is NeedsJSON {
            return try decodeJSON(type, from: value, ctx, options)
        } catch let error as DecodingError {
            throw locating(error, type, value, ctx)
        }
    }

    /// The direct conversions; nil when `T` is not one of the known types.
    /// One conformance lookup, where a chain of type tests would cost one each.
    @inline(__always)
    static func decodeKnown<T>(_ type: T.Type, from value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> T? {
        guard let known = type as? any ColumnDecodable.Type else { return nil }
        return try known.decode(column: value, ctx, options) as? T
    }

    /// Whether ``decodeKnown(_:from:_:_:)`` converts this type directly.
    static func isKnown(_ type: Any.Type) -> Bool {
        type is any ColumnDecodable.Type
    }

    /// An error a type's own `init(from:)` threw (an enum's unknown raw value, say),
    /// given the column and the stored value it lacks.
    static func locating(_ error: DecodingError, _ type: Any.Type, _ value: Value, _ ctx: ColumnContext) -> DecodingError {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c), .keyNotFound(_, let c): context = c
        @unknown default: return error
        }
        if context.underlyingError is ColumnFailure { return error }
        let message = "cannot decode \(type) from \(value): \(context.debugDescription)"
        return .dataCorrupted(.init(codingPath: context.codingPath.isEmpty ? ctx.codingPath : context.codingPath,
                                    debugDescription: ctx.prefix + message, underlyingError: failure(ctx, message)))
    }

    static func decodeJSON<T: Decodable>(_ type: T.Type, from value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> T {
        let bytes: Data
        switch value {
        case .json(let text), .text(let text): bytes = Data(text.utf8)
        case .blob(let blob): bytes = blob
        default: throw mismatch(type, value, ctx, "a nested \(T.self) is stored as JSON text")
        }
        do {
            return try options.jsonDecoder(ctx.column).decode(type, from: bytes)
        } catch let error as DecodingError {
            let (inner, path) = describe(error)
            let location = path.isEmpty ? "" : " at \(path)"
            let message = "invalid JSON for \(T.self)\(location): \(inner)"
            throw DecodingError.dataCorrupted(.init(
                codingPath: ctx.codingPath + innerPath(error),
                debugDescription: ctx.prefix + message,
                underlyingError: failure(ctx, message)))
        }
    }

    private static func innerPath(_ error: DecodingError) -> [any CodingKey] {
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return c.codingPath
        case .keyNotFound(let key, let c): return c.codingPath + [key]
        @unknown default: return []
        }
    }

    private static func describe(_ error: DecodingError) -> (String, String) {
        let path = Depot.describe(codingPath: innerPath(error))
        switch error {
        case .keyNotFound(let key, let c): return ("missing key \"\(key.stringValue)\"", Depot.describe(codingPath: c.codingPath))
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            if let underlying = c.underlyingError as? NSError, c.debugDescription.contains("not valid JSON") {
                return ("\(c.debugDescription) \(underlying.localizedDescription)", path)
            }
            return (c.debugDescription, path)
        @unknown default: return ("\(error)", path)
        }
    }

    // MARK: Conversions

    static func string(_ value: Value, _ ctx: ColumnContext) throws -> String {
        switch value {
        case .text(let s), .json(let s): return s
        // Stored as text on SQLite: read the same text on every engine.
        case .uuid(let u): return u.uuidString.lowercased()
        case .date(let d):
            guard let text = ISO8601.format(d) else {
                throw corrupted(String.self, value, ctx, "the date is outside the years 0001...9999, which Depot's date text can name")
            }
            return text
        case .decimal(let d, let scale): return Value.decimalText(d, scale: scale)
        default: throw mismatch(String.self, value, ctx)
        }
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: Value, _ ctx: ColumnContext) throws -> T {
        switch value {
        case .integer(let i):
            guard let result = T(exactly: i) else {
                throw corrupted(T.self, value, ctx, "out of range \(T.min)...\(T.max)")
            }
            return result
        case .double(let d):
            guard let result = T(exactly: d) else {
                throw corrupted(T.self, value, ctx, d.rounded() == d ? "out of range \(T.min)...\(T.max)" : "not a whole number")
            }
            return result
        case .decimal(let d, _):
            guard let whole = Int64(d.description), let result = T(exactly: whole) else {
                throw corrupted(T.self, value, ctx, "not a whole number in range \(T.min)...\(T.max)")
            }
            return result
        case .text(let s) where canonicalDecimal(s) != nil:
            // A Decimal is TEXT on SQLite and numeric on PostgreSQL: read it the same way on both.
            guard let whole = wholeNumber(s), let result = T(exactly: whole) else {
                throw corrupted(T.self, value, ctx, "not a whole number in range \(T.min)...\(T.max)")
            }
            return result
        case .bool(let b): return b ? 1 : 0
        default: throw mismatch(T.self, value, ctx)
        }
    }

    /// The integer a decimal literal names exactly (`42`, `-7.0`, `1e3`); nil when it is not whole or not an Int64.
    static func wholeNumber(_ s: String) -> Int64? {
        guard let canonical = canonicalDecimal(s) else { return nil }
        if canonical == "0" { return 0 }
        guard let e = canonical.lastIndex(of: "e"), let exponent = Int(canonical[canonical.index(after: e)...]),
              exponent >= 0, exponent <= 18 else { return nil }
        return Int64(canonical[..<e] + String(repeating: "0", count: exponent))
    }

    static func bool(_ value: Value, _ ctx: ColumnContext) throws -> Bool {
        switch value {
        case .bool(let b): return b
        case .integer(0): return false
        case .integer(1): return true
        case .integer: throw corrupted(Bool.self, value, ctx, "a stored Bool is 0 or 1")
        default: throw mismatch(Bool.self, value, ctx)
        }
    }

    static func double(_ value: Value, _ ctx: ColumnContext) throws -> Double {
        switch value {
        case .double(let d): return d
        case .integer(let i):
            guard let d = Double(exactly: i) else {
                throw corrupted(Double.self, value, ctx, "not exactly representable as a Double")
            }
            return d
        case .decimal(let dec, _):
            guard let d = Double(dec.description), Decimal(string: "\(d)", locale: posix) == dec else {
                throw corrupted(Double.self, value, ctx, "not exactly representable as a Double; decode a Decimal, or CAST(... AS DOUBLE PRECISION) in SQL")
            }
            return d
        case .text(let s) where canonicalDecimal(s) != nil:
            // A Decimal is TEXT on SQLite and numeric on PostgreSQL: read it the same way on both.
            guard let d = Double(s), d.isFinite, canonicalDecimal("\(d)") == canonicalDecimal(s) else {
                throw corrupted(Double.self, value, ctx, "not exactly representable as a Double; decode a Decimal")
            }
            return d
        case .bool(let b): return b ? 1 : 0 // a Bool is the INTEGER 0 or 1 on SQLite
        default: throw mismatch(Double.self, value, ctx)
        }
    }

    static func float(_ value: Value, _ ctx: ColumnContext) throws -> Float {
        let d = try double(value, ctx)
        guard let f = Float(exactly: d) else {
            throw corrupted(Float.self, value, ctx, "not exactly representable as a Float")
        }
        return f
    }

    static func date(_ value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Date {
        switch options.dateStrategy {
        case .deferredToStore, .iso8601Text:
            switch value {
            case .date(let d): return d
            case .text(let s):
                var text = s
                guard let micros = text.withUTF8({ ISO8601.parse(bytes: $0) }) else {
                    throw corrupted(Date.self, value, ctx, "not a date in ISO-8601 text (expected like 2026-11-22 02:45:18.123456 or 2026-11-22T02:45:18Z)")
                }
                guard let d = ISO8601.exactDate(microseconds: micros) else {
                    throw corrupted(Date.self, value, ctx, "a Date cannot hold this microsecond exactly (so far from 2001 a Date's Double keeps fewer digits)")
                }
                return d
            default: throw mismatch(Date.self, value, ctx, "dates are stored as ISO-8601 text; set a numeric date strategy to read numbers")
            }
        case .secondsSince1970:
            if case .date(let d) = value { return d }
            // To the microsecond, as the encoder wrote it: the same Date back, where
            // Date(timeIntervalSince1970:) would move it by a rounding.
            let seconds = try double(value, ctx)
            if let micros = ISO8601.microseconds(secondsSince1970: seconds) { return ISO8601.date(microseconds: micros) }
            return Date(timeIntervalSince1970: seconds)
        case .millisecondsSince1970:
            if case .date(let d) = value { return d }
            // Whole milliseconds convert exactly, as the encoder wrote them: the
            // same Date back, not one a floating-point division away.
            if case .integer(let ms) = value {
                let (micros, overflow) = ms.multipliedReportingOverflow(by: 1000)
                if !overflow, micros >= ISO8601.minMicros, micros <= ISO8601.maxMicros {
                    return ISO8601.date(microseconds: micros)
                }
            }
            return Date(timeIntervalSince1970: try double(value, ctx) / 1000)
        case .timeIntervalSinceReferenceDate:
            if case .date(let d) = value { return d }
            return Date(timeIntervalSinceReferenceDate: try double(value, ctx))
        case .custom(_, let decode):
            if case .null = value { throw null(Date.self, ctx) }
            do { return try decode(value) } catch let error as DecodingError { throw error } catch {
                throw corrupted(Date.self, value, ctx, "\(error)")
            }
        }
    }

    static func uuid(_ value: Value, _ ctx: ColumnContext) throws -> UUID {
        switch value {
        case .uuid(let u): return u
        case .text(let s):
            guard let u = UUIDText.parse(s) else {
                throw corrupted(UUID.self, value, ctx, "not a UUID in 8-4-4-4-12 hex form")
            }
            return u
        case .blob(let d):
            guard d.count == 16 else { throw corrupted(UUID.self, value, ctx, "a UUID blob has 16 bytes") }
            var bytes = UUID().uuid
            withUnsafeMutableBytes(of: &bytes) { target in d.withUnsafeBytes { target.copyMemory(from: $0) } }
            return UUID(uuid: bytes)
        default: throw mismatch(UUID.self, value, ctx)
        }
    }

    static func data(_ value: Value, _ ctx: ColumnContext, _ options: DecodingOptions) throws -> Data {
        switch (value, options.dataStrategy) {
        case (.blob(let d), _): return d
        case (.text(let s), .base64Text):
            guard let d = Data(base64Encoded: s) else { throw corrupted(Data.self, value, ctx, "not base64") }
            return d
        default: throw mismatch(Data.self, value, ctx)
        }
    }

    static let posix = Locale(identifier: "en_US_POSIX")

    static func decimal(_ value: Value, _ ctx: ColumnContext) throws -> Decimal {
        switch value {
        case .decimal(let d, _): return d
        case .integer(let i): return Decimal(i)
        case .bool(let b): return b ? 1 : 0 // a Bool is the INTEGER 0 or 1 on SQLite
        case .double(let d):
            guard d.isFinite, let dec = Decimal(string: "\(d)", locale: posix) else {
                throw corrupted(Decimal.self, value, ctx, "not a finite number")
            }
            guard canonicalDecimal(dec.description) == canonicalDecimal("\(d)") else {
                throw corrupted(Decimal.self, value, ctx, "outside the range Decimal holds (it would read \(dec))")
            }
            return dec
        case .text(let s):
            guard let literal = canonicalDecimal(s), let dec = Decimal(string: s, locale: posix) else {
                throw corrupted(Decimal.self, value, ctx, "not a decimal number")
            }
            // Decimal keeps 38 significant digits and rounds the rest away silently: refuse instead.
            guard canonicalDecimal(dec.description) == literal else {
                throw corrupted(Decimal.self, value, ctx, "more significant digits or a larger exponent than Decimal holds (it would read \(dec))")
            }
            return dec
        default: throw mismatch(Decimal.self, value, ctx)
        }
    }

    /// The number a `[+-]digits[.digits][e[+-]digits]` literal names, in one
    /// canonical text: sign, significant digits without leading or trailing zeros,
    /// and the power of ten of the last one (`-12.50` → `-125e-1`, `0.0` → `0`).
    /// Nil when the text is not such a literal, the whole text (`Decimal(string:)`
    /// alone accepts "12abc"), or its exponent has more than six digits.
    static func canonicalDecimal(_ s: String) -> String? {
        var bytes = Substring(s).utf8[...]
        var negative = false
        if let first = bytes.first, first == 43 || first == 45 { negative = first == 45; bytes = bytes.dropFirst() }
        var digits: [UInt8] = []
        var exponent = 0
        var count = 0
        while let c = bytes.first, c >= 48, c <= 57 { digits.append(c); bytes = bytes.dropFirst(); count += 1 }
        guard count > 0 else { return nil }
        if bytes.first == 46 {
            bytes = bytes.dropFirst()
            count = 0
            while let c = bytes.first, c >= 48, c <= 57 { digits.append(c); exponent -= 1; bytes = bytes.dropFirst(); count += 1 }
            guard count > 0 else { return nil }
        }
        if let e = bytes.first, e == 101 || e == 69 {
            bytes = bytes.dropFirst()
            var sign = 1
            if let c = bytes.first, c == 43 || c == 45 { sign = c == 45 ? -1 : 1; bytes = bytes.dropFirst() }
            var written = 0
            count = 0
            while let c = bytes.first, c >= 48, c <= 57 {
                guard count < 6 else { return nil }
                written = written * 10 + Int(c - 48)
                bytes = bytes.dropFirst()
                count += 1
            }
            guard count > 0 else { return nil }
            exponent += sign * written
        }
        guard bytes.isEmpty else { return nil }
        while let last = digits.last, last == 48 { digits.removeLast(); exponent += 1 }
        guard let first = digits.firstIndex(where: { $0 != 48 }) else { return "0" }
        return (negative ? "-" : "") + String(decoding: digits[first...], as: UTF8.self) + "e\(exponent)"
    }

    static func url(_ value: Value, _ ctx: ColumnContext) throws -> URL {
        // What reads as a String reads as a URL (a UUID or a Decimal is text on
        // SQLite, so both engines agree), but never a JSON value: its text is
        // JSON (a JSON null would become the URL `null`).
        let s: String
        switch value {
        case .text, .uuid, .decimal, .date: s = try string(value, ctx)
        default: throw mismatch(URL.self, value, ctx)
        }
        // Foundation percent-encodes what a URL cannot hold ("a b" becomes "a%20b"):
        // a URL is stored as its absoluteString, so anything else is not one.
        guard let url = URL(string: s), url.absoluteString == s else {
            throw corrupted(URL.self, value, ctx, "not a URL as URL.absoluteString writes it")
        }
        return url
    }
}

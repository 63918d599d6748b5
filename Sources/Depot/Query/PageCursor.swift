import Foundation

/// Where a page of a query ends: the values of the query's ordering terms
/// (and of the primary key that breaks their ties) at one row, and a mark of
/// the order they belong to.
///
/// Hand it back to ``Database/fetchPage(_:after:limit:)`` or
/// ``Database/fetchPage(_:before:limit:)`` for the page that follows or
/// precedes that row. It is `Codable` as one opaque string (also
/// ``token``), so an API can give it to a client and take it back:
///
/// ```swift
/// let page = try db.fetchPage(Reminder.all.order { $0.title }, limit: 50)
/// let token = page.next?.token     // send it; get it back as ?after=…
/// let more = try db.fetchPage(Reminder.all.order { $0.title }, after: try PageCursor(token: token!), limit: 50)
/// ```
///
/// Caveat: the token holds the ordering values of a row (a title, a date) in
/// base64, readable by whoever holds it; it is not encrypted or signed. A
/// cursor made for one order is refused (`misuse`) by a query with another.
public struct PageCursor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A mark of the order (its SQL and table), which a query checks the cursor against.
    let order: String
    /// The ordering terms' values at the row, in order.
    let values: [Value]

    init(order: String, values: [Value]) {
        self.order = order
        self.values = values
    }

    /// The cursor as one URL-safe string.
    public var token: String {
        var parts: [[String]] = [[order]]
        for value in values { parts.append(Self.tagged(value)) }
        let data = (try? JSONEncoder().encode(parts)) ?? Data()
        return data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Reads a cursor from its ``token``.
    ///
    /// - Throws: a `misuse` ``DatabaseError`` for a string that is not a cursor's token.
    public init(token: String) throws(DatabaseError) {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              let parts = try? JSONDecoder().decode([[String]].self, from: data),
              let order = parts.first, order.count == 1 else {
            throw DatabaseError.misuse("not a page cursor's token")
        }
        var values: [Value] = []
        for part in parts.dropFirst() {
            guard let value = Self.value(part) else { throw DatabaseError.misuse("not a page cursor's token: a value it holds is malformed") }
            values.append(value)
        }
        self.init(order: order[0], values: values)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let token = try container.decode(String.self)
        do {
            try self.init(token: token)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(token)
    }

    /// `PageCursor(3 values)`: never the values, which may be personal data.
    public var description: String { "PageCursor(\(values.count) values)" }

    static func tagged(_ value: Value) -> [String] {
        switch value {
        case .null: ["n"]
        case .bool(let b): ["b", b ? "1" : "0"]
        case .integer(let i): ["i", String(i)]
        case .double(let d): ["d", String(d.bitPattern, radix: 16)]
        case .text(let s): ["t", s]
        case .blob(let data): ["x", data.base64EncodedString()]
        case .date(let date): ["D", String(date.timeIntervalSince1970.bitPattern, radix: 16)]
        case .uuid(let uuid): ["u", uuid.uuidString]
        case .json(let s): ["j", s]
        case .decimal(let d, let scale): ["m", Value.decimalText(d, scale: scale)]
        }
    }

    static func value(_ part: [String]) -> Value? {
        guard let tag = part.first else { return nil }
        if tag == "n" { return part.count == 1 ? .null : nil }
        guard part.count == 2 else { return nil }
        let text = part[1]
        switch tag {
        case "b": return text == "1" ? .bool(true) : text == "0" ? .bool(false) : nil
        case "i": return Int64(text).map(Value.integer)
        case "d": return UInt64(text, radix: 16).map { .double(Double(bitPattern: $0)) }
        case "t": return .text(text)
        case "x": return Data(base64Encoded: text).map(Value.blob)
        case "D": return UInt64(text, radix: 16).map { .date(Date(timeIntervalSince1970: Double(bitPattern: $0))) }
        case "u": return UUID(uuidString: text).map(Value.uuid)
        case "j": return .json(text)
        case "m": return Value.decimal(text: text)
        default: return nil
        }
    }
}

/// Records of one page of a query, and the cursors of its neighbours.
public struct Page<Element> {
    /// The records, in the query's order.
    public var items: [Element]
    /// The cursor of the last item, when rows follow it: pass it as `after:`
    /// for the next page. Nil on the last page.
    public var next: PageCursor?
    /// The cursor of the first item, when rows come before it: pass it as
    /// `before:` for the previous page. Nil on the first page.
    public var previous: PageCursor?
}

extension Page: Sendable where Element: Sendable {}

/// A value bound exactly as read: a page cursor's value compared with its term.
struct BoundValue: QueryValue {
    let value: Value
    static var queryType: QueryType { .integer }
    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try Value(from: decoder) }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

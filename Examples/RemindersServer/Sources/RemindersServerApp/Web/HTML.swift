/// Markup whose interpolated text is escaped: a title is shown as text,
/// never run, wherever it lands (an element's text or an attribute's quoted
/// value). Only markup interpolates as markup.
///
/// ```swift
/// let title = "<script>alert(1)</script>"
/// let item: HTML = "<li title=\"\(title)\">\(title)</li>"   // both escaped
/// let list: HTML = "<ul>\(item)</ul>"                        // markup kept
/// ```
///
/// Caveat: escaping makes text safe in content and in quoted attribute
/// values; a URL attribute (`href`, `src`) is never built from what a user
/// typed (a `javascript:` URL is text that escaping leaves a URL). Pages
/// link by ids the server made.
struct HTML: ExpressibleByStringInterpolation, Sendable, Equatable, CustomStringConvertible {
    /// The markup.
    private(set) var text: String

    init(stringLiteral literal: String) { text = literal }
    init(stringInterpolation interpolation: StringInterpolation) { text = interpolation.text }
    /// Markup the caller vouches for: nothing in it is escaped.
    init(unsafeRaw text: String) { self.text = text }

    var description: String { text }

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + interpolationCount * 16) }
        mutating func appendLiteral(_ literal: String) { text += literal }
        /// Text: escaped.
        mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }
        mutating func appendInterpolation(_ value: Int) { text += String(value) }
        mutating func appendInterpolation(_ value: Int64) { text += String(value) }
        /// Markup: kept.
        mutating func appendInterpolation(_ markup: HTML) { text += markup.text }
        /// Markup, one after another.
        mutating func appendInterpolation(_ markups: [HTML]) { for markup in markups { text += markup.text } }
        /// Markup or nothing.
        mutating func appendInterpolation(_ markup: HTML?) { if let markup { text += markup.text } }
    }

    /// One piece of markup after another.
    static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(unsafeRaw: lhs.text + rhs.text) }

    /// Text with `&`, `<`, `>`, `"` and `'` as character references.
    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}

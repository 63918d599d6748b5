/// A text compared byte for byte, as the engines compare keys (SQLite's
/// BINARY collation; PostgreSQL's deterministic collations): Swift's `String`
/// compares by canonical equivalence, so "é" (U+00E9) and "e" + U+0301, or
/// "Ω" and the ohm sign U+2126, are one dictionary key and one set member,
/// where a table holds two rows. Every dictionary and set of the sync path
/// that is keyed by a row's key uses this instead.
struct ExactText: Hashable, Comparable, Sendable, CustomStringConvertible {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    static func < (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        for byte in text.utf8 { hasher.combine(byte) }
    }

    var description: String { text }
}

extension Sequence where Element == String {
    /// The distinct texts, byte for byte, in their first order.
    func exactlyDistinct() -> [String] {
        var seen = Set<ExactText>()
        return filter { seen.insert(ExactText($0)).inserted }
    }
}

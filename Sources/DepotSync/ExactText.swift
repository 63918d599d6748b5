import Foundation

/// A text compared byte for byte, as the engines compare keys (SQLite's
/// BINARY collation; PostgreSQL's deterministic collations): Swift's `String`
/// compares by canonical equivalence, so "é" (U+00E9) and "e" + U+0301, or
/// "Ω" and the ohm sign U+2126, are one dictionary key and one set member,
/// where a table holds two rows. Every dictionary and set of the sync path
/// that is keyed by a row's key uses this instead.
struct ExactText: Hashable, Comparable, Sendable, CustomStringConvertible {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: ExactText, rhs: ExactText) -> Bool {
        lhs.withBytes { a in rhs.withBytes { b in a.count == b.count && compare(a, b, count: a.count) == 0 } }
    }

    static func < (lhs: ExactText, rhs: ExactText) -> Bool {
        lhs.withBytes { a in
            rhs.withBytes { b in
                let order = compare(a, b, count: min(a.count, b.count))
                return order != 0 ? order < 0 : a.count < b.count
            }
        }
    }

    /// `memcmp` of the first `count` bytes of each (zero for none).
    @inline(__always)
    private static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, count: Int) -> Int32 {
        guard count > 0, let a = a.baseAddress, let b = b.baseAddress else { return 0 }
        return memcmp(a, b, count)
    }

    func hash(into hasher: inout Hasher) {
        withBytes { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }

    /// The text's UTF-8 bytes, in place for a native string (the keys of the
    /// sync path are: read from the engine or the wire), copied otherwise.
    /// Every comparison and hash of the sync path's dictionaries goes through
    /// here, so it reads the bytes at once, not one code unit at a time.
    @inline(__always)
    private func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
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

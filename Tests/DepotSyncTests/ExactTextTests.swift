@testable import DepotSync
import DepotTesting
import Foundation
import Testing

/// The sync path's keys compare, sort and hash by their UTF-8 bytes, as the
/// engines compare keys, whatever Swift's `String` calls equal.
@Suite struct ExactTextTests {
    @Test func textsSwiftCallsEqualAreTwoKeys() {
        let pairs = [("\u{E9}", "e\u{301}"), ("\u{3A9}", "\u{2126}"), ("a\u{308}\u{323}", "a\u{323}\u{308}")]
        for (composed, decomposed) in pairs {
            #expect(composed == decomposed, "Swift's String calls them equal")
            #expect(ExactText(composed) != ExactText(decomposed))
            #expect(Set([ExactText(composed), ExactText(decomposed)]).count == 2)
        }
        #expect(["\u{E9}", "e\u{301}", "\u{E9}"].exactlyDistinct() == ["\u{E9}", "e\u{301}"])
    }

    @Test func equalityOrderAndHashAreThoseOfTheBytes() {
        let seed = UInt64.random(in: 1...UInt64.max / 2)
        var random = SeededGenerator(seed: seed)
        // Short texts over a small alphabet, so that equal texts, prefixes and shared starts are common.
        let alphabet: [String] = ["", "a", "b", "\u{0}", "\u{7F}", "\u{E9}", "e", "\u{301}", "\u{2126}", "\u{1F600}", "\u{FFFD}"]
        let texts = (0..<400).map { _ in (0..<Int(random.next() % 5)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }.joined() }
        for a in texts {
            for b in texts.prefix(80) {
                let (x, y) = (Array(a.utf8), Array(b.utf8))
                #expect((ExactText(a) == ExactText(b)) == (x == y), "seed \(seed): \(a.debugDescription) and \(b.debugDescription)")
                #expect((ExactText(a) < ExactText(b)) == x.lexicographicallyPrecedes(y), "seed \(seed): \(a.debugDescription) < \(b.debugDescription)")
                if x == y { #expect(ExactText(a).hashValue == ExactText(b).hashValue, "seed \(seed)") }
            }
        }
        // A text and a copy of it made another way (a substring, characters joined) are one key.
        for text in texts where !text.isEmpty {
            let copy = String(text.dropFirst(0)), rebuilt = String(text.map { $0 })
            #expect(ExactText(copy) == ExactText(text) && ExactText(copy).hashValue == ExactText(text).hashValue, "seed \(seed)")
            #expect(ExactText(rebuilt) == ExactText(text), "seed \(seed)")
        }
    }
}

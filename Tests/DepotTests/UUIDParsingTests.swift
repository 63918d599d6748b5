@testable import Depot
import Foundation
import Testing
import DepotTesting

/// Depot reads a UUID stored as text with its own parser: exactly the
/// 8-4-4-4-12 hex form, either case, and the UUID Foundation reads from it;
/// and writes it with its own formatter, the text Foundation writes.
@Suite struct UUIDParsingTests {
    @Test func everyUUIDReadsBackFromItsTextInEitherCase() {
        for _ in 0..<10_000 {
            let uuid = UUID()
            #expect(UUIDText.parse(uuid.uuidString) == uuid)
            #expect(UUIDText.parse(uuid.uuidString.lowercased()) == uuid)
        }
        let extremes = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
        for uuid in extremes { #expect(UUIDText.parse(uuid.uuidString) == uuid) }
    }

    /// Random text of UUID-like shapes from an alphabet of hex digits and the
    /// characters that fooled sscanf: accepted exactly when it has the form,
    /// and then the UUID Foundation reads.
    @Test func randomTextIsAcceptedExactlyWhenItHasTheForm() {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let alphabet = Array("0123456789abcdefABCDEFgG+- {}xÉ")
        for _ in 0..<50_000 {
            var characters = Array(UUID().uuidString)
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                let index = Int.random(in: 0..<characters.count, using: &random)
                characters[index] = alphabet.randomElement(using: &random) ?? "0"
            }
            if Int.random(in: 0..<20, using: &random) == 0 { characters.removeLast() }
            let text = String(characters)
            let isForm = text.utf8.count == 36 && text.enumerated().allSatisfy { index, character in
                [8, 13, 18, 23].contains(index) ? character == "-" : character.isHexDigit && character.isASCII
            }
            let parsed = UUIDText.parse(text)
            #expect((parsed != nil) == isForm, "seed \(seed): \(text)")
            if let parsed { #expect(parsed == UUID(uuidString: text), "seed \(seed): \(text)") }
        }
    }

    @Test func theWrittenTextIsFoundationsInEachCase() {
        let extremes = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))]
        for uuid in extremes + (0..<10_000).map({ _ in UUID() }) {
            #expect(UUIDText.uppercased(uuid) == uuid.uuidString)
            #expect(UUIDText.lowercased(uuid) == uuid.uuidString.lowercased())
            #expect(UUIDText.parse(UUIDText.lowercased(uuid)) == uuid)
        }
    }
}

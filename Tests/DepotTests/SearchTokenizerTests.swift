import Depot
import Testing

@Suite struct SearchTokenizerTests {
    @Test func wordsAreFoldedForCaseDiacriticsAndCompatibilityForms() {
        #expect(SearchTokenizer.tokens(in: "Café-CRÈME, 3.14 ﬁne Straße 👍🏽") == ["cafe", "creme", "3", "14", "fine", "strasse"])
        #expect(SearchTokenizer.tokens(in: "e\u{301}cole ÉCOLE") == ["ecole", "ecole"], "decomposed and composed alike")
        #expect(SearchTokenizer.tokens(in: "ΣΊΣΥΦΟΣ σίσυφος") == ["σισυφοσ", "σισυφοσ"], "final sigma folds with sigma")
        #expect(SearchTokenizer.tokens(in: "İstanbul ıstanbul") == ["istanbul", "istanbul"])
        #expect(SearchTokenizer.tokens(in: "ＡＢＣ x² ½") == ["abc", "x2", "12"])
    }

    @Test func punctuationSymbolsAndEmojiSeparateWords() {
        #expect(SearchTokenizer.tokens(in: "under_score C:\\temp 100% don't a.b@c") == ["under", "score", "c", "temp", "100", "don", "t", "a", "b", "c"])
        #expect(SearchTokenizer.tokens(in: "emoji😀test 👩‍👩‍👧 1️⃣") == ["emoji", "test", "1"])
        #expect(SearchTokenizer.tokens(in: "") == [])
        #expect(SearchTokenizer.tokens(in: " — % \u{301}") == [], "a lone combining mark has no token")
    }

    @Test func aWordLongerThanTheLimitHasNoToken() {
        let longest = String(repeating: "a", count: SearchTokenizer.maximumTokenLength)
        #expect(SearchTokenizer.tokens(in: longest + " " + longest + "a b") == [longest, "b"])
    }

    @Test func scriptsWithoutSpacesAreOneTokenPerRun() {
        #expect(SearchTokenizer.tokens(in: "東京都に住む。한국어") == ["東京都に住む", "한국어".decomposedStringWithCompatibilityMappingForTest])
    }

    @Test func aQueryMatchesTermsExactlyOrAsPrefixes() {
        #expect(SearchQuery("milk").matches(["Oat-MILK"]))
        #expect(!SearchQuery("milk").matches(["milkshake"]))
        #expect(SearchQuery("milk", prefixes: .lastTerm).matches(["milkshake"]))
        #expect(!SearchQuery("oat milk").matches(["oat", ""]) && SearchQuery("oat milk").matches(["oat", "milk"]))
        #expect(SearchQuery("oat milk", matching: .anyTerm).matches(["oat", ""]))
        #expect(!SearchQuery("").matches(["anything"]) && !SearchQuery("%").matches(["100%"]))
        #expect(SearchQuery("a b a", prefixes: .lastTerm).terms.map(\.token) == ["a", "b", "a"], "a then b exactly, a as a prefix")
        #expect(SearchQuery("a b a").terms.map(\.token) == ["a", "b"])
    }

    @Test func aHighlightMarksTheMatchingWordsOfTheOriginalText() {
        #expect(SearchQuery("creme").highlight("Café crème brûlée", open: "[", close: "]") == "Café [crème] brûlée")
        #expect(SearchQuery("caf", prefixes: .everyTerm).highlight("CAFÉ-café, cafe\u{301}!", open: "<", close: ">")
                == "<CAFÉ>-<café>, <cafe\u{301}>!")
        #expect(SearchQuery("zebra").highlight("no match 👍", open: "[", close: "]") == "no match 👍")
    }

    @Test func theWordsThatHaveNoTokenAreTheOnesTooLongToIndex() {
        let long = String(repeating: "a", count: SearchTokenizer.maximumTokenLength + 1)
        let longest = String(repeating: "é", count: SearchTokenizer.maximumTokenLength)
        #expect(SearchTokenizer.wordsWithoutToken(in: "milk \(long), \(longest) oat").map(String.init) == [long])
        #expect(SearchTokenizer.tokens(in: "milk \(long) oat") == ["milk", "oat"], "the same word the tokenizer leaves out")
        #expect(SearchTokenizer.wordsWithoutToken(in: "plain words").isEmpty)
    }
}

import Foundation

extension String {
    /// Hangul syllables as the tokenizer stores them: decomposed into jamo.
    var decomposedStringWithCompatibilityMappingForTest: String { decomposedStringWithCompatibilityMapping }
}

import Foundation

/// How full-text search splits text into tokens: the same rules for what a
/// ``SearchIndex`` stores and for what a ``SearchQuery`` asks, computed in
/// Swift, so every engine stores and matches the same tokens.
///
/// ```swift
/// SearchTokenizer.tokens(in: "Café-CRÈME, 3.14 ﬁne Straße 👍🏽")
/// // ["cafe", "creme", "3", "14", "fine", "strasse"]
/// ```
///
/// The rules:
/// - A *word* is a longest run of letters, numbers and combining marks (Unicode
///   general categories L, N and M). Everything else separates words:
///   spaces, punctuation (`-`, `_`, `'`, `.` too), symbols and emoji.
/// - A word's token is its compatibility decomposition (NFKD: `ﬁ` is `fi`,
///   `²` is `2`, full-width `Ａ` is `A`) without its nonspacing and enclosing
///   marks (diacritics: `é` is `e`), each character mapped to upper case and
///   back to lower case (`ß` and `SS` are both `ss`, `ς` and `Σ` are both `σ`).
/// - A word whose token is empty or longer than ``maximumTokenLength``
///   characters (Unicode scalars) has no token: it is neither indexed nor searched.
///
/// Caveat: words are what spaces and punctuation separate, so in scripts
/// written without spaces (Chinese, Japanese, Thai) a whole run of text is
/// one token, found by its beginning with a prefix query. Changing these rules
/// changes the tokens: an index built by an older Depot with other rules is
/// rebuilt with ``Database/rebuildSearchIndex(_:texts:)``.
public enum SearchTokenizer {
    /// The longest token, in Unicode scalars: longer words are not indexed.
    public static let maximumTokenLength = 128

    /// The tokens of `text`, in order, repeats included.
    public static func tokens(in text: String) -> [String] {
        var tokens: [String] = []
        forEachWord(in: text) { _, token in tokens.append(token) }
        return tokens
    }

    /// The words of `text` that have no token (longer than
    /// ``maximumTokenLength``, or nothing but marks): neither indexed nor
    /// searched, so a query can say what it left out.
    ///
    /// ```swift
    /// SearchTokenizer.wordsWithoutToken(in: "milk " + String(repeating: "a", count: 200)).map(\.count)   // [200]
    /// ```
    public static func wordsWithoutToken(in text: String) -> [Substring] {
        var words: [Substring] = []
        forEachWordAndToken(in: text) { range, token in if token == nil { words.append(text[range]) } }
        return words
    }

    /// Calls `body` with the range (of unicode scalars) and the token of each
    /// word of `text` that has one.
    static func forEachWord(in text: String, _ body: (Range<String.Index>, String) -> Void) {
        forEachWordAndToken(in: text) { range, token in if let token { body(range, token) } }
    }

    /// Calls `body` with the range (of unicode scalars) of each word of
    /// `text` and its token, nil for a word that has none.
    private static func forEachWordAndToken(in text: String, _ body: (Range<String.Index>, String?) -> Void) {
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            guard isWordScalar(scalars[index]) else {
                scalars.formIndex(after: &index)
                continue
            }
            let start = index
            var isASCII = true
            while index < scalars.endIndex, isWordScalar(scalars[index]) {
                if scalars[index].value >= 0x80 { isASCII = false }
                scalars.formIndex(after: &index)
            }
            body(start..<index, token(of: scalars[start..<index], isASCII: isASCII))
        }
    }

    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case 0..<0x80: return false
        default:
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber,
                 .nonspacingMark, .spacingMark, .enclosingMark:
                return true
            default:
                return false
            }
        }
    }

    /// Whether a scalar of a folded word stays in its token: letters, numbers
    /// and spacing marks (not diacritics, nor what decomposition brought in,
    /// such as the fraction slash of `½`).
    private static func isKept(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .spacingMark:
            return true
        default:
            return false
        }
    }

    private static func token(of word: Substring.UnicodeScalarView, isASCII: Bool) -> String? {
        var token = String.UnicodeScalarView()
        var length = 0
        if isASCII {
            for scalar in word {
                token.append(scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(UInt8(scalar.value + 32)) : scalar)
            }
            length = word.count
        } else {
            let decomposed = String(String.UnicodeScalarView(word)).decomposedStringWithCompatibilityMapping
            for scalar in decomposed.unicodeScalars where isKept(scalar) {
                for upper in scalar.properties.uppercaseMapping.unicodeScalars {
                    for lower in upper.properties.lowercaseMapping.unicodeScalars where isKept(lower) {
                        token.append(lower)
                        length += 1
                    }
                }
            }
        }
        guard length > 0, length <= maximumTokenLength else { return nil }
        return String(token)
    }
}

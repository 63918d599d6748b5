import Foundation

/// Database URLs as a backend shows them in errors, logs and descriptions:
/// never with a password.
public enum DatabaseURL {
    /// A URL with its password replaced by `***`, found by its place in the
    /// text (after the user's `:` and before the last `@`), so that a URL too
    /// broken to parse is redacted as well; a `password=` query parameter is
    /// redacted too. Show a database URL only through this.
    ///
    /// ```swift
    /// DatabaseURL.redacted("postgres://app:s3cret@db/app")         // "postgres://app:***@db/app"
    /// DatabaseURL.redacted("mariadb://db/app?user=a&password=s3")  // "mariadb://db/app?user=a&password=***"
    /// ```
    public static func redacted(_ url: String) -> String {
        var text = url
        let authorityStart = text.range(of: "://")?.upperBound ?? text.startIndex
        if let at = text[authorityStart...].lastIndex(of: "@"),
           let colon = text[authorityStart..<at].firstIndex(of: ":") {
            text = text[..<colon] + ":***" + text[at...]
        }
        var searchStart = text.startIndex
        while let found = text.range(of: "password=", options: .caseInsensitive, range: searchStart..<text.endIndex) {
            let end = text[found.upperBound...].firstIndex(of: "&") ?? text.endIndex
            text.replaceSubrange(found.upperBound..<end, with: "***")
            searchStart = text.index(found.upperBound, offsetBy: 3)
        }
        return text
    }
}

import DepotSync
import Foundation
import Hummingbird

/// A device's bearer token: 32 random bytes as 64 lowercase hex digits.
///
/// The server stores only the token's SHA-256 (as hex): a copy of the
/// database signs no one in. The token itself appears once, in the answer
/// that issues it, and never in a log line or an error message.
struct BearerToken: Sendable {
    /// The token, as the client sends it.
    let text: String

    /// A new token from the system's secure random generator.
    static func random() -> BearerToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return BearerToken(text: hex(bytes))
    }

    /// What the server stores and looks the token up by.
    var hash: String { Self.sha256(text) }

    /// The token of a request's `Authorization: Bearer <token>` header.
    ///
    /// - Throws: 401 when the header is missing, holds another scheme or is
    ///   not one token of 64 hex digits. The message never quotes the header.
    init(_ request: Request) throws {
        let values = request.headers[values: .authorization]
        guard !values.isEmpty else {
            throw Self.unauthorized("this route needs a device's token: send Authorization: Bearer <token>", cause: "no token")
        }
        let parts = values.count == 1 ? values[0].split(separator: " ", omittingEmptySubsequences: true) : []
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Self.unauthorized("the Authorization header must be Bearer <token>", cause: "malformed token")
        }
        let token = parts[1].lowercased()
        guard token.utf8.count == 64, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw Self.unauthorized("the token is not valid; sign in again", cause: "malformed token")
        }
        text = token
    }

    private init(text: String) { self.text = text }

    /// The token in a session cookie's value: nil unless it is one token of
    /// 64 hex digits.
    init?(cookieValue value: Substring) {
        let token = value.lowercased()
        guard token.utf8.count == 64, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else { return nil }
        text = token
    }

    /// A 401 with the header that names the scheme.
    static func unauthorized(_ message: String, cause: String) -> ServerError {
        ServerError(status: .unauthorized, message: message, cause: cause, headers: [.wwwAuthenticate: "Bearer"])
    }

    /// The SHA-256 of text's UTF-8, as 64 lowercase hex digits.
    static func sha256(_ text: String) -> String {
        SHA256.hex(Data(text.utf8))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

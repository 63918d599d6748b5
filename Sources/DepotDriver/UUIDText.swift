import Foundation

/// A UUID's 36-character text (8-4-4-4-12 hex digits), written and read
/// without Foundation's C formatting: on Linux `uuidString` formats each
/// byte with `sprintf` and `UUID(uuidString:)` reads each with `sscanf`,
/// which costs more than the rest of a row's binding or decoding.
///
/// ```swift
/// UUIDText.lowercased(id)            // "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"
/// UUIDText.parse("E621E1F8-C36C-495A-93FC-0C247A3E6E5F") == id  // true
/// ```
public enum UUIDText {
    private static let lowerDigits = Array("0123456789abcdef".utf8)
    private static let upperDigits = Array("0123456789ABCDEF".utf8)

    /// The text with lowercase hex digits, as Depot stores a UUID in a text column.
    public static func lowercased(_ uuid: UUID) -> String { text(uuid, lowerDigits) }

    /// The text with uppercase hex digits: the same as Foundation's `uuidString`.
    public static func uppercased(_ uuid: UUID) -> String { text(uuid, upperDigits) }

    private static func text(_ uuid: UUID, _ digits: [UInt8]) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var index = 0
                for (position, byte) in bytes.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        buffer[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    buffer[index] = digits[Int(byte >> 4)]
                    buffer[index + 1] = digits[Int(byte & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }

    /// The UUID of a 36-character 8-4-4-4-12 text, hex digits in either
    /// case; nil for anything else (a sign or a space never stands in for
    /// a digit, as `sscanf("%2hhx")` lets it).
    public static func parse(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { utf8 -> UUID? in
            guard utf8.count == 36 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let parsed = withUnsafeMutableBytes(of: &bytes) { target -> Bool in
                var index = 0
                for byte in 0..<16 {
                    if index == 8 || index == 13 || index == 18 || index == 23 {
                        guard utf8[index] == UInt8(ascii: "-") else { return false }
                        index += 1
                    }
                    guard let high = hexDigit(utf8[index]), let low = hexDigit(utf8[index + 1]) else { return false }
                    target[byte] = high << 4 | low
                    index += 2
                }
                return true
            }
            return parsed ? UUID(uuid: bytes) : nil
        }
    }

    /// A hex digit's value, either case; nil for any other byte.
    @inline(__always)
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }
}

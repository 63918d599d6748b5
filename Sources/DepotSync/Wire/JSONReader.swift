import Foundation

/// Reads JSON text as it goes, for the sync protocol's messages: strict
/// JSON (RFC 8259), any spacing and key order, unknown keys skipped (a
/// newer peer's fields), every failure a ``Failure`` naming what was
/// expected and where. Never repairs: a string that is not valid UTF-8,
/// or holds a lone surrogate, is refused, not replaced.
struct JSONReader {
    private let bytes: [UInt8]
    private(set) var index = 0
    /// Objects and arrays open around the reader: a document nested deeper is refused.
    private var depth = 0
    static let maximumDepth = 64

    /// What is wrong with the text, and at which byte.
    struct Failure: Error, CustomStringConvertible {
        var message: String
        var offset: Int
        var description: String { "\(message) (at byte \(offset))" }
    }

    init(_ data: Data) { bytes = [UInt8](data) }
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func failure(_ message: String) -> Failure { Failure(message: message, offset: index) }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The next byte that is not space, not consumed.
    private mutating func peek() throws -> UInt8 {
        skipSpace()
        guard index < bytes.count else { throw failure("the text ends early") }
        return bytes[index]
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        guard try peek() == byte else { throw failure("expected \(what)") }
        index += 1
    }

    /// Nothing but space after the value.
    mutating func end() throws {
        skipSpace()
        guard index == bytes.count else { throw failure("text after the value") }
    }

    /// Whether the next value is `null` (then read).
    mutating func null() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { word in index + count <= bytes.count && bytes[index..<index + count].elementsEqual(word) }
        guard matches else { throw failure("expected \(word)") }
        index += count
    }

    mutating func bool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw failure("expected true or false")
        }
    }

    /// An integer: digits, or a number with a fraction or exponent whose
    /// value is a whole number in range (as Foundation takes it), never rounded.
    mutating func int64() throws -> Int64 {
        _ = try peek()
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        let digitsStart = index
        var magnitude: UInt64 = 0, overflow = false
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            magnitude = plus
            overflow = overflow || o1 || o2
            index += 1
        }
        let digits = index - digitsStart
        guard digits > 0 else { index = start; throw failure("expected a number") }
        guard !(digits > 1 && bytes[digitsStart] == UInt8(ascii: "0")) else { index = start; throw failure("a number with a leading zero") }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            return try wholeNumber(from: start)
        }
        let limit = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
        guard !overflow, magnitude <= limit else { index = start; throw failure("a number out of the range of a 64-bit integer") }
        return negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)
    }

    /// A number with a fraction or an exponent: taken when it is exactly a
    /// whole number in range, by its digits (no floating point in between).
    private mutating func wholeNumber(from start: Int) throws -> Int64 {
        index = start
        try skipNumber()
        let number = bytes[start..<index]
        func refused() -> Failure { Failure(message: "a number that is not a whole 64-bit integer", offset: start) }
        let negative = number.first == UInt8(ascii: "-")
        let body = number.drop { $0 == UInt8(ascii: "-") }
        let mantissa = body.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        let whole = mantissa.prefix { $0 != UInt8(ascii: ".") }
        let fraction = mantissa.dropFirst(whole.count + 1)
        var exponent = 0
        if mantissa.count < body.count {
            var text = body.dropFirst(mantissa.count + 1)
            let minus = text.first == UInt8(ascii: "-")
            if text.first == UInt8(ascii: "-") || text.first == UInt8(ascii: "+") { text = text.dropFirst() }
            // An exponent past a few hundred leaves nothing whole in range, or nothing but zeros.
            for digit in text.drop(while: { $0 == UInt8(ascii: "0") }).prefix(5) { exponent = exponent * 10 + Int(digit - UInt8(ascii: "0")) }
            if text.drop(while: { $0 == UInt8(ascii: "0") }).count > 5 { exponent = 100_000 }
            if minus { exponent = -exponent }
        }
        // The digits, without their point, and the power of ten they are multiplied by.
        var digits = Array(whole) + Array(fraction)
        var scale = exponent - fraction.count
        while let first = digits.first, first == UInt8(ascii: "0"), digits.count > 1 { digits.removeFirst() }
        if digits.allSatisfy({ $0 == UInt8(ascii: "0") }) { return 0 }
        while scale < 0 {
            guard digits.last == UInt8(ascii: "0") else { throw refused() }
            digits.removeLast()
            scale += 1
        }
        guard digits.count + scale <= 19 else { throw refused() }
        digits += Array(repeating: UInt8(ascii: "0"), count: scale)
        var magnitude: UInt64 = 0
        for digit in digits {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            guard !o1, !o2 else { throw refused() }
            magnitude = plus
        }
        guard magnitude <= (negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)) else { throw refused() }
        return negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)
    }

    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""), "a string")
        let start = index
        // The common case: no escape, one slice validated as UTF-8.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                guard let text = String(validating: bytes[start..<index], as: UTF8.self) else {
                    throw failure("a string that is not valid UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character inside a string") }
            index += 1
        }
        var utf8 = Array(bytes[start..<index])
        while true {
            guard index < bytes.count else { throw failure("a string without its closing quote") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw failure("a string that is not valid UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw failure("a string without its closing quote") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = UInt32(try hex4())
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw failure("a lone surrogate in a string")
                        }
                        index += 2
                        let low = UInt32(try hex4())
                        guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate in a string") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw failure("a lone surrogate in a string")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("an escape that is no character") }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw failure("an unknown escape in a string")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character inside a string") }
                utf8.append(byte)
            }
        }
    }

    private mutating func hex4() throws -> UInt16 {
        guard index + 4 <= bytes.count else { throw failure("a \\u escape without four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape without four hex digits")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Reads an object, calling `member` with each key; `member` reads the value (or skips it).
    mutating func object(_ member: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        try enter()
        defer { depth -= 1 }
        if try peek() == UInt8(ascii: "}") { index += 1; return }
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"), "a colon after a key")
            try member(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return
            default: throw failure("expected a comma or the end of an object")
            }
        }
    }

    /// Reads an array, calling `element` for each element.
    mutating func array(_ element: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        try enter()
        defer { depth -= 1 }
        if try peek() == UInt8(ascii: "]") { index += 1; return }
        while true {
            try element(&self)
            switch try peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return
            default: throw failure("expected a comma or the end of an array")
            }
        }
    }

    private mutating func enter() throws {
        guard depth < Self.maximumDepth else { throw failure("a value nested more than \(Self.maximumDepth) deep") }
        depth += 1
    }

    /// Reads past a value of any kind, checking it is JSON.
    mutating func skip() throws {
        switch try peek() {
        case UInt8(ascii: "{"): try object { reader, _ in try reader.skip() }
        case UInt8(ascii: "["): try array { reader in try reader.skip() }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
        case UInt8(ascii: "n"): _ = try null()
        default: try skipNumber()
        }
    }

    private mutating func skipNumber() throws {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        var digits = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; digits += 1 }
        guard digits > 0 else { index = start; throw failure("expected a value") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var fraction = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; fraction += 1 }
            guard fraction > 0 else { throw failure("a number without digits after its point") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            var exponent = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; exponent += 1 }
            guard exponent > 0 else { throw failure("a number without digits in its exponent") }
        }
    }

    /// The bytes of the next value, read past: for a part decoded by Foundation.
    mutating func rawValue() throws -> Data {
        _ = try peek()
        let start = index
        try skip()
        return Data(bytes[start..<index])
    }
}

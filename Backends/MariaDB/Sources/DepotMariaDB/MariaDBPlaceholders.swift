/// MariaDB takes only unnumbered `?`. The dialect writes `?1`, `?2`… as
/// SQLite's does; before a statement is prepared each `?N` outside quotes and
/// comments becomes `?`, and the statement remembers which value each marker
/// binds, so a repeated or reordered operand still binds the right value.
enum MariaDBPlaceholders {
    /// The SQL with `?` markers, and for each marker the 0-based index of its value.
    /// A bare `?` (raw SQL) binds the next value after the previous marker's.
    static func rewrite(_ sql: String) -> (sql: String, markers: [Int]) {
        let bytes = Array(sql.utf8)
        guard bytes.contains(UInt8(ascii: "?")) else { return (sql, []) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var markers: [Int] = []
        var i = 0
        let n = bytes.count
        func copyQuoted(_ quote: UInt8) {
            out.append(bytes[i]); i += 1
            while i < n {
                let byte = bytes[i]
                out.append(byte); i += 1
                if byte == quote {
                    // A doubled quote stays inside.
                    if i < n, bytes[i] == quote { out.append(bytes[i]); i += 1 } else { return }
                }
            }
        }
        while i < n {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                copyQuoted(byte)
            case UInt8(ascii: "-") where i + 2 < n && bytes[i + 1] == UInt8(ascii: "-") && (bytes[i + 2] == 32 || bytes[i + 2] == 9 || bytes[i + 2] == 10):
                while i < n, bytes[i] != 10 { out.append(bytes[i]); i += 1 }
            case UInt8(ascii: "#"):
                while i < n, bytes[i] != 10 { out.append(bytes[i]); i += 1 }
            case UInt8(ascii: "/") where i + 1 < n && bytes[i + 1] == UInt8(ascii: "*"):
                out.append(bytes[i]); out.append(bytes[i + 1]); i += 2
                while i < n, !(bytes[i] == UInt8(ascii: "*") && i + 1 < n && bytes[i + 1] == UInt8(ascii: "/")) { out.append(bytes[i]); i += 1 }
                if i < n { out.append(bytes[i]); out.append(bytes[i + 1]); i += 2 }
            case UInt8(ascii: "?"):
                i += 1
                var number = 0
                var digits = 0
                while i < n, bytes[i] >= 48, bytes[i] <= 57 {
                    number = number &* 10 &+ Int(bytes[i] - 48)
                    digits += 1
                    i += 1
                }
                markers.append(digits == 0 ? (markers.last.map { $0 + 1 } ?? 0) : number - 1)
                out.append(UInt8(ascii: "?"))
            default:
                out.append(byte); i += 1
            }
        }
        return (String(decoding: out, as: UTF8.self), markers)
    }
}

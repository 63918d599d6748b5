import Depot
import Foundation

/// The benchmark's record, exactly as the issue fixes it.
@Columns
struct Item: Codable, Sendable, Equatable {
    var id: Int64
    var title: String       // ~20 characters
    var notes: String       // ~60 characters
    var isCompleted: Bool
    var isFlagged: Bool
    var priority: Int?      // nil for a third
    var dueDate: Date?      // nil for half
    var listID: Int64
    var createdAt: Date
    var score: Double
}

enum Workload {
    /// `count` items, the same on every run: a small linear congruential generator, no randomness.
    static func items(_ count: Int) -> [Item] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let words = ["milk", "report", "call", "review", "garden", "invoice", "flight", "dentist", "groceries", "meeting"]
        let base = 1_767_225_600.0 // 2026-01-01T00:00:00Z
        return (1...count).map { n in
            let w1 = words[Int(next() % 10)], w2 = words[Int(next() % 10)]
            let title = String("\(w1) \(w2) #\(n)".padding(toLength: 20, withPad: ".", startingAt: 0))
            let notes = String("Remember the \(w2) for \(w1); item \(n), details follow here".padding(toLength: 60, withPad: " ", startingAt: 0))
            let micros = Double(next() % 1_000_000) / 1_000_000
            return Item(
                id: Int64(n), title: title, notes: notes, isCompleted: n % 4 == 0, isFlagged: n % 7 == 0,
                priority: n % 3 == 0 ? nil : Int(next() % 4),
                dueDate: n % 2 == 0 ? nil : Date(timeIntervalSince1970: (base + Double(next() % 31_536_000) + micros).rounded(toPlaces: 6)),
                listID: Int64(1 + next() % 50),
                createdAt: Date(timeIntervalSince1970: (base - Double(next() % 31_536_000) + micros).rounded(toPlaces: 6)),
                score: Double(next() % 100_000) / 100)
        }
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}

/// How dates are stored in a run: the engine's native form, or ISO-8601 text.
enum DateStorage: String, CaseIterable, Sendable {
    /// SQLite: REAL seconds since 1970 (it has no date type); PostgreSQL: timestamptz.
    case native
    /// ISO-8601 text, as SQLite apps usually store dates.
    case text
}

/// A small hand-written codec for dates as SQLite text, for the raw C baselines:
/// what a careful programmer writes by hand, with no Foundation formatter and no
/// allocation on the hot path. It writes the form Depot writes
/// (`2026-11-22 02:45:18.123456`: milliseconds always, microseconds when not
/// zeros, no fraction on a whole second), so both store the same text.
enum HandISO {
    /// Writes the date into `bytes` (26 bytes at least) and returns the length.
    static func write(_ date: Date, into bytes: UnsafeMutablePointer<UInt8>) -> Int {
        let total = micros(date)
        var seconds = total / 1_000_000, micros = total % 1_000_000
        if micros < 0 { micros += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400, rest = seconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let z = days + 719_468, era = (z >= 0 ? z : z - 146_096) / 146_097, doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func put(_ v: Int64, _ at: Int, _ width: Int) {
            var v = v
            for i in stride(from: at + width - 1, through: at, by: -1) { bytes[i] = UInt8(48 + v % 10); v /= 10 }
        }
        put(y, 0, 4); bytes[4] = 45; put(m, 5, 2); bytes[7] = 45; put(d, 8, 2); bytes[10] = 32
        put(rest / 3600, 11, 2); bytes[13] = 58; put(rest / 60 % 60, 14, 2); bytes[16] = 58; put(rest % 60, 17, 2)
        if micros == 0 { return 19 }
        bytes[19] = 46
        put(micros, 20, 6)
        return micros % 1000 == 0 ? 23 : 26
    }

    /// The date's microseconds since 1970, the whole seconds and the fraction scaled apart.
    static func micros(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        let whole = seconds.rounded(.down)
        return Int64(whole) * 1_000_000 + Int64(((seconds - whole) * 1_000_000).rounded())
    }

    /// Parses the form above (and `T` for the space, `Z` at the end).
    static func parse(_ p: UnsafePointer<UInt8>, _ count: Int) -> Date {
        func n(_ at: Int, _ width: Int) -> Int64 {
            var v: Int64 = 0
            for i in at..<(at + width) { v = v * 10 + Int64(p[i] &- 48) }
            return v
        }
        let y = n(0, 4), m = n(5, 2), d = n(8, 2)
        let yy = m <= 2 ? y - 1 : y, era = (yy >= 0 ? yy : yy - 399) / 400, yoe = yy - era * 400
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + n(11, 2) * 3600 + n(14, 2) * 60 + n(17, 2)
        var fraction: Int64 = 0, digits = 0
        var i = 20
        while i < count, i < 26, p[i] >= 48, p[i] <= 57 { fraction = fraction * 10 + Int64(p[i] - 48); digits += 1; i += 1 }
        while digits < 6 { fraction *= 10; digits += 1 }
        return date(micros: seconds * 1_000_000 + fraction)
    }

    /// The Date nearest to microseconds since 1970, the whole seconds and the fraction added apart.
    static func date(micros: Int64) -> Date {
        var seconds = micros / 1_000_000, fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        return Date(timeIntervalSince1970: Double(seconds) + Double(fraction) / 1_000_000)
    }

    /// The text, as a String: for baselines of APIs that take strings (PostgresNIO).
    static func format(_ date: Date) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            guard let base = buffer.baseAddress else { return "" }
            let count = write(date, into: base)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }
}

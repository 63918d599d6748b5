import Foundation

/// Depot's own ISO-8601 text codec for dates, microsecond precision, UTC.
///
/// It writes one form only, SQLite's own: `2026-11-22 02:45:18.123456`, UTC,
/// a space between date and time, no zone suffix, and the fraction of a second
/// in milliseconds, with microsecond digits only when they are not zeros
/// (`2026-11-22 02:45:18.500`), and none at all on a whole second
/// (`2026-11-22 02:45:18`). So a stored date compares and sorts as text against
/// every other stored date and against what SQLite itself writes
/// (`CURRENT_TIMESTAMP`, `datetime('now')`, `strftime('%Y-%m-%d %H:%M:%f')` off
/// the whole second): the same instant is the same text, an earlier one sorts
/// first. SQLite's date functions read it.
///
/// It reads the common forms a database may hold: a date alone, a space or a
/// `T` between date and time, minutes with or without seconds, any number of
/// fraction digits (past the sixth they must be zeros: nothing is rounded away),
/// and `Z`, `+HH`, `+HHMM` or `+HH:MM` offsets. A time without an offset is UTC,
/// as SQLite's `CURRENT_TIMESTAMP` writes it. Years run from 0001 to 9999.
public enum ISO8601 {
    /// Microseconds between 1970-01-01 and 2001-01-01.
    static let referenceOffsetMicros: Int64 = 978_307_200_000_000
    /// The first and last instants a four-digit year can name, in microseconds since 1970.
    public static let minMicros: Int64 = -62_135_596_800_000_000 // 0001-01-01T00:00:00Z
    public static let maxMicros: Int64 = 253_402_300_799_999_999 // 9999-12-31T23:59:59.999999Z

    /// The date's microseconds since 1970-01-01 UTC, rounded to the nearest
    /// microsecond; nil when the date is outside the years 0001...9999 (or not finite).
    ///
    /// The whole seconds and the fraction are scaled apart: `t * 1_000_000` in one
    /// multiplication would round by up to a quarter of a microsecond a century
    /// from 2001, enough to land on the wrong one.
    public static func microseconds(_ date: Date) -> Int64? {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < 1.0e12 else { return nil }
        let whole = seconds.rounded(.down)
        let fraction = ((seconds - whole) * 1_000_000).rounded() // exact subtraction; a product below 10⁶
        guard let wholeSeconds = Int64(exactly: whole), let fractionMicros = Int64(exactly: fraction) else { return nil }
        let micros = wholeSeconds * 1_000_000 + fractionMicros + referenceOffsetMicros
        guard micros >= minMicros, micros <= maxMicros else { return nil }
        return micros
    }

    /// Seconds since 1970 as a `Double`, nearest to the given microseconds.
    public static func secondsSince1970(microseconds: Int64) -> Double {
        var seconds = microseconds / 1_000_000
        var fraction = microseconds % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        return Double(seconds) + Double(fraction) / 1_000_000
    }

    /// The microsecond nearest to seconds since 1970, scaled without a rounding
    /// multiply; nil outside the years 0001...9999.
    public static func microseconds(secondsSince1970 seconds: Double) -> Int64? {
        guard seconds.isFinite, abs(seconds) < 1.0e12 else { return nil }
        let whole = seconds.rounded(.down)
        guard let wholeSeconds = Int64(exactly: whole), let fraction = Int64(exactly: ((seconds - whole) * 1_000_000).rounded()) else { return nil }
        let micros = wholeSeconds * 1_000_000 + fraction
        return micros >= minMicros && micros <= maxMicros ? micros : nil
    }

    /// The date nearest to the given microseconds after 1970-01-01 UTC.
    public static func date(microseconds: Int64) -> Date {
        let relative = microseconds - referenceOffsetMicros
        var seconds = relative / 1_000_000
        var fraction = relative % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        // Whole seconds are exact in a Double; one rounding, in the sum.
        return Date(timeIntervalSinceReferenceDate: Double(seconds) + Double(fraction) / 1_000_000)
    }

    /// The date that lies the given microseconds after 1970-01-01 UTC, when a
    /// `Date` holds exactly that microsecond; nil when it does not.
    ///
    /// A `Date` is a `Double` of seconds since 2001: within about 270 years of
    /// 2001 it holds every microsecond, further away only some (near year 9999,
    /// one in thirty), and `9999-12-31 23:59:59.999999` would become year 10000.
    /// Such a value is refused rather than read as a neighbouring instant.
    public static func exactDate(microseconds: Int64) -> Date? {
        guard microseconds >= minMicros, microseconds <= maxMicros else { return nil }
        let date = date(microseconds: microseconds)
        // Within 2³¹ seconds of 2001 (1932 to 2069) a Double's step is at most
        // 2⁻²² s, a quarter of a microsecond: every microsecond comes back
        // itself, and only dates further away need the round trip checked.
        let relative = microseconds &- referenceOffsetMicros
        if relative > -exactEverywhereMicros, relative < exactEverywhereMicros { return date }
        return self.microseconds(date) == microseconds ? date : nil
    }

    /// 2³¹ seconds in microseconds: the distance from 2001 within which a
    /// `Date` holds every microsecond with room to spare.
    private static let exactEverywhereMicros: Int64 = (1 << 31) * 1_000_000

    /// Formats a date; nil when it is outside the years 0001...9999, which no
    /// four-digit year can name (never a clamped, different date).
    public static func format(_ date: Date) -> String? {
        microseconds(date).map(format(microseconds:))
    }

    public static func format(microseconds micros: Int64) -> String {
        withFormatted(microseconds: micros) { String(decoding: $0, as: UTF8.self) }
    }

    /// The most bytes ``write(microseconds:into:)`` writes.
    public static let maxFormattedCount = 26

    /// Formats into a stack buffer and hands the 19 to 26 bytes to `body`: no allocation.
    ///
    /// `micros` must be within ``minMicros``...``maxMicros``.
    @inlinable
    public static func withFormatted<R>(microseconds micros: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxFormattedCount) { bytes in
            // The allocation holds maxFormattedCount bytes, so it has a base address.
            let count = write(microseconds: micros, into: bytes.baseAddress.unsafelyUnwrapped)
            return body(UnsafeBufferPointer(rebasing: bytes[0..<count]))
        }
    }

    /// Writes the date as `YYYY-MM-DD HH:MM:SS[.ffffff]` (19 to 26 bytes, the
    /// fraction trimmed to milliseconds when its last digits are zeros) at
    /// `bytes`, which has room for ``maxFormattedCount``; returns the count.
    ///
    /// Not generic, so a backend formats into a buffer it reuses at the cost of
    /// the digits alone. `micros` must be within ``minMicros``...``maxMicros``.
    public static func write(microseconds micros: Int64, into bytes: UnsafeMutablePointer<UInt8>) -> Int {
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        @inline(__always)
        func put(_ value: Int64, at offset: Int, width: Int) {
            var v = value
            var i = offset + width
            while i > offset {
                i -= 1
                let (quotient, digit) = v.quotientAndRemainder(dividingBy: 10)
                bytes[i] = UInt8(truncatingIfNeeded: 48 + digit)
                v = quotient
            }
        }
        put(year, at: 0, width: 4); bytes[4] = 45 // -
        put(month, at: 5, width: 2); bytes[7] = 45
        put(day, at: 8, width: 2); bytes[10] = 32 // space
        put(secondOfDay / 3600, at: 11, width: 2); bytes[13] = 58 // :
        put(secondOfDay / 60 % 60, at: 14, width: 2); bytes[16] = 58
        put(secondOfDay % 60, at: 17, width: 2)
        guard fraction != 0 else { return 19 }
        bytes[19] = 46 // .
        put(fraction, at: 20, width: 6)
        var end = 26
        while end > 23, bytes[end - 1] == 48 { end -= 1 } // trailing zeros past the milliseconds
        return end
    }

    /// Parses one of the accepted forms; nil when the text is not one of them.
    ///
    /// Caveat: a valid text whose microsecond a `Date` cannot hold exactly (see
    /// ``exactDate(microseconds:)``) is nil as well.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }.flatMap(exactDate(microseconds:))
    }

    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        if let micros = parseWritten(bytes) { return micros }
        return parseAny(bytes)
    }

    /// The form Depot writes (`2026-11-22 02:45:18`, then `.123` up to `.123456`),
    /// read at fixed positions: most stored dates, so it goes first. Nil for any
    /// other text, which ``parseAny(_:)`` then reads (or refuses) with the same result.
    ///
    /// The nineteen fixed bytes are read as three 8-byte words and checked
    /// eight at a time (each digit a digit, each separator its byte), so the
    /// common case costs about what a loop that trusts the text costs.
    @inline(__always)
    public static func parseWritten(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let (seconds, fraction) = writtenParts(bytes) else { return nil }
        return seconds &* 1_000_000 &+ fraction
    }

    /// A date read from text, as ``parse(bytes:)`` and ``exactDate(microseconds:)``
    /// read it together: the same date, and nil for the same texts.
    ///
    /// The form Depot writes is turned into a date straight from its whole
    /// seconds and microseconds, without the microsecond count the two steps
    /// make and take apart again.
    @inline(__always)
    public static func parseDate(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard let (seconds, fraction) = writtenParts(bytes) else {
            return parseAny(bytes).flatMap(exactDate(microseconds:))
        }
        // The written form's years 0001...9999 are always in range; within
        // 2³¹ seconds of 2001 every microsecond is exact (``exactDate(microseconds:)``).
        let relative = seconds &- referenceOffsetSeconds
        if relative > -exactEverywhereSeconds, relative < exactEverywhereSeconds &- 1 {
            return Date(timeIntervalSinceReferenceDate: Double(relative) + Double(fraction) / 1_000_000)
        }
        return exactDate(microseconds: seconds &* 1_000_000 &+ fraction)
    }

    private static let referenceOffsetSeconds: Int64 = 978_307_200
    private static let exactEverywhereSeconds: Int64 = 1 << 31

    /// The written form's whole seconds since 1970 and its microseconds, or
    /// nil for any other text (see ``parseWritten(_:)``).
    @inline(__always)
    static func writtenParts(_ bytes: UnsafeBufferPointer<UInt8>) -> (seconds: Int64, fraction: Int64)? {
        let n = bytes.count
        guard n == 19 || (n >= 23 && n <= 26), let p = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(p)
        // "YYYY-MM-", "DD HH:MM", "HH:MM:SS" (the last overlaps the second), little-endian.
        let w0 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let w1 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let w2 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 11, as: UInt64.self))
        // Separators: byte 4 and 7 of w0 are "-", byte 2 of w1 is " ", bytes 2 and 5 of w2 are ":".
        guard w0 & 0xFF00_00FF_0000_0000 == 0x2D00_002D_0000_0000,
              w1 & 0x0000_0000_00FF_0000 == 0x0000_0000_0020_0000,
              w2 & 0x0000_FF00_00FF_0000 == 0x0000_3A00_003A_0000,
              n == 19 || p[19] == 46 else { return nil }
        // Digits: the other bytes, with the separators (and, in w1, the bytes
        // w2 reads again) set to "0".
        guard allDigits((w0 & 0x00FF_FF00_FFFF_FFFF) | 0x3000_0030_0000_0000),
              allDigits((w1 & 0x0000_0000_0000_FFFF) | 0x3030_3030_3030_0000),
              allDigits((w2 & 0xFFFF_00FF_FF00_FFFF) | 0x0000_3000_0030_0000) else { return nil }
        @inline(__always) func digit(_ word: UInt64, _ byte: UInt64) -> Int64 {
            Int64(truncatingIfNeeded: (word >> (byte &* 8)) & 0x0F)
        }
        @inline(__always) func two(_ word: UInt64, _ byte: UInt64) -> Int64 {
            digit(word, byte) &* 10 &+ digit(word, byte &+ 1)
        }
        let year = two(w0, 0) &* 100 &+ two(w0, 2)
        let month = two(w0, 5), day = two(w1, 0)
        let hour = two(w2, 0), minute = two(w2, 3), second = two(w2, 6)
        guard year >= 1, month >= 1, month <= 12, day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60 else { return nil }
        var fraction: Int64 = 0
        if n > 19 {
            for at in 20..<n {
                let c = p[at] &- 48
                guard c < 10 else { return nil }
                fraction = fraction &* 10 &+ Int64(c)
            }
            for _ in n..<26 { fraction &*= 10 }
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return (days &* 86_400 &+ hour &* 3600 &+ minute &* 60 &+ second, fraction)
    }

    /// Whether each of the eight bytes of `word` is an ASCII digit. A byte
    /// below "0" sets its top bit when "0" is taken away, one above "9" when
    /// 0x46 is added; a valid digit neither borrows nor carries, so only an
    /// invalid byte can disturb its neighbour, and it is caught itself.
    @inline(__always)
    static func allDigits(_ word: UInt64) -> Bool {
        ((word &- 0x3030_3030_3030_3030) | (word &+ 0x4646_4646_4646_4646)) & 0x8080_8080_8080_8080 == 0
    }

    /// Every accepted form, read character by character.
    public static func parseAny(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        let n = bytes.count
        func digits(_ count: Int) -> Int64? {
            guard i + count <= n else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let c = bytes[i]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
                i += 1
            }
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < n, bytes[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(45), let month = digits(2), expect(45), let day = digits(2),
              year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var secondOfDay: Int64 = 0
        var fraction: Int64 = 0
        var offsetSeconds: Int64 = 0
        if i < n {
            guard bytes[i] == 84 || bytes[i] == 116 || bytes[i] == 32 else { return nil } // T t space
            i += 1
            guard let hour = digits(2), expect(58), let minute = digits(2), hour < 24, minute < 60 else { return nil }
            var second: Int64 = 0
            if expect(58) {
                guard let s = digits(2), s < 60 else { return nil }
                second = s
                if expect(46) {
                    var count = 0
                    while i < n, bytes[i] >= 48, bytes[i] <= 57 {
                        if count < 6 {
                            fraction = fraction * 10 + Int64(bytes[i] - 48)
                        } else if bytes[i] != 48 {
                            return nil // finer than a microsecond: refuse rather than round
                        }
                        count += 1
                        i += 1
                    }
                    guard count > 0 else { return nil }
                    if count < 6 { for _ in count..<6 { fraction *= 10 } }
                }
            }
            secondOfDay = hour * 3600 + minute * 60 + second
            if i < n {
                switch bytes[i] {
                case 90, 122: i += 1 // Z z
                case 43, 45: // + -
                    let sign: Int64 = bytes[i] == 45 ? -1 : 1
                    i += 1
                    guard let oh = digits(2), oh < 24 else { return nil }
                    var om: Int64 = 0
                    if i < n {
                        _ = expect(58)
                        guard let m = digits(2), m < 60 else { return nil }
                        om = m
                    }
                    offsetSeconds = sign * (oh * 3600 + om * 60)
                default: return nil
                }
            }
            guard i == n else { return nil }
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return (days * 86_400 + secondOfDay - offsetSeconds) * 1_000_000 + fraction
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a date in the proleptic Gregorian calendar
    /// (Howard Hinnant's days-from-civil), for a backend that reads an engine's
    /// date as year, month and day: `daysFromCivil(year: 1970, month: 1, day: 2)` is 1.
    ///
    /// Caveat: exact for years -10⁹...10⁹; `month` must be 1...12 and `day`
    /// 1...31 (a day past the month's end counts on into the next).
    @inline(__always)
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The year, month (1...12) and day (1...31) of a count of days since
    /// 1970-01-01, in the proleptic Gregorian calendar: the inverse of
    /// ``daysFromCivil(year:month:day:)``.
    public static func civil(fromDays z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

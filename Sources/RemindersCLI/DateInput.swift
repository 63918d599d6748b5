import Foundation
import Reminders

/// Due dates as people type them, in the command's time zone.
///
/// A day (`today`, `tomorrow`, `friday`, `next friday`, `in 3 days`, `Dec 24`,
/// `24/12/2026`, `2026-12-24`) with an optional time (`9am`, `17:00`, `noon`,
/// `at 5pm`), a time alone, a span from now (`in 30 minutes`, `in 2 hours`),
/// or ISO-8601. A day without a time is at 9:00.
enum DateInput {
    /// The forms `parse` reads, for the error that lists them.
    static let forms = "today, tomorrow, yesterday, tonight, a weekday (friday: the next one), next friday (next week's), "
        + "in 30 minutes, in 2 hours, in 3 days, in 2 weeks, Dec 24, 24 December 2026, 24/12/2026 (in your locale's order), "
        + "any day with a time (tomorrow 9am, friday at 17:00, Dec 24 noon), a time alone (9am: the next 9am), none, "
        + "2026-12-24, 2026-12-24 17:00, 2026-12-24T17:00, or ISO-8601 with Z or an offset (2026-12-24T17:00:00+01:00)"

    /// What a day without a time means, and `tonight`.
    static let defaultTime = (hour: 9, minute: 0), tonight = (hour: 20, minute: 0)

    /// A time of day as people type it: `17:00`, `17:00:30`, `9am`, `5:30pm`,
    /// `12am` (midnight), `noon`, `midnight`; nil otherwise.
    static func timeOfDay(_ word: String) -> (hour: Int, minute: Int, second: Int)? {
        switch word {
        case "noon", "midday": return (12, 0, 0)
        case "midnight": return (0, 0, 0)
        default: break
        }
        var text = word
        var meridiem: String?
        for suffix in ["am", "pm", "a.m.", "p.m."] where text.hasSuffix(suffix) {
            meridiem = String(suffix.prefix(1))
            text = String(text.dropLast(suffix.count))
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count),
              parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              var hour = Int(parts[0]) else { return nil }
        let minute = parts.count >= 2 ? Int(parts[1]) ?? -1 : 0
        let second = parts.count == 3 ? Int(parts[2]) ?? -1 : 0
        guard (0...59).contains(minute), (0...59).contains(second) else { return nil }
        if let meridiem {
            guard (1...12).contains(hour), parts.count <= 2 else { return nil }
            hour = hour % 12 + (meridiem == "p" ? 12 : 0)
        } else {
            // A bare number is a day or a count, not an hour: 17 alone is not a time.
            guard parts.count >= 2, (0...23).contains(hour) else { return nil }
        }
        return (hour, minute, second)
    }

    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    static let months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]

    /// The month a word names, 1 to 12: its whole name or its first three letters (`sept` too).
    static func month(_ word: String) -> Int? {
        let word = word.hasSuffix(".") ? String(word.dropLast()) : word
        if word == "sept" { return 9 }
        return months.firstIndex { $0 == word || (word.count == 3 && $0.hasPrefix(word)) }.map { $0 + 1 }
    }

    /// The locale whose order numeric dates follow: `LC_ALL`, `LC_TIME` or
    /// `LANG` as POSIX orders them (`en_GB.UTF-8` reads 24/12 as the 24th of
    /// December, `en_US.UTF-8` and `C` 12/24), else the system's.
    static var userLocale: Locale {
        let environment = ProcessInfo.processInfo.environment
        for name in ["LC_ALL", "LC_TIME", "LANG"] {
            guard let value = environment[name], !value.isEmpty else { continue }
            let identifier = value.split(separator: ".").first.map(String.init) ?? value
            return Locale(identifier: identifier == "C" || identifier == "POSIX" ? "en_US_POSIX" : identifier)
        }
        return .current
    }

    /// Whether the locale writes the day before the month (24/12/2026).
    static func dayFirst(_ locale: Locale) -> Bool {
        let pattern = DateFormatter.dateFormat(fromTemplate: "dMy", options: 0, locale: locale) ?? "M/d/y"
        guard let day = pattern.firstIndex(of: "d"), let month = pattern.firstIndex(of: "M") else { return false }
        return day < month
    }

    /// A due date as people type it, at 9:00 in `timeZone` unless a time is given; nil for `none`.
    /// A date outside the years 0001 to 9999 (which Depot stores) is refused.
    static func parse(_ text: String, timeZone: TimeZone, now: Date, locale: Locale = userLocale) throws -> Date? {
        guard let date = try parseAnyYear(text, timeZone: timeZone, now: now, locale: locale) else { return nil }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? timeZone
        let components = utc.dateComponents([.era, .year], from: date)
        guard components.era == 1, let year = components.year, (1...9999).contains(year) else {
            throw RemindersError.invalidInput("cannot read the date \"\(text)\": the year must be from 0001 to 9999")
        }
        return date
    }

    private static func parseAnyYear(_ text: String, timeZone: TimeZone, now: Date, locale: Locale) throws -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let today = calendar.startOfDay(for: now)
        // Full ISO-8601 first: its letters (T, Z) are not words.
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        // ISO-8601 with Z or an offset but without seconds: 2026-12-24T17:00Z, 2026-12-24T17:00+01:00.
        if let match = text.firstMatch(of: /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(Z|[+-]\d{2}:\d{2})$/),
           let date = try? Date(String(match.1) + ":00" + String(match.2), strategy: Date.ISO8601FormatStyle()) {
            return date
        }
        var words = text.lowercased().replacingOccurrences(of: ",", with: " ")
            .split(whereSeparator: \.isWhitespace).map(String.init)
        // 2026-12-24T17:00: a day and a time.
        if words.count == 1, let t = words[0].firstIndex(of: "t"), words[0].firstMatch(of: /^\d{4}-\d{2}-\d{2}t/) != nil {
            words = [String(words[0][..<t]), String(words[0][words[0].index(after: t)...])]
        }
        // "5 pm": one word.
        if words.count >= 2, ["am", "pm"].contains(words[words.count - 1]), words[words.count - 2].allSatisfy({ $0.isNumber || $0 == ":" }) {
            words[words.count - 2] += words.removeLast()
        }
        if words.isEmpty || words == ["none"] { return nil }
        // A span from now: in 30 minutes, in 2 hours (no time of day goes with it).
        if words.count == 3, words[0] == "in", ["minute", "minutes", "min", "mins", "hour", "hours"].contains(words[2]) {
            guard let count = words[1] == "a" || words[1] == "an" ? 1 : Int(words[1]), (0...100_000).contains(count) else { throw invalid(text) }
            let seconds = words[2].hasPrefix("h") ? count * 3600 : count * 60
            return now.addingTimeInterval(TimeInterval(seconds))
        }
        // A time after the day (tomorrow 9am, friday at 17:00), or alone (9am, at noon).
        var time: (hour: Int, minute: Int, second: Int)?
        if let last = words.last, let typed = timeOfDay(last) {
            time = typed
            words.removeLast()
            if words.last == "at" { words.removeLast() }
        }
        if words == ["tonight"] {
            words = ["today"]
            time = time ?? (tonight.hour, tonight.minute, 0)
        }
        func at(_ day: Date) throws -> Date {
            let (hour, minute, second) = time ?? (defaultTime.hour, defaultTime.minute, 0)
            guard let date = calendar.date(bySettingHour: hour, minute: minute, second: second, of: day),
                  calendar.component(.hour, from: date) == hour else {
                // A time a daylight-saving change skips (2:30 on the spring-forward night) names no instant.
                throw RemindersError.invalidInput("cannot read the date \"\(text)\": that time does not exist on that day in \(timeZone.identifier) (the clocks change)")
            }
            return date
        }
        func daysFromToday(_ days: Int) throws -> Date {
            guard let day = calendar.date(byAdding: .day, value: days, to: today) else { throw invalid(text) }
            return try at(day)
        }
        switch words {
        case []:
            // A time alone: the next such time, today or tomorrow (9am said at 10am is tomorrow's).
            let todays = try daysFromToday(0)
            return todays > now ? todays : try daysFromToday(1)
        case ["today"]: return try daysFromToday(0)
        case ["tomorrow"]: return try daysFromToday(1)
        case ["yesterday"]: return try daysFromToday(-1)
        case ["next", "week"]: return try daysFromToday(7)
        case _ where words.count <= 2 && (words.count == 1 || words[0] == "next") && weekdays.contains(words[words.count - 1]):
            guard let wanted = weekdays.firstIndex(of: words[words.count - 1]) else { throw invalid(text) }
            let current = calendar.component(.weekday, from: today) - 1
            // The next day with that name, never today.
            let coming = (wanted - current + 6) % 7 + 1
            if words.count == 1 { return try daysFromToday(coming) }
            // Next week's: that day of next week (weeks start on Monday); said on that very
            // weekday, the one after the coming one, so `next saturday` is never `saturday`.
            let mondayBased = { (day: Int) in (day + 6) % 7 }
            let nextWeeks = mondayBased(wanted) - mondayBased(current) + 7
            return try daysFromToday(wanted == current ? coming + 7 : nextWeeks)
        case _ where words.count == 3 && words[0] == "in":
            guard let count = words[1] == "a" || words[1] == "an" ? 1 : Int(words[1]), (0...3650).contains(count) else { throw invalid(text) }
            switch words[2] {
            case "day", "days": return try daysFromToday(count)
            case "week", "weeks": return try daysFromToday(count * 7)
            default: throw invalid(text)
            }
        default: break
        }
        if let day = try calendarDay(words, text: text, calendar: calendar, today: today, locale: locale) {
            return try at(day)
        }
        throw invalid(text)
    }

    /// A day written as a date: `2026-12-24`, `Dec 24`, `24 December 2026`, `24/12/2026`, `24.12.`;
    /// nil when the words are no date. A date without a year is its next occurrence, today included.
    private static func calendarDay(_ words: [String], text: String, calendar: Calendar, today: Date, locale: Locale) throws -> Date? {
        var year: Int?, month: Int?, day: Int?
        func number(_ word: String) -> Int? {
            let digits = word.hasSuffix("st") || word.hasSuffix("nd") || word.hasSuffix("rd") || word.hasSuffix("th") ? String(word.dropLast(2)) : word
            return digits.count <= 4 && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? Int(digits) : nil
        }
        switch words.count {
        case 1 where words[0].firstMatch(of: /^\d{4}-\d{2}-\d{2}$/) != nil:
            let parts = words[0].split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3 else { return nil }
            (year, month, day) = (parts[0], parts[1], parts[2])
            guard let year, (1...9999).contains(year) else {
                throw RemindersError.invalidInput("cannot read the date \"\(text)\": the year must be from 0001 to 9999")
            }
        case 1 where words[0].contains("/") || words[0].contains("."):
            let parts = words[0].split(separator: words[0].contains("/") ? "/" : ".", omittingEmptySubsequences: true).map(String.init)
            guard (2...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return nil }
            let numbers = parts.compactMap { Int($0) }
            guard numbers.count == parts.count else { return nil }
            if parts[0].count == 4 {
                // 2026/12/24: year first, as ISO.
                guard numbers.count == 3 else { return nil }
                (year, month, day) = (numbers[0], numbers[1], numbers[2])
            } else {
                (day, month) = dayFirst(locale) ? (numbers[0], numbers[1]) : (numbers[1], numbers[0])
                // Only the other order makes a date (24/12 where the month comes first): that one.
                if let m = month, let d = day, m > 12, (1...12).contains(d) { (day, month) = (m, d) }
                if numbers.count == 3 {
                    guard parts[2].count == 4 else {
                        throw RemindersError.invalidInput("cannot read the date \"\(text)\": write the year with four digits")
                    }
                    year = numbers[2]
                }
            }
        case 2, 3:
            // Dec 24 (2026), 24 December (2026), December 24th.
            if let m = Self.month(words[0]), let d = number(words[1]), words[1].count <= 4 {
                (month, day) = (m, d)
            } else if let d = number(words[0]), let m = Self.month(words[1]) {
                (month, day) = (m, d)
            } else {
                return nil
            }
            if words.count == 3 {
                guard let y = number(words[2]), words[2].count == 4 else { return nil }
                year = y
            }
        default:
            return nil
        }
        guard let month, let day, (1...12).contains(month), (1...31).contains(day) else { throw invalid(text) }
        func date(in year: Int) -> Date? {
            guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
                  calendar.component(.day, from: date) == day, calendar.component(.month, from: date) == month else { return nil }
            return date
        }
        if let year {
            guard let found = date(in: year) else { throw invalid(text) }
            return found
        }
        // No year: this year's if it is today or later, else next year's (29 February: the next one there is).
        let thisYear = calendar.component(.year, from: today)
        for candidate in thisYear...thisYear + 8 {
            if let found = date(in: candidate), found >= today { return found }
        }
        throw invalid(text)
    }

    static func invalid(_ text: String) -> RemindersError {
        .invalidInput("cannot read the date \"\(text)\"; accepted: \(forms)")
    }
}

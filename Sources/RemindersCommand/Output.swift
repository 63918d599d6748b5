import Depot
import Foundation
import Reminders
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Aligned, human-readable output; colour only on a terminal (and never with NO_COLOR).
enum Output {
    static let useColor: Bool = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    enum Style: String {
        case bold = "1", dim = "2", red = "31", orange = "33", blue = "34", green = "32"
    }

    static func styled(_ text: String, _ style: Style?) -> String {
        guard useColor, let style, !text.isEmpty else { return text }
        return "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m"
    }

    /// A colour swatch for a list's 0xRRGGBBAA colour, on 24-bit terminals.
    static func swatch(_ color: Int64) -> String {
        guard useColor else { return "" }
        let r = (color >> 24) & 0xFF, g = (color >> 16) & 0xFF, b = (color >> 8) & 0xFF
        return "\u{1B}[38;2;\(r);\(g);\(b)m●\u{1B}[0m "
    }

    static func hex(_ color: Int64) -> String { String(format: "#%08llX", color) }

    static func error(_ error: any Error) {
        let message: String
        switch error {
        case let error as RemindersError: message = error.description
        case let error as DatabaseError: message = error.description
        default: message = "\(error)"
        }
        FileHandle.standardError.write(Data("reminders: \(message)\n".utf8))
    }

    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static func heading(_ text: String, color: Int64?) {
        print((color.map(swatch) ?? "") + styled(text, .bold))
    }

    /// Columns padded to their widest cell, measured in terminal columns: a wide
    /// (CJK) character or an emoji takes two, a combining mark none, and colour
    /// escapes are added after measuring.
    static func table(_ rows: [[(String, Style?)]]) {
        guard let columns = rows.map(\.count).max() else { return }
        var widths = Array(repeating: 0, count: columns)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], displayWidth(cell.0)) } }
        for row in rows {
            let line = row.enumerated().map { i, cell in
                let padding = i == row.count - 1 ? "" : String(repeating: " ", count: widths[i] - displayWidth(cell.0))
                return styled(cell.0, cell.1) + padding
            }.joined(separator: "  ")
            print(line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
        }
    }

    static func home(_ home: HomeScreen) {
        table([
            [("Today", .bold), ("\(home.today)", nil), ("Scheduled", .bold), ("\(home.scheduled)", nil)],
            [("All", .bold), ("\(home.all)", nil), ("Flagged", .bold), ("\(home.flagged)", nil)],
            [("Completed", .bold), ("\(home.completed)", nil), ("Overdue", .bold), ("\(home.overdue)", home.overdue > 0 ? .red : nil)],
        ])
        print("")
        heading("My Lists", color: nil)
        if home.lists.isEmpty { print(styled("  (no lists yet: reminders lists add TITLE)", .dim)) }
        lists(home.lists)
        if !home.tags.isEmpty {
            print("")
            heading("Tags", color: nil)
            print(home.tags.map { "#\($0.tag.title) (\($0.reminderCount))" }.joined(separator: "  "))
        }
    }

    /// How many terminal columns the text takes.
    static func displayWidth(_ text: String) -> Int {
        text.reduce(0) { $0 + displayWidth($1) }
    }

    /// Two for an emoji or an East Asian wide character, none for a control or
    /// format character, one otherwise. A character is a grapheme cluster:
    /// combining marks are inside it and add nothing.
    static func displayWidth(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) || first.properties.isEmojiPresentation { return 2 }
        switch first.properties.generalCategory {
        case .control, .format, .nonspacingMark, .enclosingMark: return 0
        default: break
        }
        return wideRanges.contains { $0.contains(first.value) } ? 2 : 1
    }

    /// East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth W and F).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD,
    ]

    static func lists(_ lists: [ListSummary]) {
        table(lists.map { summary in
            [(swatch(summary.list.color) + summary.list.title, nil), ("\(summary.incompleteCount)", nil),
             ("id \(summary.list.id ?? 0)", .dim)]
        })
    }

    static func reminders(_ details: [ReminderDetail], timeZone: TimeZone, now: Date, showList: Bool) {
        if details.isEmpty {
            print(styled("  (none)", .dim))
            return
        }
        let today = dayStart(now, timeZone)
        table(details.map { detail in
            let r = detail.reminder
            let overdue = !r.isCompleted && (r.dueDate.map { $0 < today } ?? false)
            var row: [(String, Style?)] = [
                ("\(r.id ?? 0)", .dim),
                (r.isCompleted ? "✓" : "○", r.isCompleted ? .green : nil),
                (r.priority.marks + (r.isFlagged ? "⚑" : ""), r.isFlagged ? .orange : .red),
                (r.title, r.isCompleted ? .dim : nil),
                (r.dueDate.map { format($0, timeZone) } ?? "", overdue ? .red : .blue),
            ]
            if showList { row.append((detail.listTitle, .dim)) }
            row.append((detail.tags.map { "#" + $0 }.joined(separator: " "), .dim))
            return row
        })
    }

    static func dayStart(_ date: Date, _ timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.startOfDay(for: date)
    }

    static func format(_ date: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}

/// Due dates as people type them, in the command's time zone.
enum DateInput {
    /// The forms `parse` reads, for the error that lists them.
    static let forms = "today, tomorrow, yesterday, a weekday (friday: the next one), next friday, in 3 days, in 2 weeks, none, "
        + "2026-12-24 (9:00), 2026-12-24 17:00, 2026-12-24T17:00, or ISO-8601 with Z or an offset (2026-12-24T17:00:00+01:00)"

    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// A due date as people type it, at 9:00 in `timeZone` unless a time is given; nil for `none`.
    static func parse(_ text: String, timeZone: TimeZone, now: Date) throws -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let today = calendar.startOfDay(for: now)
        func nineOClock(daysFromToday days: Int) throws -> Date {
            guard let day = calendar.date(byAdding: .day, value: days, to: today),
                  let time = calendar.date(byAdding: .hour, value: 9, to: day) else { throw invalid(text) }
            return time
        }
        let words = text.lowercased().split(whereSeparator: \.isWhitespace).map(String.init)
        switch words {
        case [], ["none"]: return nil
        case ["today"]: return try nineOClock(daysFromToday: 0)
        case ["tomorrow"]: return try nineOClock(daysFromToday: 1)
        case ["yesterday"]: return try nineOClock(daysFromToday: -1)
        case ["next", "week"]: return try nineOClock(daysFromToday: 7)
        case _ where words.count <= 2 && (words.count == 1 || words[0] == "next") && weekdays.contains(words[words.count - 1]):
            // The next day with that name, never today.
            guard let wanted = weekdays.firstIndex(of: words[words.count - 1]) else { throw invalid(text) }
            let current = calendar.component(.weekday, from: today) - 1
            let ahead = (wanted - current + 6) % 7 + 1
            return try nineOClock(daysFromToday: ahead)
        case _ where words.count == 3 && words[0] == "in":
            guard let count = Int(words[1]), (0...3650).contains(count) else { throw invalid(text) }
            switch words[2] {
            case "day", "days": return try nineOClock(daysFromToday: count)
            case "week", "weeks": return try nineOClock(daysFromToday: count * 7)
            default: throw invalid(text)
            }
        default: break
        }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        // ISO-8601 with Z or an offset but without seconds: 2026-12-24T17:00Z, 2026-12-24T17:00+01:00.
        if let match = text.firstMatch(of: /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(Z|[+-]\d{2}:\d{2})$/),
           let date = try? Date(String(match.1) + ":00" + String(match.2), strategy: Date.ISO8601FormatStyle()) {
            return date
        }
        let scanner = text.replacingOccurrences(of: "T", with: " ")
        let parts = scanner.split(separator: " ")
        let dateParts = parts.first?.split(separator: "-").compactMap { Int($0) } ?? []
        if parts.count <= 2, dateParts.count == 3, parts.first?.count == 10 {
            var components = DateComponents(year: dateParts[0], month: dateParts[1], day: dateParts[2], hour: 9, minute: 0)
            if parts.count == 2 {
                let time = parts[1].split(separator: ":").compactMap { Int($0) }
                guard (2...3).contains(time.count), parts[1].allSatisfy({ $0.isNumber || $0 == ":" }) else { throw invalid(text) }
                components.hour = time[0]
                components.minute = time[1]
                components.second = time.count == 3 ? time[2] : 0
            }
            guard let date = calendar.date(from: components),
                  calendar.component(.day, from: date) == dateParts[2], calendar.component(.month, from: date) == dateParts[1],
                  calendar.component(.hour, from: date) == components.hour, calendar.component(.minute, from: date) == components.minute else {
                throw invalid(text)
            }
            return date
        }
        throw invalid(text)
    }

    static func invalid(_ text: String) -> RemindersError {
        .invalidInput("cannot read the date \"\(text)\"; accepted: \(forms)")
    }
}

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

    static func hex(_ color: Int64) -> String { ListColor.hex(color) }

    /// Whether errors are printed whole (`--verbose`): with the SQL and the engine's detail.
    static let verbose = CommandLine.arguments.contains("--verbose")

    /// One line on stderr: what went wrong, without SQL (the library's whole error with `--verbose`).
    static func error(_ error: any Error) {
        let message: String
        switch error {
        case let error as RemindersError: message = error.description
        case let error as DatabaseError where verbose: message = error.description
        case let error as DatabaseError:
            message = "\(error.kind.rawValue) error" + (error.engineCode.map { " [\($0)]" } ?? "") + ": " + error.message
                + (error.column.map { " (column \($0))" } ?? "")
        default: message = "\(error)"
        }
        let line = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        FileHandle.standardError.write(Data("reminders: \(safe(line))\n".utf8))
    }

    static func json<T: Encodable>(_ value: T) throws {
        let encoder = RemindersJSON.encoder(pretty: true)
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    static func heading(_ text: String, color: Int64?) {
        print((color.map(swatch) ?? "") + styled(cell(text, maxWidth: maxCellWidth), .bold))
    }

    /// The widest a cell may be drawn: the terminal's width (less room for the
    /// other columns), or 120 columns when the output is not a terminal. The
    /// full text is in `detail` and `--json`.
    static let maxCellWidth: Int = {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return max(20, Int(size.ws_col) - 40)
        }
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init), columns > 0 {
            return max(20, columns - 40)
        }
        return 120
    }()

    /// How many rows of a listing fit the terminal under its heading and the
    /// line that says how many more there are; nil when the output is not a
    /// terminal (every row is printed).
    static let screenRows: Int? = {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else {
            return nil
        }
        return max(5, Int(size.ws_row) - 4)
    }()

    /// The line under a listing cut short: how many rows it left out, and how to see them.
    ///
    /// With `next` (a page read by keyset), the line gives its cursor for
    /// `--after`; past the first page the total is not counted.
    static func more(shown: Int, of total: Int?, next: PageCursor? = nil) {
        let after = next.map { "--after \($0.token) for the next page, " } ?? ""
        if let total {
            guard total > shown else { return }
            print(styled("  … and \(total - shown) more (\(after)--limit N shows N, --all every one)", .dim))
        } else if next != nil {
            print(styled("  … more (\(after)--all every one)", .dim))
        }
    }

    /// Text as a table cell: on one line, with nothing a terminal would obey,
    /// at most `maxWidth` columns wide (cut with an ellipsis). Linear in what
    /// is drawn: a 1 MB title costs no more than its first `maxWidth` columns.
    ///
    /// Newlines and tabs become spaces; other control characters, escape
    /// sequences' ESC and the invisible characters that reorder a line
    /// (bidirectional overrides and isolates) are shown as `\u{…}`.
    static func cell(_ text: String, maxWidth: Int) -> String {
        // Most cells are printable ASCII: one column a byte, nothing to escape, no grapheme to break.
        if isPrintableASCII(text) {
            let count = text.utf8.count
            return count <= maxWidth ? text : String(decoding: text.utf8.prefix(max(0, maxWidth - 1)), as: UTF8.self) + "…"
        }
        var result = ""
        var width = 0
        for character in text {
            let piece = visible(character)
            let pieceWidth = displayWidth(piece)
            if width + pieceWidth > maxWidth {
                // Room for the ellipsis: drop what no longer fits before it.
                while width + 1 > maxWidth, let last = result.popLast() { width -= displayWidth(last) }
                return result + "…"
            }
            result += piece
            width += pieceWidth
        }
        return result
    }

    /// Text of any length, made safe for a terminal as a cell is, and not cut.
    /// Works on Unicode scalars, without grapheme breaking: a megabyte of notes
    /// costs one pass.
    /// A row's number in this store; `?` for a row the store has not numbered
    /// (written by raw SQL past the numbering trigger), never a made-up 0.
    static func number(_ number: Int64?) -> String {
        number.map(String.init) ?? "?"
    }

    static func safe(_ text: String) -> String {
        var text = text
        // Bytes, not scalars: a megabyte of text is scanned in a few milliseconds even in a debug build.
        return text.withUTF8 { utf8 -> String in
            var index = 0
            while index < utf8.count, unsafeLength(utf8, index) == 0 { index += 1 }
            guard index < utf8.count else { return String(decoding: utf8, as: UTF8.self) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(utf8.count + 64)
            bytes.append(contentsOf: utf8[..<index])
            while index < utf8.count {
                let length = unsafeLength(utf8, index)
                if length == 0 {
                    bytes.append(utf8[index])
                    index += 1
                    continue
                }
                let byte = utf8[index]
                if byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    bytes.append(0x20)
                } else {
                    let scalar = String(decoding: utf8[index..<index + length], as: UTF8.self).unicodeScalars.first?.value ?? 0
                    bytes.append(contentsOf: ("\\u{" + String(scalar, radix: 16, uppercase: true) + "}").utf8)
                }
                index += length
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The length in bytes of the unsafe scalar (``isUnsafe(_:)``) that starts
    /// at `index`, or 0: C0 and DEL are one byte; C1 (C2 80–9F), U+061C (D8 9C),
    /// U+200E–200F and U+202A–202E (E2 80 …), U+2066–2069 (E2 81 A6–A9) more.
    private static func unsafeLength(_ utf8: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int {
        let byte = utf8[index]
        if byte < 0x20 || byte == 0x7F { return 1 }
        guard byte >= 0xC2, index + 1 < utf8.count else { return 0 }
        let next = utf8[index + 1]
        switch byte {
        case 0xC2: return (0x80...0x9F).contains(next) ? 2 : 0
        case 0xD8: return next == 0x9C ? 2 : 0
        case 0xE2:
            guard index + 2 < utf8.count else { return 0 }
            let last = utf8[index + 2]
            if next == 0x80, last == 0x8E || last == 0x8F || (0xAA...0xAE).contains(last) { return 3 }
            if next == 0x81, (0xA6...0xA9).contains(last) { return 3 }
            return 0
        default: return 0
        }
    }

    /// A character as it may reach a terminal.
    private static func visible(_ character: Character) -> String {
        if character == "\n" || character == "\r\n" || character == "\r" || character == "\t" { return " " }
        guard character.unicodeScalars.contains(where: isUnsafe) else { return String(character) }
        return character.unicodeScalars.map { isUnsafe($0) ? "\\u{" + String($0.value, radix: 16, uppercase: true) + "}" : String($0) }.joined()
    }

    /// C0 and C1 controls, DEL, and the bidirectional formatting characters.
    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The terminal's width in columns: the output's when it is a terminal,
    /// else `COLUMNS` when set; nil otherwise (a pipe gets whole rows).
    static let terminalColumns: Int? = {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
    }()

    /// Columns padded to their widest cell, measured in terminal columns: a wide
    /// (CJK) character or an emoji takes two, a combining mark none; colour
    /// escapes take none. Every cell is made safe and cut to the terminal first.
    ///
    /// A row wider than the terminal is cut as a whole: the columns in
    /// `giveWay` narrow in that order, each to its minimum (0 drops it), then
    /// the widest of the rest, so no line is wider than the terminal.
    static func table(_ rows: [[(String, Style?)]], leading: [String] = [], giveWay: [(column: Int, minimum: Int)] = []) {
        guard let columns = rows.map(\.count).max() else { return }
        var cells = rows.map { row in row.map { (text: cell($0.0, maxWidth: maxCellWidth), style: $0.1) } }
        let leadWidths = leading.map(displayWidth)
        var measured = cells.map { row in row.map { displayWidth($0.text) } }
        for (index, width) in leadWidths.enumerated() where index < measured.count && !measured[index].isEmpty { measured[index][0] += width }
        var widths = Array(repeating: 0, count: columns)
        for row in measured { for (i, width) in row.enumerated() { widths[i] = max(widths[i], width) } }
        if let terminal = terminalColumns {
            let limits = fitted(widths, into: terminal, giveWay: giveWay)
            for r in cells.indices {
                for c in cells[r].indices where limits[c] < widths[c] {
                    let lead = c == 0 && r < leadWidths.count ? leadWidths[r] : 0
                    cells[r][c].text = limits[c] == 0 ? "" : cell(cells[r][c].text, maxWidth: max(1, limits[c] - lead))
                    measured[r][c] = cells[r][c].text.isEmpty ? 0 : displayWidth(cells[r][c].text) + lead
                }
            }
            widths = limits
        }
        // What leads a row's first cell (a list's colour swatch) is Depot's own, already safe.
        for (index, lead) in leading.enumerated() where index < cells.count && !cells[index].isEmpty {
            cells[index][0].text = lead + cells[index][0].text
        }
        for (row, rowWidths) in zip(cells, measured) {
            var line = ""
            var pending = 0
            for (i, cell) in row.enumerated() where widths[i] > 0 {
                // Padding is written only before something visible, so no line ends in spaces.
                if !cell.text.isEmpty {
                    line += String(repeating: " ", count: pending) + styled(cell.text, cell.style)
                    pending = 0
                }
                pending += (i == row.count - 1 ? 0 : max(0, widths[i] - rowWidths[i]) + 2)
            }
            print(line)
        }
    }

    /// Column widths that fit `terminal` columns (two spaces between columns):
    /// the `giveWay` columns narrow first, in order, to their minimums, then the
    /// widest of all, down to one column each.
    static func fitted(_ widths: [Int], into terminal: Int, giveWay: [(column: Int, minimum: Int)]) -> [Int] {
        var widths = widths
        func total() -> Int {
            let shown = widths.filter { $0 > 0 }
            return shown.reduce(0, +) + 2 * max(0, shown.count - 1)
        }
        for (column, minimum) in giveWay where column < widths.count {
            let excess = total() - terminal
            guard excess > 0 else { return widths }
            let target = widths[column] - excess
            // Narrowed to what fits, or to its minimum; a column gone (minimum 0) takes its two spaces along.
            widths[column] = target >= max(1, minimum) ? target : minimum
        }
        while total() > terminal, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 1 {
            widths[widest] -= 1
        }
        return widths
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
            let line = home.tags.map { "#" + cell($0.tag.title, maxWidth: maxCellWidth) + " (\($0.reminderCount))" }.joined(separator: "  ")
            // Cut to the terminal as any line; `tags` lists them all.
            print(terminalColumns.map { cell(line, maxWidth: $0) } ?? line)
        }
    }

    /// How many terminal columns the text takes; Depot's own colour escapes
    /// (`ESC [ … m`, the only escapes a cell holds once made safe) take none.
    static func displayWidth(_ text: String) -> Int {
        if isPrintableASCII(text) { return text.utf8.count }
        var width = 0
        var inEscape = false
        for character in text {
            if inEscape {
                if character == "m" { inEscape = false }
            } else if character == "\u{1B}" {
                inEscape = true
            } else {
                width += displayWidth(character)
            }
        }
        return width
    }

    /// Whether every byte is a printable ASCII character (space to `~`): text
    /// one column a byte wide, with nothing a terminal would obey.
    static func isPrintableASCII(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte > 0x7E { return false }
            return true
        }
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
        // The swatch's escapes take no column; its dot and space take two on every row.
        table(lists.map { summary in
            [(summary.list.title, nil), ("\(summary.incompleteCount)", nil), ("id \(Output.number(summary.list.number))", .dim)]
        }, leading: lists.map { swatch($0.list.color) }, giveWay: [(0, 8)])
    }

    /// The reminders as a table: the first `limit` of them (every one when nil),
    /// then a line saying how many more there are of `total` (when they are a
    /// page the model read) or of `all`.
    static func reminders(_ all: [ReminderDetail], of total: Int? = nil, timeZone: TimeZone, now: Date, showList: Bool, limit: Int? = nil, next: PageCursor? = nil) {
        if all.isEmpty {
            print(styled("  (none)", .dim))
            return
        }
        let details = limit.map { Array(all.prefix($0)) } ?? all
        defer { more(shown: details.count, of: next != nil ? total : total ?? all.count, next: next) }
        let today = dayStart(now, timeZone)
        let calendar = calendar(timeZone)
        table(details.map { detail in
            let r = detail.reminder
            let overdue = !r.isCompleted && (r.dueDate.map { $0 < today } ?? false)
            var row: [(String, Style?)] = [
                (Output.number(r.number), .dim),
                (r.isCompleted ? "✓" : "○", r.isCompleted ? .green : nil),
                (r.priority.marks + (r.isFlagged ? "⚑" : ""), r.isFlagged ? .orange : .red),
                (r.title, r.isCompleted ? .dim : nil),
                (r.dueDate.map { format($0, calendar) } ?? "", overdue ? .red : .blue),
            ]
            if showList { row.append((detail.listTitle, .dim)) }
            row.append((detail.tags.map { "#" + $0 }.joined(separator: " "), .dim))
            return row
        }, giveWay: [(3, 12)] + (showList ? [(6, 0), (5, 8)] : [(5, 0)]) + [(3, 4)])
    }

    static func dayStart(_ date: Date, _ timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.startOfDay(for: date)
    }

    static func format(_ date: Date, _ timeZone: TimeZone) -> String {
        format(date, calendar(timeZone))
    }

    /// The Gregorian calendar in a time zone, made once per listing for `format(_:_:)`.
    static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// A date as `2026-12-24 09:00` in the calendar's time zone.
    static func format(_ date: Date, _ calendar: Calendar) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        // Padded by hand: String(format:) cost more than the rest of a row's line.
        func padded(_ value: Int?, _ width: Int) -> String {
            let value = value ?? 0
            let digits = String(value.magnitude)
            let zeros = String(repeating: "0", count: max(0, width - (value < 0 ? 1 : 0) - digits.count))
            return (value < 0 ? "-" : "") + zeros + digits
        }
        return padded(c.year, 4) + "-" + padded(c.month, 2) + "-" + padded(c.day, 2) + " " + padded(c.hour, 2) + ":" + padded(c.minute, 2)
    }
}

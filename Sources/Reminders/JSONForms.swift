import Foundation

// The model's values in the JSON form that the `reminders` command prints with
// --json and the example server speaks: colours as "#RRGGBBAA" text (as
// `lists recolor` reads them) and a list's place among the lists from 1 (as
// `lists move` numbers it). Dates are ISO 8601 (``RemindersJSON``).

/// The encoder and decoder of the reminders JSON forms.
public enum RemindersJSON {
    /// Sorted keys, ISO 8601 dates (``dateText(_:)``); `pretty` for a person's terminal.
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(dateText(date))
        }
        return encoder
    }

    /// A date in ISO 8601, in UTC, with as many fractional digits as it has,
    /// up to microseconds (what the databases store): `2026-12-01T17:30:00Z`,
    /// `2026-11-28T19:10:50.700862Z`. Foundation's `.iso8601` drops the
    /// fraction, so a time a database holds to the microsecond came out cut to
    /// the second.
    public static func dateText(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        var whole = seconds.rounded(.down)
        var micros = ((seconds - whole) * 1_000_000).rounded()
        if micros >= 1_000_000 { (whole, micros) = (whole + 1, 0) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: whole))
        var text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
        if micros > 0 {
            var fraction = String(format: "%06d", Int(micros))
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text + "Z"
    }
}

/// A list's colour as people write it.
public enum ListColor {
    /// `#RRGGBBAA`.
    public static func hex(_ color: Int64) -> String { String(format: "#%08llX", color) }

    /// `RRGGBB` or `RRGGBBAA`, with or without `#` or `0x`; six digits are opaque.
    public static func parse(_ text: String) throws -> Int64 {
        var hex = text.lowercased()
        if hex.hasPrefix("#") { hex.removeFirst() } else if hex.hasPrefix("0x") { hex.removeFirst(2) }
        guard hex.count == 6 || hex.count == 8, hex.allSatisfy(\.isHexDigit), let value = Int64(hex, radix: 16) else {
            throw RemindersError.invalidInput("a colour is RRGGBB or RRGGBBAA hex, such as 4A99EF (got \"\(text)\")")
        }
        return hex.count == 6 ? value << 8 | 0xFF : value
    }
}

/// A list, as --json shows it.
public struct ListJSON: Encodable {
    /// The list's key, the same on every device.
    public var id: UUID
    /// This store's number for the list.
    public var number: Int64?
    /// The title.
    public var title: String
    /// `#RRGGBBAA`.
    public var color: String
    /// The place among the lists, from 1.
    public var position: Int
    /// How its reminders are sorted.
    public var sort: ReminderSort
    /// Whether the sort runs ascending.
    public var sortAscending: Bool
    /// Whether completed reminders are shown.
    public var showCompleted: Bool

    /// The JSON form of a model value.
    public init(_ list: RemindersList) {
        id = list.id
        number = list.number
        title = list.title
        color = ListColor.hex(list.color)
        position = list.position + 1
        sort = list.sort
        sortAscending = list.sortAscending
        showCompleted = list.showCompleted
    }
}

/// A list with its counts.
public struct ListSummaryJSON: Encodable {
    /// The list.
    public var list: ListJSON
    /// How many of its reminders are not done.
    public var incompleteCount: Int
    /// Whether it has a cover image.
    public var hasCoverImage: Bool

    /// The JSON form of a model value.
    public init(_ summary: ListSummary) {
        list = ListJSON(summary.list)
        incompleteCount = summary.incompleteCount
        hasCoverImage = summary.hasCoverImage
    }
}

/// The home screen.
public struct HomeJSON: Encodable {
    /// The smart lists' counts.
    public var today, scheduled, all, flagged, completed, overdue: Int
    /// The lists, in order.
    public var lists: [ListSummaryJSON]
    /// The tags in use.
    public var tags: [TagSummary]

    /// The JSON form of a model value.
    public init(_ home: HomeScreen) {
        (today, scheduled, all, flagged, completed, overdue) = (home.today, home.scheduled, home.all, home.flagged, home.completed, home.overdue)
        lists = home.lists.map(ListSummaryJSON.init)
        tags = home.tags
    }
}

/// A reminder with what its row shows.
public struct ReminderDetailJSON: Encodable {
    /// The reminder as stored.
    public var reminder: Reminder
    /// Its list's title.
    public var listTitle: String
    /// `#RRGGBBAA`.
    public var listColor: String
    /// Its tags' titles.
    public var tags: [String]
    /// Its tags as a row shows them.
    public var tagsText: String
    /// Whether it is due before today and not done.
    public var isPastDue: Bool
    /// The start of its notes, on one line.
    public var notesPreview: String

    /// The JSON form of a model value.
    public init(_ detail: ReminderDetail) {
        reminder = detail.reminder
        listTitle = detail.listTitle
        listColor = ListColor.hex(detail.listColor)
        tags = detail.tags
        tagsText = detail.tagsText
        isPastDue = detail.isPastDue
        notesPreview = detail.notesPreview
    }
}

/// A list's screen, for `watch LIST --json`.
public struct ListScreenJSON: Encodable {
    /// The list.
    public var list: ListJSON
    /// Its reminders, in the list's order.
    public var reminders: [ReminderDetailJSON]

    /// The JSON form of a model value.
    public init(_ screen: ListScreen) {
        self.init(list: screen.list, reminders: screen.reminders)
    }

    /// A list with its reminders, as ``RemindersModel/reminders(in:sort:ascending:showCompleted:)`` gives them.
    public init(list: RemindersList, reminders: [ReminderDetail]) {
        self.list = ListJSON(list)
        self.reminders = reminders.map(ReminderDetailJSON.init)
    }
}


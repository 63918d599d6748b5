import ArgumentParser
import Depot
import Foundation
import Reminders

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the home screen: smart-list counts, lists and tags.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await running {
            let model = try await options.model(reading: true)
            let home = try await model.homeScreen()
            options.json ? try Output.json(home) : Output.home(home)
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a list's reminders, in its stored order or another one for this call (--save keeps it).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The list's title or id.") var list: String
    @Option(help: "Sort by due, priority, title, created or manual.") var sort: SortChoice?
    @Flag(inversion: .prefixedNo, help: "Sort ascending (--no-ascending for descending).") var ascending: Bool?
    @Flag(inversion: .prefixedNo, help: "Show completed reminders too (--no-completed to hide them).") var completed: Bool?
    @Flag(help: "Store the sort and completed choice with the list.") var save = false
    @OptionGroup var page: PageOptions
    @Option(help: "Show the page after this cursor (a listing cut short prints the next page's).") var after: String?

    func validate() throws {
        if after != nil, save { throw ValidationError("--after and --save contradict each other: give one") }
        if after != nil, page.all { throw ValidationError("--after and --all contradict each other: give one") }
    }

    func run() async throws {
        try await running {
            let model = try await options.model(reading: true)
            let limit = page.limit(json: options.json) ?? (after != nil ? 50 : nil)
            let shown: RemindersList
            let reminders: [ReminderDetail]
            var total: Int?
            var next: PageCursor?
            if save {
                let screen = try await model.reminders(in: list, sort: sort?.sort, ascending: ascending, showCompleted: completed, limit: limit)
                (shown, reminders, total) = (screen.list, screen.reminders, screen.total)
            } else {
                // Looking changes nothing: the stored choice, overridden for this call only.
                var stored = try await model.list(named: list)
                stored.sort = sort?.sort ?? stored.sort
                stored.sortAscending = ascending ?? stored.sortAscending
                stored.showCompleted = completed ?? stored.showCompleted
                shown = stored
                let order = ReminderOrder(sort: stored.sort, ascending: stored.sortAscending, showCompleted: stored.showCompleted)
                if let limit {
                    // A page by the order's values: --after its cursor is the next, however far in.
                    let cursor: PageCursor?
                    do {
                        cursor = try after.map { try PageCursor(token: $0) }
                    } catch {
                        throw RemindersError.invalidInput("--after takes the cursor a listing printed, not \"\(after ?? "")\"")
                    }
                    (reminders, next, total) = try await model.reminderPage(on: .list(stored.id.uuidString), order: order, after: cursor, limit: limit)
                } else {
                    (reminders, total) = try await model.reminders(on: .list(stored.id.uuidString), order: order, limit: nil)
                }
            }
            if options.json { return try Output.json(reminders) }
            let changed = !save && (sort != nil || ascending != nil || completed != nil)
            Output.heading("\(shown.title) — by \(SortChoice(shown.sort).rawValue), \(shown.sortAscending ? "ascending" : "descending")"
                + "\(shown.showCompleted ? ", completed shown" : "")\(changed ? " (this time; --save keeps it)" : "")", color: shown.color)
            Output.reminders(reminders, of: total, timeZone: model.timeZone, now: model.now(), showList: false, next: next)
        }
    }
}

enum SortChoice: String, ExpressibleByArgument, CaseIterable {
    case due, priority, title, created, manual
    init(_ sort: ReminderSort) {
        switch sort {
        case .dueDate: self = .due
        case .priority: self = .priority
        case .title: self = .title
        case .createdAt: self = .created
        case .manual: self = .manual
        }
    }
    var sort: ReminderSort {
        switch self {
        case .due: .dueDate
        case .priority: .priority
        case .title: .title
        case .created: .createdAt
        case .manual: .manual
        }
    }
}

struct ViewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "view", abstract: "Show a smart list: today, scheduled, flagged, completed or all.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "today, scheduled, flagged, completed or all.") var name: SmartListChoice
    @OptionGroup var page: PageOptions

    func run() async throws {
        try await running {
            let limit = page.limit(json: options.json)
            let model = try await options.model(reading: true)
            let (reminders, total) = try await model.reminders(in: name.view, limit: limit)
            if options.json { return try Output.json(reminders) }
            Output.heading(name.rawValue.capitalized, color: nil)
            Output.reminders(reminders, of: total, timeZone: model.timeZone, now: model.now(), showList: true)
        }
    }
}

/// How many rows a listing shows: what fits the terminal, unless told.
struct PageOptions: ParsableArguments {
    @Option(help: "Show at most this many reminders (default: what fits the terminal; every one when the output is not a terminal).")
    var limit: Int?

    @Flag(help: "Show every reminder, however many.")
    var all = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit takes a count of 1 or more, not \(limit)") }
        if limit != nil, all { throw ValidationError("--limit and --all contradict each other: give one") }
    }

    /// The limit to read with: nil for every row.
    func limit(json: Bool) -> Int? {
        if all { return nil }
        if let limit { return limit }
        // Scripts and --json get every row; a person at a terminal, a screenful.
        return json ? nil : Output.screenRows
    }
}

struct SmartListChoice: ExpressibleByArgument {
    let view: SmartList
    var rawValue: String { view.rawValue }
    init?(argument: String) {
        guard let view = SmartList(rawValue: argument.lowercased()) else { return nil }
        self.view = view
    }
    static var allValueStrings: [String] { SmartList.allCases.map(\.rawValue) }
}

struct Tagged: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the reminders that carry a tag.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The tag.") var tag: String
    @Flag(help: "Include completed reminders.") var completed = false
    @OptionGroup var page: PageOptions

    func run() async throws {
        try await running {
            let limit = page.limit(json: options.json)
            let model = try await options.model(reading: true)
            let bare = tag.hasPrefix("#") ? String(tag.dropFirst()) : tag
            let (reminders, total) = try await model.reminders(taggedWith: bare, includeCompleted: completed, limit: limit)
            if options.json { return try Output.json(reminders) }
            // Headed by the tag as it is stored (tags match ignoring letter case).
            let title = try await model.tag(named: bare)?.title ?? bare
            Output.heading("#\(title)", color: nil)
            Output.reminders(reminders, of: total, timeZone: model.timeZone, now: model.now(), showList: true)
        }
    }
}

struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Add a reminder.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "What to do.") var title: String
    @Option(help: "The list's title or id (default: the first list).") var list: String?
    @Option(help: "Due: tomorrow 9am, friday at 17:00, in 2 hours, in 3 days, Dec 24, 24/12/2026, noon, 2026-12-24 17:00, ISO-8601.") var due: String?
    @Option(help: "none, low, medium or high.") var priority: PriorityChoice?
    @Flag(help: "Flag it.") var flag = false
    @Option(name: .customLong("tag"), help: "A tag (repeat for several).") var tags: [String] = []
    @Option(help: "Notes.") var notes: String?

    func run() async throws {
        try await running {
            let model = try await options.model()
            let dueDate = try due.map { try DateInput.parse($0, timeZone: model.timeZone, now: model.now()) }
            let target: String
            if let list { target = list } else { target = try await defaultList(model) }
            let detail = try await model.addReminder(
                ReminderDraft(title: title, notes: notes, dueDate: dueDate ?? nil, priority: priority?.priority,
                              isFlagged: flag, tags: tags), to: target)
            try options.show(detail, model)
        }
    }

    /// The first list, or a new one (``RemindersModel/defaultListTitle``) when there is none.
    func defaultList(_ model: RemindersModel) async throws -> String {
        try await model.firstList().id.uuidString
    }
}

enum PriorityChoice: String, ExpressibleByArgument, CaseIterable {
    case none, low, medium, high
    var priority: Priority {
        switch self {
        case .none: .none
        case .low: .low
        case .medium: .medium
        case .high: .high
        }
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a reminder.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Option(help: "A new title.") var title: String?
    @Option(help: "New notes.") var notes: String?
    @Option(help: "Due: tomorrow 9am, friday at 17:00, in 2 hours, in 3 days, Dec 24, 24/12/2026, noon, 2026-12-24 17:00, ISO-8601, or none.") var due: String?
    @Option(help: "none, low, medium or high.") var priority: PriorityChoice?
    @Option(name: .customLong("tag"), help: "A tag to add (repeat for several).") var tags: [String] = []
    @Flag(help: "Flag it.") var flag = false
    @Flag(help: "Unflag it.") var unflag = false

    func validate() throws {
        if flag && unflag { throw ValidationError("--flag and --unflag contradict each other") }
        if title == nil, notes == nil, due == nil, priority == nil, tags.isEmpty, !flag, !unflag {
            throw ValidationError("say what to change: --title, --notes, --due, --priority, --tag, --flag or --unflag")
        }
    }

    func run() async throws {
        try await running {
            let model = try await options.model()
            let dueDate: Date?? = try due.map { try DateInput.parse($0, timeZone: model.timeZone, now: model.now()) }
            let flagged: Bool? = flag ? true : unflag ? false : nil
            let detail = try await model.editReminder(id, ReminderDraft(title: title, notes: notes, dueDate: dueDate,
                                                                        priority: priority?.priority, isFlagged: flagged, tags: tags))
            try options.show(detail, model)
        }
    }
}

struct Detail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "detail", abstract: "Show one reminder, its notes in full.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64

    func run() async throws {
        try await running {
            let model = try await options.model(reading: true)
            let detail = try await model.reminder(id)
            try options.show(detail, model)
            if !options.json, Output.cell(detail.reminder.title, maxWidth: Output.maxCellWidth) != Output.safe(detail.reminder.title) {
                // The row cut the title: here it is whole.
                print(Output.styled("    title: ", .dim) + Output.safe(detail.reminder.title))
            }
        }
    }
}

struct Complete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a reminder done (--undo to reopen it).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Flag(help: "Mark it not done.") var undo = false

    func run() async throws {
        try await running {
            let model = try await options.model()
            let detail = try await model.complete(id, !undo)
            try options.show(detail, model)
        }
    }
}

struct FlagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flag", abstract: "Flag a reminder (--undo to clear the flag).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Flag(help: "Clear the flag.") var undo = false

    func run() async throws {
        try await running {
            let model = try await options.model()
            let detail = try await model.flag(id, !undo)
            try options.show(detail, model)
        }
    }
}

struct Move: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Move a reminder to another list.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Option(help: "The list's title or id.") var to: String

    func run() async throws {
        try await running {
            let model = try await options.model()
            let detail = try await model.move(id, to: to)
            try options.show(detail, model)
        }
    }
}

struct Order: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order",
        abstract: "Place a reminder before or after another of its list, or at the end (the list's manual order).",
        discussion: "Show the order with: reminders show LIST --sort manual"
    )
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Option(help: "Place it just before this reminder (an id in the same list).") var before: Int64?
    @Option(help: "Place it just after this reminder (an id in the same list).") var after: Int64?
    @Flag(help: "Place it at the end of its list.") var last = false

    func validate() throws {
        guard [before != nil, after != nil, last].filter({ $0 }).count == 1 else {
            throw ValidationError("say where: --before ID, --after ID or --last")
        }
    }

    func run() async throws {
        try await running {
            let model = try await options.model()
            let detail: ReminderDetail
            if let after {
                detail = try await model.moveReminder(id, after: after)
            } else {
                detail = try await model.moveReminder(id, before: before)
            }
            try options.show(detail, model)
        }
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a reminder.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Flag(help: "Do not ask.") var yes = false

    func run() async throws {
        try await running {
            let model = try await options.model()
            let reminder = try await model.reminder(id)
            try Confirmation.require("Delete 1 reminder, \"\(reminder.reminder.title)\"?", yes: yes)
            try await model.deleteReminder(id)
            // The reminder as it was, under its own key: a number alone would read as a count.
            options.json ? try Output.json(["deleted": ReminderDetailJSON(reminder)]) : print("Deleted reminder \(id), \"\(Output.cell(reminder.reminder.title, maxWidth: Output.maxCellWidth))\".")
        }
    }
}

struct TagCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tag", abstract: "Add tags to a reminder.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Argument(help: "The tags.") var tags: [String]

    func run() async throws {
        try await running {
            let model = try await options.model()
            let detail = try await model.tag(id, with: tags)
            try options.show(detail, model)
        }
    }
}

struct Untag: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove tags from a reminder.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The reminder's id.") var id: Int64
    @Argument(help: "The tags.") var tags: [String]

    func run() async throws {
        try await running {
            let model = try await options.model()
            let detail = try await model.untag(id, from: tags.map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 })
            try options.show(detail, model)
        }
    }
}

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Find reminders by words of their title, notes or tags, best matches first.",
                                                    discussion: "Every word must start a word of the reminder; case and accents are ignored (\"cafe\" finds \"Café\"), punctuation separates words.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The words to find: \"oat mil\" finds \"Oat milk\".") var text: String
    @Flag(help: "Include completed reminders.") var completed = false
    @Flag(help: "Delete the completed reminders that match.") var deleteCompleted = false
    @Option(help: "With --delete-completed: only those due more than 1m, 6m or 12m before today.") var olderThan: AgeChoice?
    @Flag(help: "With --delete-completed: do not ask.") var yes = false
    @OptionGroup var page: PageOptions

    enum AgeChoice: String, ExpressibleByArgument, CaseIterable {
        case oneMonth = "1m", sixMonths = "6m", twelveMonths = "12m"
        var age: CompletedAge {
            switch self {
            case .oneMonth: .oneMonth
            case .sixMonths: .sixMonths
            case .twelveMonths: .twelveMonths
            }
        }
    }

    func validate() throws {
        if olderThan != nil, !deleteCompleted { throw ValidationError("--older-than goes with --delete-completed") }
    }

    func run() async throws {
        try await running {
            let model = try await options.model(reading: !deleteCompleted)
            if deleteCompleted {
                let age = olderThan?.age ?? .any
                let matching = try await model.completedMatchCount(text, olderThan: age)
                if matching == 0 {
                    // Nothing to ask about.
                    return options.json ? try Output.json(["deleted": 0]) : print("No completed reminder matches \"\(Output.safe(text))\": nothing was deleted.")
                }
                try Confirmation.require("Delete \(Confirmation.reminders(matching)), completed, matching \"\(text)\"?", yes: yes)
                let count = try await model.deleteCompletedMatches(text, olderThan: age)
                return options.json ? try Output.json(["deleted": count]) : print("Deleted \(count) completed reminder\(count == 1 ? "" : "s") matching \"\(text)\".")
            }
            let limit = page.limit(json: options.json)
            // Words past the index's length are in no index: say so, rather than find nothing silently.
            for word in SearchTokenizer.wordsWithoutToken(in: text) {
                let shown = Output.cell(String(word), maxWidth: 20)
                FileHandle.standardError.write(Data("reminders: \"\(shown)\" is left out of the search: words over \(SearchTokenizer.maximumTokenLength) letters are not indexed\n".utf8))
            }
            let found = try await model.search(text, includeCompleted: completed, limit: limit)
            if options.json {
                return try Output.json(SearchOutput(reminders: found.details.map(ReminderDetailJSON.init), completedCount: found.completedCount))
            }
            Output.heading("Search \"\(text)\" — \(found.total) found, \(found.completedCount) completed match\(found.completedCount == 1 ? "" : "es")", color: nil)
            Output.reminders(found.details, of: found.total, timeZone: model.timeZone, now: model.now(), showList: true)
        }
    }

    struct SearchOutput: Encodable {
        var reminders: [ReminderDetailJSON]
        var completedCount: Int
    }
}

extension GlobalOptions {
    /// Prints a reminder a command changed: JSON with --json, else a one-row table.
    func show(_ detail: ReminderDetail, _ model: RemindersModel) throws {
        if json {
            try Output.json(detail)
        } else {
            Output.reminders([detail], timeZone: model.timeZone, now: model.now(), showList: true)
            // The notes in full, under the row, as the app shows them in a reminder's details.
            for line in detail.reminder.notes.split(separator: "\n", omittingEmptySubsequences: false) where !detail.reminder.notes.isEmpty {
                print(Output.styled("    " + Output.safe(line.trimmingCharacters(in: .newlines)), .dim))
            }
        }
    }
}

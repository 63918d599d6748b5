import ArgumentParser
import Depot
import Foundation
import Reminders

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fill a fresh database with demo lists, reminders and tags, and show the home screen.",
        discussion: """
            Without --database the demo gets its own file (demo.sqlite beside the default database), \
            made anew each time, so your own reminders are never touched. A database you name must be \
            empty, unless you pass --replace to delete what it holds first.
            """
    )
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Delete every list, reminder and tag in the named database first.") var replace = false

    func run() async throws {
        try await running {
            var location = options.database ?? DatabaseLocation.fromEnvironment
            if location == nil {
                let path = URL(fileURLWithPath: DatabaseLocation.defaultPath).deletingLastPathComponent().appendingPathComponent("demo.sqlite").path
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                location = path
            }
            var demoOptions = options
            demoOptions.database = location
            let model = try await demoOptions.model()
            let existing = try await model.lists().count
            if existing > 0 {
                guard replace else {
                    throw RemindersError.invalidInput("\(RemindersDatabases.redacted(DatabaseLocation.resolve(location))) already holds \(existing) list\(existing == 1 ? "" : "s"); pass --replace to delete them, or name another database")
                }
                try await model.store.write { db in
                    try db.execute("DELETE FROM \"remindersLists\"")
                    try db.execute("DELETE FROM \"tags\"")
                }
            }
            try await DemoData.fill(model)
            let home = try await model.homeScreen()
            if options.json { return try Output.json(home) }
            Output.home(home)
            print("")
            let resolved = DatabaseLocation.resolve(location)
            let shown = RemindersDatabases.redacted(resolved)
            let again = shown == resolved ? resolved : "<the same URL>"
            print(Output.styled("Demo data is in \(shown). Try: reminders view today --database \(again)", .dim))
        }
    }
}

/// Realistic demo data, placed around today in the model's time zone.
enum DemoData {
    static func fill(_ model: RemindersModel) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = model.timeZone
        let today = calendar.startOfDay(for: model.now())
        func day(_ offset: Int, _ hour: Int, _ minute: Int = 0) -> Date {
            calendar.date(byAdding: DateComponents(day: offset, hour: hour, minute: minute), to: today) ?? today
        }
        let lists: [(String, Int64)] = [("Reminders", 0x4A99_EFFF), ("Groceries", 0x5FC9_4FFF), ("Work", 0xED89_35FF),
                                        ("Home", 0xB07D_F4FF), ("Trip to Lisbon", 0xF5C5_1AFF)]
        for (title, color) in lists { try await model.createList(title: title, color: color) }

        typealias Item = (list: String, title: String, notes: String, due: Date?, priority: Priority, flag: Bool, tags: [String], done: Bool)
        let items: [Item] = [
            ("Reminders", "Call mom", "Her new number is in the contacts", day(0, 18), .medium, true, ["family"], false),
            ("Reminders", "Renew passport", "Photos first: 35x45 mm", day(-3, 9), .high, true, ["errand", "travel"], false),
            ("Reminders", "Book dentist appointment", "", day(2, 10), .none, false, ["health"], false),
            ("Reminders", "Pay the electricity bill", "Account 4471-22", day(-1, 12), .high, false, ["bills"], false),
            ("Reminders", "Return library books", "", nil, .low, false, ["errand"], true),
            ("Groceries", "Milk", "Oat, 2 cartons", nil, .none, false, ["errand"], false),
            ("Groceries", "Eggs", "", nil, .none, false, [], false),
            ("Groceries", "Coffee beans", "Whole bean, medium roast", nil, .none, true, [], false),
            ("Groceries", "Bread", "", nil, .none, false, [], true),
            ("Groceries", "Olive oil", "", nil, .none, false, [], true),
            ("Work", "Prepare quarterly review slides", "Include the churn numbers", day(0, 15), .high, true, ["q4"], false),
            ("Work", "Reply to Dana about the budget", "", day(0, 11, 30), .medium, false, [], false),
            ("Work", "Code review: migration PR", "Check the rollback path", day(1, 9), .medium, false, ["q4"], false),
            ("Work", "Expense report", "Receipts are in the shared folder", day(-2, 17), .low, false, ["bills"], false),
            ("Work", "Team offsite agenda", "", day(6, 14), .none, false, [], false),
            ("Work", "Submit timesheet", "", day(-7, 17), .none, false, [], true),
            ("Home", "Fix the leaking tap", "Washer size 1/2\"", day(3, 10), .medium, false, ["diy"], false),
            ("Home", "Water the plants", "", day(0, 8), .none, false, [], false),
            ("Home", "Change smoke alarm batteries", "9V x2", nil, .low, false, ["diy"], false),
            ("Home", "Take out recycling", "", day(-1, 20), .none, false, [], true),
            ("Trip to Lisbon", "Book flights", "Aisle seats", day(-5, 12), .high, false, ["travel"], true),
            ("Trip to Lisbon", "Reserve hotel in Alfama", "", day(4, 12), .high, true, ["travel"], false),
            ("Trip to Lisbon", "Buy travel adapter", "Type F", day(9, 12), .low, false, ["travel", "errand"], false),
            ("Trip to Lisbon", "Pastéis de nata at Manteigaria", "", nil, .none, false, ["food"], false),
        ]
        for item in items {
            let detail = try await model.addReminder(
                ReminderDraft(title: item.title, notes: item.notes, dueDate: item.due, priority: item.priority,
                              isFlagged: item.flag, tags: item.tags), to: item.list)
            if item.done, let number = detail.reminder.number { try await model.complete(number) }
        }
    }
}

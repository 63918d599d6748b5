import ArgumentParser
import Depot
import Foundation
import Reminders

struct ListsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lists",
        abstract: "Show and manage lists.",
        subcommands: [Show.self, Create.self, Rename.self, Recolor.self, Reorder.self, Remove.self],
        defaultSubcommand: Show.self
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show every list with its open count.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await running {
                let model = try await options.model(reading: true)
                let lists = try await model.lists()
                options.json ? try Output.json(lists) : Output.lists(lists)
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Create a list at the end.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The title.") var title: String
        @Option(help: "The colour as RRGGBB or RRGGBBAA hex.") var color: String?

        func run() async throws {
            try await running {
                let model = try await options.model()
                let list = try await model.createList(title: title, color: try color.map(ListColor.parse) ?? 0x4A99_EFFF)
                options.json ? try Output.json(list) : print("Created list \"\(Output.safe(list.title))\" (id \(Output.number(list.number))).")
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a list.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The list's title or id.") var list: String
        @Argument(help: "The new title.") var title: String

        func run() async throws {
            try await running {
                let model = try await options.model()
                let renamed = try await model.renameList(list, to: title)
                options.json ? try Output.json(renamed) : print("Renamed to \"\(Output.safe(renamed.title))\".")
            }
        }
    }

    struct Recolor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a list's colour.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The list's title or id.") var list: String
        @Argument(help: "The colour as RRGGBB or RRGGBBAA hex.") var color: String

        func run() async throws {
            try await running {
                let model = try await options.model()
                let recolored = try await model.recolorList(list, to: try ListColor.parse(color))
                options.json ? try Output.json(recolored) : print("\"\(Output.safe(recolored.title))\" is now \(ListColor.hex(recolored.color)).")
            }
        }
    }

    struct Reorder: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "move", abstract: "Move a list to a place among the lists (1 is first).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The list's title or id.") var list: String
        @Argument(help: "The new place, from 1.") var position: Int

        func run() async throws {
            try await running {
                guard position >= 1 else { throw RemindersError.invalidInput("places start at 1") }
                let model = try await options.model()
                try await model.moveList(list, to: position - 1)
                let lists = try await model.lists()
                options.json ? try Output.json(lists) : Output.lists(lists)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a list and its reminders.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The list's title or id.") var list: String
        @Flag(help: "Do not ask.") var yes = false

        func run() async throws {
            try await running {
                let model = try await options.model()
                let count = try await model.reminderCount(inList: list)
                try Confirmation.require("Delete the list \"\(list)\" and its \(Confirmation.reminders(count))?", yes: yes)
                let (deleted, made) = try await model.deleteList(list)
                if options.json {
                    try Output.json(ListDeletion(deleted: deleted, reminders: count, madeInItsPlace: made))
                } else {
                    print("Deleted the list \"\(Output.safe(deleted.title))\" and its \(Confirmation.reminders(count)).")
                    if let made {
                        print("A database always keeps a list: an empty \"\(Output.safe(made.title))\" takes its place.")
                    }
                }
            }
        }
    }
}

/// What `lists delete --json` prints: the list deleted, how many reminders went
/// with it, and the list made in its place when it was the last.
struct ListDeletion: Encodable {
    var deleted: ListJSON
    var reminders: Int
    var madeInItsPlace: ListJSON?

    init(deleted: RemindersList, reminders: Int, madeInItsPlace: RemindersList?) {
        (self.deleted, self.reminders, self.madeInItsPlace) = (ListJSON(deleted), reminders, madeInItsPlace.map(ListJSON.init))
    }
}

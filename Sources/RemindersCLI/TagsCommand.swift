import ArgumentParser
import Foundation
import Reminders

struct TagsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tags",
        abstract: "Show and manage tags.",
        subcommands: [Show.self, Picker.self, Rename.self, Remove.self],
        defaultSubcommand: Show.self
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "The tags in use, with their open and total counts.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await running {
                let model = try await options.model(reading: true)
                let tags = try await model.tagsInUse()
                if options.json { return try Output.json(tags) }
                if tags.isEmpty { return print(Output.styled("(no tags in use: reminders tag ID TAG)", .dim)) }
                Output.table(tags.map { [("#" + $0.tag.title, nil), ("\($0.openCount) open", nil), ("\($0.reminderCount) in all", .dim)] })
            }
        }
    }

    struct Picker: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "picker", abstract: "Every tag, the three most used first.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await running {
                let model = try await options.model(reading: true)
                let picker = try await model.tagPicker()
                if options.json { return try Output.json(picker) }
                print(Output.styled("Most used", .bold) + "  " + picker.mostUsed.map { "#" + Output.safe($0.title) }.joined(separator: "  "))
                print(Output.styled("Others", .bold) + "     " + picker.others.map { "#" + Output.safe($0.title) }.joined(separator: "  "))
            }
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a tag (its title ignoring letter case).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The tag.") var tag: String
        @Argument(help: "Its new title.") var title: String

        func run() async throws {
            try await running {
                let model = try await options.model()
                let renamed = try await model.renameTag(tag, to: title)
                options.json ? try Output.json(renamed) : print("Renamed #\(Output.safe(tag.hasPrefix("#") ? String(tag.dropFirst()) : tag)) to #\(Output.safe(renamed.title)).")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a tag; the reminders carrying it lose it.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The tag.") var tag: String
        @Flag(help: "Do not ask.") var yes = false

        func run() async throws {
            try await running {
                let model = try await options.model()
                guard let found = try await model.tag(named: tag) else { throw RemindersError.tagNotFound(tag) }
                let carrying = try await model.tagsInUse().first { $0.tag.id == found.id }?.reminderCount ?? 0
                try Confirmation.require("Delete #\(found.title)? \(Confirmation.reminders(carrying)) \(carrying == 1 ? "carries" : "carry") it (the reminders stay).", yes: yes)
                let untagged = try await model.deleteTag(tag)
                options.json ? try Output.json(["untagged": untagged]) : print("Deleted #\(Output.safe(found.title)); \(Confirmation.reminders(untagged)) lost it.")
            }
        }
    }
}

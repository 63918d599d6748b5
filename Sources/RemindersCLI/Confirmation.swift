import Foundation
import Reminders
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Destructive commands say what they remove and ask first.
enum Confirmation {
    /// Goes on when `yes` was passed or the person at the terminal answers y;
    /// without a terminal and without `--yes` it refuses, so a script never deletes by surprise.
    static func require(_ question: String, yes: Bool) throws {
        if yes { return }
        guard isatty(STDIN_FILENO) == 1 else {
            throw RemindersError.invalidInput("\(question) Nothing was deleted: pass --yes to confirm (there is no terminal to ask on)")
        }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else { throw RemindersError.invalidInput("nothing was deleted") }
    }

    /// "1 reminder", "3 reminders".
    static func reminders(_ count: Int) -> String { "\(count) reminder\(count == 1 ? "" : "s")" }
}

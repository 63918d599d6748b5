import Foundation

/// What the reminders model refuses, in one line a person can act on.
public enum RemindersError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// No list has this title or id.
    case listNotFound(String)
    /// More than one list has this title.
    case ambiguousList(String, matches: Int)
    /// No reminder has this id.
    case reminderNotFound(Int64)
    /// No tag has this title.
    case tagNotFound(String)
    /// A value the model cannot accept (an empty title, a colour out of range...).
    case invalidInput(String)
    /// A change that collides with what is stored: a list or tag title in use.
    case conflict(String)

    public var description: String {
        switch self {
        case .listNotFound(let name): "no list named \"\(name)\""
        case .ambiguousList(let name, let count): "\(count) lists are named \"\(name)\"; use the list's id"
        case .reminderNotFound(let id): "no reminder with id \(id)"
        case .tagNotFound(let title): "no tag named \"\(title)\""
        case .invalidInput(let message), .conflict(let message): message
        }
    }

    public var errorDescription: String? { description }
}

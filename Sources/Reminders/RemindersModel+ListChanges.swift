import Depot
import Foundation

/// The changes an edit makes to a list; nil leaves a field as it is.
public struct ListChanges: Sendable, Equatable {
    /// A new title; another list's title (ignoring letter case) is refused.
    public var title: String?
    /// A new colour, 0xRRGGBBAA.
    public var color: Int64?
    /// A new place among the lists, from 0; past the end means last.
    public var position: Int?
    /// How the list's reminders are sorted.
    public var sort: ReminderSort?
    /// Whether the sort runs ascending.
    public var sortAscending: Bool?
    /// Whether completed reminders are shown with the others.
    public var showCompleted: Bool?

    /// Changes; every field left nil is left as it is.
    public init(title: String? = nil, color: Int64? = nil, position: Int? = nil, sort: ReminderSort? = nil,
                sortAscending: Bool? = nil, showCompleted: Bool? = nil) {
        self.title = title
        self.color = color
        self.position = position
        self.sort = sort
        self.sortAscending = sortAscending
        self.showCompleted = showCompleted
    }
}

extension RemindersModel {
    /// Applies every change to a list in one write: all of them, or none when one is refused.
    @discardableResult
    public func editList(_ nameOrID: String, _ changes: ListChanges) async throws -> RemindersList {
        let title = try changes.title.map(Self.validTitle)
        if let color = changes.color { try Self.validate(color: color) }
        if let position = changes.position, position < 0 {
            throw RemindersError.invalidInput("a list's place cannot be negative")
        }
        return try await store.write(logger: logger) { db in
            var list = try Self.findList(db, nameOrID)
            if let title {
                try Self.requireUnusedTitle(db, title, except: list.id)
                list.title = title
            }
            list.color = changes.color ?? list.color
            list.sort = changes.sort ?? list.sort
            list.sortAscending = changes.sortAscending ?? list.sortAscending
            list.showCompleted = changes.showCompleted ?? list.showCompleted
            try db.update(list)
            if let position = changes.position {
                var ids = try Self.listIDsInOrder(db)
                ids.removeAll { $0 == list.id }
                ids.insert(list.id, at: min(position, ids.count))
                try Self.renumberLists(db, ids)
                guard let moved = try db.find(RemindersList.self, id: list.id) else { throw RemindersError.listNotFound(nameOrID) }
                list = moved
            }
            return list
        }
    }
}

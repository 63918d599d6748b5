import Depot
import Foundation

/// Manual order: reminders keep sparse positions within their list, so moving
/// one changes that one alone while there is room between its new neighbours.
extension RemindersModel {
    /// The room a new reminder leaves after the last one; a list numbered
    /// afresh puts its reminders this far apart.
    public static let positionGap = 1024

    /// Moves a reminder just before another of its list (to the end with nil).
    /// Only the moved reminder changes, unless its neighbours left no room:
    /// then the list is renumbered once.
    @discardableResult
    public func moveReminder(_ number: Int64, before other: Int64?) async throws -> ReminderDetail {
        try await store.write(logger: logger) { db in
            let (reminder, siblings) = try Self.siblings(db, of: number)
            guard let other else { return try Self.place(db, reminder, after: siblings.last?.id, before: nil, today: today) }
            guard let index = siblings.firstIndex(where: { $0.number == other }) else { throw RemindersError.reminderNotFound(other) }
            return try Self.place(db, reminder, after: index > 0 ? siblings[index - 1].id : nil, before: siblings[index].id, today: today)
        }
    }

    /// Moves a reminder just after another of its list.
    @discardableResult
    public func moveReminder(_ number: Int64, after other: Int64) async throws -> ReminderDetail {
        try await store.write(logger: logger) { db in
            let (reminder, siblings) = try Self.siblings(db, of: number)
            guard let index = siblings.firstIndex(where: { $0.number == other }) else { throw RemindersError.reminderNotFound(other) }
            return try Self.place(db, reminder, after: siblings[index].id, before: index + 1 < siblings.count ? siblings[index + 1].id : nil, today: today)
        }
    }

    /// The reminder and the others of its list, in manual order.
    static func siblings(_ db: Database, of number: Int64) throws -> (Reminder, [Reminder]) {
        let reminder = try findReminder(db, number)
        let id = reminder.id
        let others = try db.fetchAll(Reminder.where { $0.remindersListID.eq(reminder.remindersListID) && $0.id.neq(id) }
            .order { [$0.position.ascending(), $0.number.ascending(), $0.id.ascending()] })
        return (reminder, others)
    }

    /// Puts the reminder between two neighbours, by id (nil: none on that side).
    private static func place(_ db: Database, _ reminder: Reminder, after previous: UUID?, before next: UUID?, today: Day) throws -> ReminderDetail {
        func position(of id: UUID?) throws -> Int? {
            guard let id else { return nil }
            guard let neighbour = try db.find(Reminder.self, id: id) else { throw RemindersError.invalidInput("a neighbour of the moved reminder is gone") }
            return neighbour.position
        }
        var moved = reminder
        if let room = between(try position(of: previous), try position(of: next)) {
            moved.position = room
        } else {
            // No room between them: renumber the list with gaps once, then there is.
            try renumber(db, listID: reminder.remindersListID)
            guard let room = between(try position(of: previous), try position(of: next)) else {
                throw RemindersError.invalidInput("no room to move reminder \(reminder.number ?? 0) there")
            }
            moved.position = room
        }
        let movedID = moved.id
        try db.update(Reminder.where { $0.id.eq(movedID) }) { [$0.position.to(moved.position)] }
        return try details(db, [moved], today: today)[0]
    }

    /// A position strictly between two neighbours' (either may be missing:
    /// first or last in the list), or nil when there is no room, and the
    /// list must be numbered afresh (every reminder ``positionGap`` apart).
    ///
    /// ```swift
    /// RemindersModel.between(1024, 2048)   // 1536
    /// RemindersModel.between(nil, 0)       // -1024: before the first
    /// RemindersModel.between(5, 6)         // nil: no room
    /// ```
    ///
    /// For a writer other than the model (a web page's move through a sync
    /// server's edits) that orders reminders as the model does.
    public static func between(_ previous: Int?, _ next: Int?) -> Int? {
        switch (previous, next) {
        case (nil, nil): return 0
        case (let p?, nil):
            let (value, overflow) = p.addingReportingOverflow(positionGap)
            return overflow ? nil : value
        case (nil, let n?):
            let (value, overflow) = n.subtractingReportingOverflow(positionGap)
            return overflow ? nil : value
        case (let p?, let n?):
            let (gap, overflow) = n.subtractingReportingOverflow(p)
            guard !overflow, gap >= 2 else { return nil }
            return p + gap / 2
        }
    }

    /// Positions 0, gap, 2×gap… in the list's current order.
    static func renumber(_ db: Database, listID: UUID) throws {
        let ids = try db.fetchAll(Reminder.where { $0.remindersListID.eq(listID) }
            .order { [$0.position.ascending(), $0.number.ascending(), $0.id.ascending()] }).map(\.id)
        for (index, reminderID) in ids.enumerated() {
            let (position, overflow) = index.multipliedReportingOverflow(by: positionGap)
            guard !overflow else { throw RemindersError.invalidInput("a list of \(ids.count) reminders cannot be numbered") }
            try db.update(Reminder.where { $0.id.eq(reminderID) }) { [$0.position.to(position)] }
        }
    }

    /// The position after a list's last reminder.
    static func nextPosition(_ db: Database, listID: UUID) throws -> Int {
        let last = try db.fetchOne(Reminder.where { $0.remindersListID.eq(listID) }.select { $0.position.max() }) ?? nil
        guard let last else { return 0 }
        if let next = between(last, nil) { return next }
        try renumber(db, listID: listID)
        let renumbered = try db.fetchOne(Reminder.where { $0.remindersListID.eq(listID) }.select { $0.position.max() }) ?? nil
        guard let next = between(renumbered ?? 0, nil) else { throw RemindersError.invalidInput("no room after the last reminder") }
        return next
    }
}

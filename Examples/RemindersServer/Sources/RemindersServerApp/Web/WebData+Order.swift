import Depot
import DepotSync
import Foundation
import Reminders

extension WebData {
    /// Where a reminder goes in its list: one place up or down (a keyboard's
    /// and a form's move), or before another reminder of the list, or last (a drag's).
    enum Move: Sendable, Equatable {
        case up, down
        case before(UUID)
        case last

        /// The move a form or a drag sends: `direction=up|down`, or `before=<id>` (empty: last).
        init(_ form: WebForm) throws {
            switch (form["direction"], form["before"]) {
            case ("up", nil): self = .up
            case ("down", nil): self = .down
            case (nil, let before?) where before.isEmpty: self = .last
            case (nil, let before?):
                guard let id = UUID(uuidString: before) else { throw ReminderForm.invalid("before is a reminder's id") }
                self = .before(id)
            default: throw ReminderForm.invalid("a move is direction=up or down, or before=a reminder's id")
            }
        }
    }

    /// The position after `last` (the first, with none), or a 422 when there is no room.
    static func after(_ last: Int?) throws -> Int {
        guard let last else { return 0 }
        let (next, overflow) = last.addingReportingOverflow(RemindersModel.positionGap)
        guard !overflow else { throw ReminderForm.invalid("no room after the last place; move an item first") }
        return next
    }

    /// Moves a reminder within its list, as the list's page shows it (open
    /// ones first, each part in the list's order): the reminder takes a place
    /// between its new neighbours, or, when there is no room between them,
    /// the list is numbered afresh, all in one edit.
    func move(_ id: UUID, _ move: Move) async throws {
        let edits: [SyncEdit] = try await server.store.read { db in
            let moved = try Self.reminder(db, account, id)
            var order = try db.fetchAll(Reminder.self, """
                SELECT * FROM \(ident: Reminder.tableName) WHERE \(ident: "remindersListID") = \(moved.remindersListID)
                ORDER BY \(ident: "isCompleted"), \(ident: "position"), \(ident: "createdAt"), \(ident: "id")
                """)
            guard let from = order.firstIndex(where: { $0.id == id }) else { throw Self.notFound }
            let place = order.remove(at: from)
            let to: Int
            switch move {
            case .up: to = max(0, from - 1)
            case .down: to = min(order.count, from + 1)
            case .last: to = order.count
            case .before(let other):
                guard other != id else { return [] }
                guard let index = order.firstIndex(where: { $0.id == other }) else { throw Self.notFound }
                to = index
            }
            guard to != from else { return [] }
            order.insert(place, at: to)
            let previous = to > 0 ? order[to - 1].position : nil, next = to + 1 < order.count ? order[to + 1].position : nil
            // Saved as records: a reminder another writer stored, which the sync server's log lacks, is logged by it.
            if let position = RemindersModel.between(previous, next) {
                var placed = moved
                placed.position = position
                return [.save(placed)]
            }
            // No room: every reminder of the list gets a place a gap apart, in the new order.
            return order.enumerated().compactMap { index, reminder in
                let (position, overflow) = index.multipliedReportingOverflow(by: RemindersModel.positionGap)
                guard !overflow, position != reminder.position else { return nil }
                var placed = reminder
                placed.position = position
                return .save(placed)
            }
        }
        guard !edits.isEmpty else { return }
        try await edit(edits)
    }
}

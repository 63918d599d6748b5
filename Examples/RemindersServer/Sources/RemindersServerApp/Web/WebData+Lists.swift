import Depot
import DepotSync
import Foundation
import Logging
import Reminders

extension WebData {
    /// The colour every new list has unless one is chosen (the command's).
    static let defaultColor: Int64 = 0x4A99_EFFF

    /// A colour as `<input type="color">` sends it (`#rrggbb`), as the model
    /// stores it (0xRRGGBBAA, opaque).
    static func color(_ text: String) throws -> Int64 {
        let hex = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let rgb = Int64(hex, radix: 16) else {
            throw ReminderForm.invalid("a colour is #rrggbb, as #4a99ef")
        }
        return rgb << 8 | 0xFF
    }

    /// Renames and recolours a list the account sees.
    func editList(_ id: UUID, title: String, color: String?) async throws {
        let title = try Self.title(title, of: "a list")
        let color = try color.map(Self.color)
        var list = try await server.store.read { db in
            try Self.mustSee(db, RemindersList.tableName, id, account)
            guard let list = try db.fetchOne(RemindersList.self, "SELECT * FROM \(ident: RemindersList.tableName) WHERE \(ident: "id") = \(id)") else { throw Self.notFound }
            return list
        }
        let before = list
        list.title = title
        if let color { list.color = color }
        guard list != before else { return }
        try await edit([.save(list)])
    }

    /// The names of the accounts a list the account owns is shared with (none for a list shared with it).
    func sharedWith(_ list: UUID, accounts: SyncAccounts, logger: Logger) async throws -> [String] {
        let ids = try await server.shares(of: account, in: RemindersList.tableName)[Self.key(list)] ?? []
        let names = try await accounts.names(of: ids, logger: logger)
        return ids.compactMap { names[$0] }.sorted()
    }
}

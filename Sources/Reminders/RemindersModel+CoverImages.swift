import Depot
import Foundation

/// A list's cover image, kept in a table of its own so listings never read it.
@Columns
struct ListCoverImage: Record, Equatable {
    static let tableName = "remindersListCoverImages"
    static let primaryKey = ["remindersListID"]
    var remindersListID: UUID
    var image: Data
}

extension RemindersModel {
    // MARK: Cover images

    /// Sets a list's cover image (any bytes: Depot stores them as they are), or removes it with nil.
    public func setCoverImage(_ image: Data?, of nameOrID: String) async throws {
        try await store.write(logger: logger) { db in
            let id = try Self.findList(db, nameOrID).id
            try db.delete(ListCoverImage.self, id: id)
            if let image { try db.insert(ListCoverImage(remindersListID: id, image: image)) }
        }
    }

    /// A list's cover image, byte for byte; nil when it has none.
    public func coverImage(of nameOrID: String) async throws -> Data? {
        try await store.read(logger: logger) { db in
            let id = try Self.findList(db, nameOrID).id
            return try db.find(ListCoverImage.self, id: id)?.image
        }
    }
}

import DepotSync
import Foundation
import Hummingbird

// What the sync routes take. The account and share bodies are read as the
// model's are (strictly: an unknown field or a wrong type is a 422); a push
// or a pull is DepotSync's wire form, plain `JSONDecoder` Codable, and a body
// that does not decode is a 400.

/// `POST /sync/accounts` and `POST /sync/sessions`: `{"name", "password"}`.
struct Credentials: Decodable {
    /// Lowercased as read.
    var name: String
    var password: String

    init(from decoder: any Decoder) throws {
        let fields = try BodyFields(decoder, known: ["name", "password"])
        name = try fields.required("name", String.self).lowercased()
        password = try fields.required("password", String.self)
    }

    /// The rules for a new account: a name of 1 to 64 of a-z 0-9 . _ -, a
    /// password of 8 to 200 characters. Sign-in does not check them: a name
    /// or password that breaks them is just wrong.
    func validate() throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._-")
        guard (1...64).contains(name.count), name.allSatisfy(allowed.contains) else {
            throw BodyError("\"name\" is 1 to 64 characters of a-z, 0-9, '.', '_' and '-'")
        }
        guard (8...200).contains(password.count) else { throw BodyError("\"password\" is 8 to 200 characters") }
    }
}

/// `POST /sync/shares`: `{"list": "<uuid>", "with": "<account name>"}`.
struct NewShare: Decodable {
    /// The list's key: its id in lowercase.
    var list: String
    /// The other account's name, lowercased.
    var with: String

    init(from decoder: any Decoder) throws {
        let fields = try BodyFields(decoder, known: ["list", "with"])
        let text = try fields.required("list", String.self)
        guard let id = UUID(uuidString: text) else { throw BodyError("\"list\" must be a list's id, a UUID") }
        list = id.uuidString.lowercased()
        with = try fields.required("with", String.self).lowercased()
    }
}

/// The sync routes' body limits and readers.
enum SyncBody {
    /// A push: 4 MiB.
    static let pushLimit = 4 * 1024 * 1024
    /// Any other sync route's body: 64 KiB.
    static let limit = 64 * 1024

    /// A body in the server's JSON forms (an object, read strictly), up to 64 KiB.
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        try Body.decode(type, from: try await collect(request, upTo: limit))
    }

    /// A body in DepotSync's wire form, up to `limit`.
    ///
    /// - Throws: 413 past the limit; 400 for a body that is not the type's JSON.
    static func wire<T: Decodable>(_ type: T.Type, _ request: Request, upTo limit: Int) async throws -> T {
        let data = try await collect(request, upTo: limit)
        guard !data.isEmpty else { throw BodyError("the body is empty; send a JSON object", isMalformed: true) }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw BodyError("the body is not a valid \(type)\(Self.place(error))", isMalformed: true)
        }
    }

    /// A push in DepotSync's wire form, up to `limit`, read by its own
    /// reader (several times faster than `JSONDecoder` on a push of 500 rows).
    ///
    /// - Throws: 413 past the limit; 400 for a body that is not a push,
    ///   naming what is wrong and at which byte (never a value).
    static func wire(_ type: SyncPush.Type, _ request: Request, upTo limit: Int) async throws -> SyncPush {
        let data = try await collect(request, upTo: limit)
        guard !data.isEmpty else { throw BodyError("the body is empty; send a JSON object", isMalformed: true) }
        do {
            return try SyncPush(wireJSON: data)
        } catch let error as DecodingError {
            guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty else {
                throw BodyError("the body is not a valid SyncPush\(Self.place(error))", isMalformed: true)
            }
            throw BodyError("the body is not a valid SyncPush: \(context.debugDescription)", isMalformed: true)
        }
    }

    /// The whole body, or a 413 that names the limit.
    static func collect(_ request: Request, upTo limit: Int) async throws -> Data {
        var request = request
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw ServerError(status: .contentTooLarge, message: "the body is larger than this route takes (\(size(limit)))", cause: "body too large")
        }
    }

    /// ` (at changes.0.row)`: where a wire body went wrong, by its keys (never a value).
    static func place(_ error: DecodingError) -> String {
        let path: [any CodingKey]
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        @unknown default: path = []
        }
        guard !path.isEmpty else { return "" }
        return " (at \(path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")))"
    }

    static func size(_ bytes: Int) -> String {
        bytes % (1024 * 1024) == 0 ? "\(bytes / (1024 * 1024)) MiB" : "\(bytes / 1024) KiB"
    }
}

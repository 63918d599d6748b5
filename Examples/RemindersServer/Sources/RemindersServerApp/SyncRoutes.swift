import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders

extension RemindersRoutes {
    typealias SyncHandler = @Sendable (Request, BasicRequestContext, SyncEndpoints) async throws -> Response

    /// The sync routes (served with `--sync`): accounts, devices, shares, and
    /// DepotSync's push and pull. Every route but sign-up and sign-in takes
    /// `Authorization: Bearer <token>` (401 without a valid one). Bodies are
    /// at most 64 KiB, a push 4 MiB (413 past that).
    static let syncRoutes: [(method: HTTPRequest.Method, path: String, summary: String, handler: SyncHandler)] = [
        (.post, "/sync/accounts", "a new account and its first device: {name, password} → 201 {account, name, token, device}; 409 name taken", { request, context, sync in
            let credentials = try await SyncBody.decode(Credentials.self, request)
            try credentials.validate()
            return try json(try await sync.accounts.create(credentials, logger: context.logger), .created)
        }),
        (.post, "/sync/sessions", "signs a new device in: {name, password} → {account, name, token, device}; 401 wrong name or password", { request, context, sync in
            let credentials = try await SyncBody.decode(Credentials.self, request)
            return try json(try await sync.accounts.signIn(credentials, logger: context.logger))
        }),
        (.delete, "/sync/sessions", "signs this device out: its token stops working → 204", { request, context, sync in
            let caller = try await sync.caller(request, context)
            _ = try await sync.accounts.deleteDevice(caller.device, of: caller.account, logger: context.logger)
            return Response(status: .noContent)
        }),
        (.get, "/sync/devices", "the account's devices: [{id, createdAt, current}]", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let devices = try await sync.accounts.devices(of: caller.account, logger: context.logger)
            return try json(devices.map { DeviceJSON(id: $0.id, createdAt: $0.createdAt, current: $0.id == caller.device) })
        }),
        (.delete, "/sync/devices/:id", "signs one of the account's devices out → 204; 404 no such device in the account", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let id = try parameter("id", context).lowercased()
            guard try await sync.accounts.deleteDevice(id, of: caller.account, logger: context.logger) else {
                throw ServerError(status: .notFound, message: "the account has no device with this id", cause: "device not found")
            }
            return Response(status: .noContent)
        }),
        (.post, "/sync/push", "applies a push (DepotSync's SyncPush) → SyncPushAnswer; 403 another account's rows; 422 a push that does not fit", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let push = try await SyncBody.wire(SyncPush.self, request, upTo: SyncBody.pushLimit)
            do {
                return try wire(try await sync.server.handle(push, account: caller.account))
            } catch {
                throw ServerError.refusedPush(error)
            }
        }),
        (.post, "/sync/pull", "the rows changed after a cursor (DepotSync's SyncPull, limit 1 to 1000) → SyncPage", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let pull = try await SyncBody.wire(SyncPull.self, request, upTo: SyncBody.limit)
            guard (1...1000).contains(pull.limit) else { throw BodyError("\"limit\" is 1 to 1000") }
            do {
                return try wire(try await sync.server.handle(pull, account: caller.account))
            } catch let refused as SyncPushRefused {
                throw ServerError.refusedPush(refused)   // a device newer than the server
            }
        }),
        (.post, "/sync/wait", "waits until the server changes (a long poll, DepotSync's SyncWait, at most 60 s) → SyncWaitAnswer {head}", { request, context, sync in
            _ = try await sync.caller(request, context)
            let wait = try await SyncBody.wire(SyncWait.self, request, upTo: SyncBody.limit)
            return try wire(try await sync.server.handle(wait))
        }),
        (.get, "/sync/shares", "the account's lists shared with others: [{list, with: [names]}]", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let shares = try await sync.server.shares(of: caller.account, in: RemindersList.tableName)
            let names = try await sync.accounts.names(of: Array(Set(shares.values.joined())), logger: context.logger)
            return try json(shares.keys.sorted().map { list in
                ShareJSON(list: list, with: (shares[list] ?? []).compactMap { names[$0] }.sorted())
            })
        }),
        (.post, "/sync/shares", "shares a list the account owns with another account: {list, with} → 204; 404 no such account; 403 not the owner", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let share = try await SyncBody.decode(NewShare.self, request)
            let other = try await sync.account(named: share.with, context)
            guard other != caller.account else { throw BodyError("a list is shared with another account, not with its owner") }
            do {
                try await sync.server.share(RemindersList.tableName, key: share.list, owner: caller.account, with: other)
            } catch is SyncAccessDenied {
                throw notYourList
            }
            return Response(status: .noContent)
        }),
        (.delete, "/sync/shares/:list/:name", "stops sharing a list with an account → 204; 404 not shared with it", { request, context, sync in
            let caller = try await sync.caller(request, context)
            let (list, name) = (try parameter("list", context), try parameter("name", context).lowercased())
            let other = try await sync.account(named: name, context)
            let key = UUID(uuidString: list)?.uuidString.lowercased() ?? ""
            // Only a share that exists is undone: the server would otherwise record evictions for nothing.
            guard try await sync.server.shares(of: caller.account, in: RemindersList.tableName)[key]?.contains(other) == true else {
                throw ServerError(status: .notFound, message: "the account shares no list with this id with \"\(name)\"", cause: "share not found")
            }
            do {
                try await sync.server.unshare(RemindersList.tableName, key: key, owner: caller.account, with: other)
            } catch is SyncAccessDenied {
                throw notYourList
            }
            return Response(status: .noContent)
        }),
    ]

    static let notYourList = ServerError(status: .forbidden, message: "the account owns no list with this id on the server (a new list is there once a device pushed it)",
                                         cause: "access denied")

    /// A DepotSync wire answer: plain `JSONEncoder`, as the sync transports decode it.
    static func wire<T: Encodable>(_ value: T) throws -> Response {
        wire(json: try JSONEncoder().encode(value))
    }

    /// A page, written by DepotSync's own writer (the same JSON, several times faster).
    static func wire(_ page: SyncPage) throws -> Response {
        wire(json: page.wireJSON())
    }

    private static func wire(json: Data) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}

/// A device as `GET /sync/devices` lists it.
struct DeviceJSON: Encodable {
    var id: String
    var createdAt: Date
    /// Whether it is the device that asked.
    var current: Bool
}

/// A shared list as `GET /sync/shares` lists it.
struct ShareJSON: Encodable {
    var list: String
    /// The names of the accounts it is shared with.
    var with: [String]
}

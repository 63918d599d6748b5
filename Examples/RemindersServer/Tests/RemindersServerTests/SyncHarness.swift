import Depot
import DepotSQLite
import DepotSync
import Foundation
import Hummingbird
import Logging
import Reminders
import RemindersServerApp
import Testing

// The sync server under test: the app with `sync: true` on a fresh SQLite
// file, accounts signed up through the routes, device replicas that make
// real pushes, and a snapshot of everything the server stores.

extension Client {
    /// A request with `Authorization: Bearer <token>` when a token is given.
    func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, token: String?) async throws -> Answer {
        try await send(method, uri, body, headers: token.map { [.authorization: "Bearer \($0)"] } ?? [:])
    }

    /// A request with these headers.
    func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, headers: HTTPFields) async throws -> Answer {
        try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) { response in
            Answer(status: response.status, headers: response.headers, text: String(buffer: response.body))
        }
    }

    /// Signs an account up; the test fails unless the answer is 201.
    func signUp(_ name: String, password: String = "correct horse battery",
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> Session {
        let answer = try await send(.post, "/sync/accounts", #"{"name": "\#(name)", "password": "\#(password)"}"#)
        #expect(answer.status == .created, "\(answer.text)", sourceLocation: sourceLocation)
        return try Session(answer)
    }

    /// Signs a new device in; the test fails unless the answer is 200.
    func signIn(_ name: String, password: String = "correct horse battery",
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> Session {
        let answer = try await send(.post, "/sync/sessions", #"{"name": "\#(name)", "password": "\#(password)"}"#)
        #expect(answer.status == .ok, "\(answer.text)", sourceLocation: sourceLocation)
        return try Session(answer)
    }

    /// A push in the wire form, as `session`'s device.
    func push(_ push: SyncPush, as session: Session) async throws -> Answer {
        try await send(.post, "/sync/push", try wireJSON(push), token: session.token)
    }

    /// A pull in the wire form, as `session`'s device.
    func pull(after cursor: SyncCursor = .start, limit: Int = 100, as session: Session) async throws -> Answer {
        try await send(.post, "/sync/pull", try wireJSON(SyncPull(after: cursor, limit: limit)), token: session.token)
    }
}

/// An account and one of its devices, as sign-up or sign-in answered.
struct Session {
    var account: String
    var name: String
    var token: String
    var device: String

    init(_ answer: Answer) throws {
        let object = answer.object
        account = try #require(object["account"] as? String)
        name = try #require(object["name"] as? String)
        token = try #require(object["token"] as? String)
        device = try #require(object["device"] as? String)
    }
}

/// DepotSync's wire form: plain `JSONEncoder`, as the transports send it.
func wireJSON(_ value: some Encodable) throws -> String {
    String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
}

/// An answer's body in the wire form.
func wire<T: Decodable>(_ type: T.Type, _ answer: Answer) throws -> T {
    try JSONDecoder().decode(type, from: Data(answer.text.utf8))
}

/// Runs `body` against the app in sync mode on a fresh SQLite file; `body`
/// gets the server's store too, to look at what it holds.
func withSyncServer(logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                    _ body: @Sendable (Client, Store) async throws -> Void) async throws {
    let path = temporaryPath()
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let store = try await RemindersRoutes.store(path, logger: Logger(label: "store") { _ in SwiftLogNoOpLogHandler() })
    try await withSyncServer(store, logger: logger, body)
}

/// Runs `body` against the app in sync mode on `store`.
func withSyncServer(_ store: Store, logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                    _ body: @Sendable (Client, Store) async throws -> Void) async throws {
    try await serve({ try await RemindersRoutes.application(store: store, port: 0, logger: logger, sync: true, onServerRunning: $0) }) { client in
        try await body(Client(client: client), store)
    }
}

/// Everything the sync server stores, one line a row: a refused request changes none of it.
func serverState(_ store: Store) async throws -> [String] {
    try await store.read { db in
        try db.fetchAll(String.self, """
            SELECT 'row ' || "tbl" || ' ' || "row_key" || ' ' || "cl" || ' ' || "version" || ' ' || "account" || ' ' || "root_key" FROM "depot_sync_server_rows"
            UNION ALL SELECT 'clock ' || "tbl" || ' ' || "row_key" || ' ' || "col" || ' ' || "hlc" || ' ' || "node" FROM "depot_sync_server_clocks"
            UNION ALL SELECT 'hidden ' || "tbl" || ' ' || "row_key" FROM "depot_sync_server_hidden"
            UNION ALL SELECT 'client ' || "client" || ' ' || "last_push" || ' ' || "applied" || ' ' || "account" FROM "depot_sync_server_clients"
            UNION ALL SELECT 'share ' || "root_key" || ' ' || "account" FROM "depot_sync_server_shares"
            UNION ALL SELECT 'evicted ' || "account" || ' ' || "tbl" || ' ' || "row_key" FROM "depot_sync_server_evictions"
            UNION ALL SELECT 'state ' || "version" || ' ' || "hlc" FROM "depot_sync_server_state"
            UNION ALL SELECT 'list ' || "id" || ' ' || "title" || ' ' || "color" || ' ' || "position" FROM "remindersLists"
            UNION ALL SELECT 'reminder ' || "id" || ' ' || "title" || ' ' || "isCompleted" || ' ' || "remindersListID" FROM "reminders"
            UNION ALL SELECT 'account ' || "id" || ' ' || "name" FROM "syncAccounts"
            UNION ALL SELECT 'device ' || "id" || ' ' || "accountID" FROM "syncDevices"
            ORDER BY 1
            """)
    }
}

/// A device: an SQLite replica of the reminders model on a temporary file.
struct Replica {
    let model: RemindersModel
    let path: String
    var store: Store { model.store }

    static func make() async throws -> Replica {
        let path = temporaryPath()
        let model = RemindersModel(store: try Store.sqlite(at: path))
        try await model.migrate()
        try await model.enableSync()
        return Replica(model: model, path: path)
    }

    /// The replica's node id: a push's client.
    func node() async throws -> UUID {
        try await store.read { db in try db.sync.node() }
    }

    /// Its next push: every change waiting, as push `number`.
    func push(_ number: Int64 = 1) async throws -> SyncPush {
        let changes = try await store.write { db in try db.sync.pendingChanges(try RemindersModel.syncedTables()).changes }
        return SyncPush(client: try await node(), number: number, changes: changes)
    }

    func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A row's values written now by `node`: a hand-made change.
func handWritten(_ table: String, key: String, _ values: [String: Value], by node: UUID) -> SyncChange {
    let stamp = SyncStamp(time: HybridTimestamp(rawValue: Int64(Date().timeIntervalSince1970 * 1000) << 16), node: node)
    var row = SyncRow()
    row.write(values, stamp: stamp)
    return SyncChange(table: table, key: key, row: row)
}

import Depot
import DepotSync
import Foundation
import Hummingbird
import Reminders

/// What the sync routes serve: the model's sync server and the accounts.
struct SyncEndpoints: Sendable {
    let server: SyncServer
    let accounts: SyncAccounts

    /// Makes the model's store a sync server, on any engine (the model's
    /// `enableSync()` would make an SQLite store a device replica instead),
    /// brings a server installed before accounts up to date, and creates the
    /// accounts' tables.
    ///
    /// - Throws: ``StartupError`` for an SQLite file that is a device's replica.
    static func prepare(_ model: RemindersModel) async throws -> SyncEndpoints {
        let store = model.store
        try await store.write { db in
            if try db.sync.isReplica() {
                throw StartupError("this database is a device's sync replica; a sync server needs a database of its own")
            }
            if try !SyncServer.isInstalled(in: db) {
                try SyncServer.installSyncServer(in: db)
            } else {
                // Installed by an earlier version: brought up to date (rows from before accounts go to the
                // empty account, which no one signs in as).
                try SyncServer.updateSyncServer(in: db)
            }
            // The web app's live pages observe what each account sees.
            try SyncServer.enableObservation(in: db)
        }
        let accounts = SyncAccounts(store: store)
        try await accounts.migrate()
        return SyncEndpoints(server: try model.syncServer(), accounts: accounts)
    }

    /// The device and account of a request's bearer token, or a 401.
    func caller(_ request: Request, _ context: BasicRequestContext) async throws -> Caller {
        try await accounts.caller(try BearerToken(request), logger: context.logger)
    }

    /// The id of the account with this name, or a 404.
    func account(named name: String, _ context: BasicRequestContext) async throws -> String {
        guard let account = try await accounts.account(named: name, logger: context.logger) else {
            throw ServerError(status: .notFound, message: "no account is named \"\(name)\"", cause: "account not found")
        }
        return account.id
    }
}

extension RemindersRoutes {
    /// The routes a sync server lists at `GET /`: `/`, `/health` and the sync routes.
    public static let syncIndex: [(method: String, path: String, summary: String)] =
        routes.filter { ["/", "/health"].contains($0.path) }.map { ($0.method.rawValue, $0.path, $0.summary) }
        + syncRoutes.map { ($0.method.rawValue, $0.path, $0.summary) }

    /// What the model's routes answer on a sync server: they would show every account's rows.
    static let modelRoutesOff = ServerError(status: .notFound, message: "this server syncs: the model's routes are off; see GET / for the routes",
                                            cause: "model routes off")

    /// The router of a sync server: `/`, `/health`, the sync routes, and a
    /// 404 for each of the model's routes.
    static func syncRouter(_ base: RemindersModel, _ sync: SyncEndpoints) -> Router<BasicRequestContext> {
        var served: [Route] = []
        for route in routes {
            let handler = route.handler
            switch route.path {
            case "/":
                served.append(Route(route.method, route.path) { _, _ in
                    try json(syncIndex.map { ["method": $0.method, "path": $0.path, "summary": $0.summary] })
                })
            case "/health":
                served.append(Route(route.method, route.path) { request, context in
                    var model = base
                    model.logger = context.logger
                    return try await handler(request, context, model)
                })
            default:
                served.append(Route(route.method, route.path, listed: false) { _, _ in throw modelRoutesOff })
            }
        }
        for route in syncRoutes {
            let handler = route.handler
            served.append(Route(route.method, route.path) { request, context in try await handler(request, context, sync) })
        }
        served += webRoutes(sync)
        return router(served)
    }
}

import Depot
import DepotLifecycle
import DepotPostgres
import DepotSQLite
import Foundation
import Hummingbird
import Logging
import Reminders

extension HomeScreen: ResponseEncodable {}
extension ListSummary: ResponseEncodable {}
extension RemindersList: ResponseEncodable {}
extension ReminderDetail: ResponseEncodable {}

/// What a client sends to add a reminder.
public struct NewReminder: Decodable, Sendable {
    public var title: String
    public var notes: String?
    public var dueDate: Date?
    public var isFlagged: Bool?
}

/// What a client sends to add a list.
public struct NewList: Decodable, Sendable {
    public var title: String
}

/// The server's routes over a reminders model.
public enum RemindersRoutes {
    /// The router: JSON in and out; model errors become 404 or 400, database errors 503 or 500.
    /// Each request's statements are logged through the request's logger, with its id.
    public static func router(_ base: RemindersModel) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: LogRequestsMiddleware(.info))
        @Sendable func model(_ context: BasicRequestContext) -> RemindersModel {
            var model = base
            model.logger = context.logger
            return model
        }
        router.get("home") { _, context in try await model(context).homeScreen() }
        router.get("lists") { _, context in try await model(context).lists() }
        router.post("lists") { request, context -> EditedResponse<RemindersList> in
            let model = model(context)
            let new = try await request.decode(as: NewList.self, context: context)
            return EditedResponse(status: .created, response: try await mapped { try await model.createList(title: new.title) })
        }
        router.get("lists/:list/reminders") { _, context -> [ReminderDetail] in
            let model = model(context)
            let list = try context.parameters.require("list")
            return try await mapped { try await model.reminders(in: list).reminders }
        }
        router.post("lists/:list/reminders") { request, context -> EditedResponse<ReminderDetail> in
            let model = model(context)
            let list = try context.parameters.require("list")
            let new = try await request.decode(as: NewReminder.self, context: context)
            let draft = ReminderDraft(title: new.title, notes: new.notes, dueDate: new.dueDate.map { .some($0) }, isFlagged: new.isFlagged)
            return EditedResponse(status: .created, response: try await mapped { try await model.addReminder(draft, to: list) })
        }
        router.post("reminders/:id/complete") { _, context -> ReminderDetail in
            let model = model(context)
            let id = try context.parameters.require("id", as: Int64.self)
            return try await mapped { try await model.complete(id) }
        }
        router.get("search") { request, context -> [ReminderDetail] in
            let model = model(context)
            let text = request.uri.queryParameters.get("q") ?? ""
            return try await mapped { try await model.search(text).details }
        }
        return router
    }

    /// Runs `body`, turning the model's and the store's errors into HTTP errors.
    static func mapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as RemindersError {
            throw HTTPError(.notFound, message: "\(error)")
        } catch let error as DatabaseError {
            switch error.kind {
            case .unique, .check, .notNull, .foreignKey, .encoding: throw HTTPError(.badRequest, message: error.message)
            case .connection, .timeout, .busy: throw HTTPError(.serviceUnavailable, message: "the database is unavailable; try again")
            default: throw HTTPError(.internalServerError)
            }
        }
    }

    /// The store a URL names: a PostgreSQL URL, or else an SQLite file path.
    public static func store(_ location: String, logger: Logger) async throws -> Store {
        if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
            var configuration = try PostgresConfiguration(url: location)
            configuration.store.logger = logger
            configuration.store.waitsForServer = true
            return try await Store.postgres(configuration)
        }
        var configuration = SQLiteConfiguration()
        configuration.store.logger = logger
        return try Store.sqlite(at: location, configuration)
    }

    /// The application: the routes, the store as a service shut down after the
    /// HTTP server (so requests in flight finish first).
    public static func application(store: Store, host: String = "127.0.0.1", port: Int = 8080, logger: Logger) async throws -> some ApplicationProtocol {
        let model = RemindersModel(store: store)
        try await model.migrate()
        return Application(
            router: router(model),
            configuration: .init(address: .hostname(host, port: port)),
            services: [StoreService(store)],
            logger: logger)
    }
}

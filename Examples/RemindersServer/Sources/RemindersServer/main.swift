import Foundation
import Logging
import RemindersServerApp

// `swift run RemindersServer [database] [port]`: an SQLite file by default, or a postgres:// URL.
let arguments = CommandLine.arguments.dropFirst()
let location = arguments.first ?? "reminders-server.sqlite"
let port = arguments.dropFirst().first.flatMap { Int($0) } ?? 8080
var logger = Logger(label: "reminders-server")
logger.logLevel = .info
let store = try await RemindersRoutes.store(location, logger: logger)
let app = try await RemindersRoutes.application(store: store, port: port, logger: logger)
try await app.runService()

import ArgumentParser
import Foundation
import Hummingbird
import Logging
import RemindersServerApp

/// `RemindersServer [--host H] [--port P] [--database D] [--sync]`: the reminders
/// model over HTTP, or with `--sync` a DepotSync server with accounts.
@main
struct RemindersServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "RemindersServer",
        abstract: "The reminders model as JSON over HTTP, on SQLite or PostgreSQL.",
        discussion: """
            Routes: GET / lists them. Each request logs one line (method, route, status, duration).
            With --sync the server serves DepotSync under /sync (accounts, devices, shares, push and pull)
            and not the model's routes, which would show every account's reminders.
            """)

    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port to listen on (0 picks a free one).") var port = 8080
    @Option(help: "An SQLite file path (its folder must exist), or a postgres:// URL.") var database = "reminders-server.sqlite"
    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical.") var logLevel = "info"
    @Flag(help: "Serve DepotSync with accounts (/sync/...) instead of the model's routes.") var sync = false
    @Option(help: "With --sync: the days the sync log remembers a deleted row (a device offline longer starts over); compacted at start and daily. 0: never.")
    var keepDeletesDays = 30

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port is 0 to 65535") }
        guard (0...36_500).contains(keepDeletesDays) else { throw ValidationError("--keep-deletes-days is 0 (never compact) to 36500") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level is trace, debug, info, notice, warning, error or critical") }
    }

    func run() async throws {
        // Logs go to standard output; standard error holds only a failure to start.
        LoggingSystem.bootstrap(StreamLogHandler.standardOutput)
        var logger = Logger(label: "reminders-server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        do {
            let store = try await RemindersRoutes.store(database, logger: logger)
            let (host, database, logger, mode) = (host, database, logger, sync ? "sync" : "model")
            let keep: Duration? = keepDeletesDays > 0 ? .seconds(keepDeletesDays * 86_400) : nil
            let app = try await RemindersRoutes.application(store: store, host: host, port: port, logger: logger, sync: sync, keepDeletes: keep) { port in
                // The port the server listens on: the one picked when --port is 0.
                logger.info("serving", metadata: ["database": .string(RemindersRoutes.redacted(database)), "address": .string("\(host):\(port)"),
                                                  "routes": .string(mode)])
            }
            try await app.runService()
        } catch {
            FileHandle.standardError.write(Data("RemindersServer: \(Self.message(error, database: database, host: host, port: port))\n".utf8))
            throw ExitCode(1)
        }
    }

    /// A listening failure names the address; the rest is the app's one line.
    static func message(_ error: any Error, database: String, host: String, port: Int) -> String {
        let text = "\(error)"
        if text.contains("bind(") || text.contains("Address already in use") || text.contains("errno") {
            let reason = text.components(separatedBy: "): ").last ?? text
            return "cannot listen on \(host):\(port): \(reason)"
        }
        return RemindersRoutes.startupMessage(error, location: database)
    }
}

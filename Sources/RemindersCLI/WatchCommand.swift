import ArgumentParser
import Depot
import DepotPostgres
import DepotSync
import Foundation
import Reminders
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a screen and redraw it whenever its data changes, in this process or any other.",
        discussion: """
            SCREEN is home (the default), a smart list (today, scheduled, flagged, completed, all) \
            or a list's title or id. Run it in one terminal and change reminders from another: the \
            screen follows, on SQLite and on PostgreSQL. Ctrl-C stops it. Without a terminal, each \
            drawing ends with a line of dashes (or, with --json, is one line of JSON). With --sync, a \
            signed-in device also syncs while it watches: its changes go to the server at once, and \
            other devices' changes are drawn as they reach the server (a long poll, no polling).
            """
    )
    @OptionGroup var options: GlobalOptions
    @Argument(help: "home, a smart list, or a list's title or id.") var screen = "home"
    @Option(help: "Stop after this many drawings (for scripts).") var count: Int?
    @Flag(help: "Sync with the device's server while watching (a signed-in SQLite device).") var sync = false
    @OptionGroup var page: PageOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count takes a number of drawings, 1 or more, not \(count)") }
    }

    func run() async throws {
        try await running {
            let model = try await options.model(reading: true)
            let watched: WatchedScreen
            if screen.lowercased() == "home" {
                watched = .home
            } else if let view = SmartList(rawValue: screen.lowercased()) {
                watched = .smartList(view)
            } else {
                // By id: a rename while watching keeps the same list on screen.
                let list = try await model.list(named: screen)
                watched = .list(list.id.uuidString)
            }
            // A screenful on a terminal (less the two lines under it): each drawing reads no more.
            let limit = page.all ? nil : page.limit ?? (options.json ? nil : Output.screenRows.map { max(1, $0 - 2) })
            let reachability = Reachability()
            let task = Task {
                var drawn = 0
                while true {
                    do {
                        for try await content in model.watch(watched, limit: limit) {
                            reachability.reached()
                            try draw(content, model: model)
                            drawn += 1
                            if let count, drawn >= count { return }
                        }
                        return
                    } catch let error as DatabaseError where Reachability.meansUnreachable(error) {
                        // Watch again in a moment: its first read says whether the database is back.
                        reachability.lost(error)
                        try await Task.sleep(for: .seconds(1))
                    }
                }
            }
            // A server can go away while nothing changes (no read to fail): a
            // light read every 2 seconds notices. An SQLite file cannot.
            let probe = RemindersDatabases.isURL(DatabaseLocation.resolve(options.database))
                ? Task { await reachability.probe(model.store) } : nil
            let syncing = sync ? try await Self.syncWhileWatching(model) : nil
            let signals = Self.stopOnSignals { task.cancel(); probe?.cancel(); syncing?.cancel() }
            defer {
                signals.forEach { $0.cancel() }
                probe?.cancel()
                syncing?.cancel()
            }
            try await task.value
        }
    }

    /// Syncs the device continuously beside the watch; each failure says so
    /// on stderr once (with when it tries again), and so does the sync that
    /// works again.
    private static func syncWhileWatching(_ model: RemindersModel) async throws -> Task<Void, Never> {
        let account = try await model.syncAccount()
        let (client, server) = try SyncCommand.client(model, account)
        try await model.enableSync()
        final class Health: @unchecked Sendable {
            let lock = NSLock()
            var failing = false
        }
        let health = Health()
        return Task {
            do {
                try await client.syncContinuously { event in
                    switch event {
                    case .synced:
                        if health.lock.withLock({ () -> Bool in defer { health.failing = false }; return health.failing }) {
                            Reachability.say("syncing with \(server) again")
                        }
                        Task { try? await model.recordSync(at: Date()) }
                    case .failed(let error, let retryIn):
                        if health.lock.withLock({ () -> Bool in defer { health.failing = true }; return !health.failing }) {
                            let reason = "\(SyncCommand.failure(error, server: server))".split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
                            Reachability.say("sync failed (\(Output.safe(reason))); trying again in \(retryIn)")
                        }
                    }
                }
            } catch is CancellationError {
            } catch {
                Reachability.say("sync stopped: \(Output.safe("\(error)"))")
            }
        }
    }

    private func draw(_ content: ScreenContent, model: RemindersModel) throws {
        defer { fflush(nil) }
        if options.json {
            let encoder = RemindersJSON.encoder()
            let data: Data
            switch content {
            case .home(let home): data = try encoder.encode(HomeJSON(home))
            case .smartList(_, let reminders, _): data = try encoder.encode(reminders.map(ReminderDetailJSON.init))
            case .list(let screen): data = try encoder.encode(ListScreenJSON(screen))
            }
            print(String(decoding: data, as: UTF8.self))
            return
        }
        let terminal = isatty(STDOUT_FILENO) == 1
        if terminal { print("\u{1B}[H\u{1B}[2J", terminator: "") }
        switch content {
        case .home(let home):
            Output.home(home)
        case .smartList(let view, let reminders, let total):
            Output.heading(view.rawValue.capitalized, color: nil)
            Output.reminders(reminders, of: total, timeZone: model.timeZone, now: model.now(), showList: true)
        case .list(let screen):
            Output.heading(screen.list.title, color: screen.list.color)
            Output.reminders(screen.reminders, of: screen.total, timeZone: model.timeZone, now: model.now(), showList: false)
        }
        if terminal {
            print("")
            print(Output.styled("watching, drawn at \(Output.format(model.now(), model.timeZone)) (Ctrl-C to stop)", .dim))
        } else {
            print("---")
        }
    }

    /// Runs `stop` on the first SIGINT or SIGTERM, so the stores close and
    /// SQLite tidies its files; whatever the command is doing then (a long
    /// drawing, a wait for an unreachable server), the process ends within half
    /// a second, with the shell's status for the signal (130, 143).
    private static func stopOnSignals(_ stop: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                stop()
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
                    fflush(nil)
                    _exit(128 + number)
                }
            }
            source.resume()
            return source
        }
    }
}

/// Whether `watch`'s database answers: says on stderr when it stops and when it is back.
final class Reachability: @unchecked Sendable {
    private let lock = NSLock()
    private var unreachable = false

    static func meansUnreachable(_ error: DatabaseError) -> Bool {
        error.kind == .connection || error.kind == .timeout
    }

    func lost(_ error: DatabaseError) {
        guard lock.withLock({ () -> Bool in defer { unreachable = true }; return !unreachable }) else { return }
        let reason = error.message.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        Self.say("the database is unreachable (\(Output.safe(reason))); the screen follows again when it is back")
    }

    func reached() {
        guard lock.withLock({ () -> Bool in defer { unreachable = false }; return unreachable }) else { return }
        Self.say("the database is back")
    }

    /// Reads `SELECT 1` every 2 seconds until cancelled.
    func probe(_ store: Store) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(2))
                _ = try await store.read { db in try db.fetchOne(Int.self, "SELECT 1") }
                reached()
            } catch let error as DatabaseError where Self.meansUnreachable(error) {
                lost(error)
            } catch {
                return
            }
        }
    }

    static func say(_ line: String) {
        let time = Date().formatted(.dateTime.hour(.twoDigits(amPM: .omitted)).minute(.twoDigits).second(.twoDigits))
        FileHandle.standardError.write(Data("reminders: \(time) \(line)\n".utf8))
    }
}

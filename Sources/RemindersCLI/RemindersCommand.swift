import ArgumentParser
import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders

/// The `reminders` command: `await RemindersCommand.start()` runs it with the
/// process's arguments. Register other backends' URLs first with
/// ``RemindersDatabases/register(scheme:open:redact:)``.
public struct RemindersCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "reminders",
        abstract: "Lists, reminders and tags, kept by Depot in SQLite or PostgreSQL.",
        discussion: """
            The database is an SQLite file at \(DatabaseLocation.defaultPath) unless --database \
            or REMINDERS_DATABASE names another file or a postgres:// URL. It is created, with its \
            migrations, on first use.

            Every subcommand takes these, before or after its name:
              --database PATH|URL  an SQLite file, or postgres://user:pass@host/db
              --time-zone ZONE     whose days 'today' and 'overdue' mean (default: here)
              --json               JSON instead of a table
              --verbose            errors whole, with the SQL and the engine's detail
            'reminders help SUBCOMMAND' shows a subcommand's own options.
            """,
        version: "reminders 0.9 (Depot, commit \(buildCommit))",
        subcommands: [
            Stats.self, ListsCommand.self, Show.self, ViewCommand.self, Tagged.self, Detail.self, Add.self, Edit.self,
            Complete.self, FlagCommand.self, Move.self, Order.self, Delete.self, TagCommand.self, Untag.self, TagsCommand.self, Search.self, Watch.self, SyncCommand.self, Demo.self, SchemaCheckCommand.self,
        ],
        defaultSubcommand: Stats.self
    )

    /// Runs the command with the process's arguments, and exits: what an
    /// executable's `main.swift` calls, after registering its databases.
    ///
    /// The options every subcommand takes move after the subcommand
    /// (`reminders --database URL stats` works as `reminders stats --database URL`),
    /// and an unknown first word is named as an unknown subcommand.
    public static func start() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = Set(configuration.subcommands.map { $0._commandName } + ["help"])
        if arguments.first == "help", arguments.count > 1, !names.contains(arguments[1]) {
            FileHandle.standardError.write(Data("reminders: no subcommand \"\(arguments[1])\" to help with (reminders --help lists them)\n".utf8))
            Self.exit(withError: ExitCode.validationFailure)
        }
        switch GlobalArguments.reorder(arguments, subcommands: names) {
        case .arguments(let reordered):
            await main(reordered)
        case .unknownSubcommand(let word):
            FileHandle.standardError.write(Data("reminders: unknown subcommand \"\(word)\" (reminders --help lists them)\n".utf8))
            Self.exit(withError: ExitCode.validationFailure)
        }
    }
}

/// Moves the global options given before the subcommand to after it.
enum GlobalArguments {
    enum Outcome: Equatable {
        case arguments([String])
        case unknownSubcommand(String)
    }

    /// Options that take a value, and flags, that every subcommand accepts.
    static let valued: Set<String> = ["--database", "--time-zone"]
    static let flags: Set<String> = ["--json", "--verbose"]

    static func reorder(_ arguments: [String], subcommands: Set<String>) -> Outcome {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if valued.contains(name) {
                leading.append(argument)
                if !argument.contains("="), index + 1 < arguments.count {
                    leading.append(arguments[index + 1])
                    index += 1
                }
                index += 1
            } else if flags.contains(argument) {
                leading.append(argument)
                index += 1
            } else {
                break
            }
        }
        var rest = Array(arguments[index...])
        if let word = rest.first, !word.hasPrefix("-"), !subcommands.contains(word) {
            return .unknownSubcommand(word)
        }
        guard !leading.isEmpty else { return .arguments(arguments) }
        // After everything the subcommand takes, but before a `--` terminator.
        let end = rest.firstIndex(of: "--") ?? rest.endIndex
        rest.insert(contentsOf: leading, at: end)
        return .arguments(rest)
    }
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "An SQLite file path or a postgres://user:password@host:port/db URL.")
    var database: String?

    @Option(name: .long, help: "The time zone whose calendar days 'today' and 'overdue' mean (default: this machine's).")
    var timeZone: String?

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @Flag(name: .long, help: "Print errors whole, with the SQL and the engine's detail.")
    var verbose = false

    /// The model over the chosen database, migrated.
    ///
    /// A database that holds anything but the reminders tables is refused
    /// untouched: an SQLite file is first looked into read-only (its bytes, its
    /// journal mode and the files beside it stay as they were), and only a
    /// reminders database, or an empty one a writing command sets up, is
    /// opened for writing. An empty one is refused to a reading command
    /// (`reading`) on a database other than the default one: looking never writes.
    func model(reading: Bool = false) async throws -> RemindersModel {
        let location = DatabaseLocation.resolve(database)
        if reading, !location.isEmpty, !RemindersDatabases.isURL(location), location != DatabaseLocation.defaultPath,
           !FileManager.default.fileExists(atPath: location) {
            // Opening would create the file: looking never writes.
            throw RemindersError.invalidInput("there is no database at \(location); add a list or a reminder to start one there")
        }
        if !location.isEmpty, !RemindersDatabases.isURL(location), FileManager.default.fileExists(atPath: location) {
            var looking = SQLiteConfiguration()
            looking.isReadOnly = true
            let glance: Store
            do {
                glance = try Store.sqlite(at: location, looking)
            } catch let error as DatabaseError where error.engineCode?.hasPrefix("SQLITE_NOTADB") == true {
                throw RemindersError.invalidInput("\(location) is not a reminders database (SQLite says: file is not a database)")
            }
            let contents = await Result(awaiting: { try await RemindersSchema.contents(of: glance) })
            await glance.close()
            try accept(contents, at: location, reading: reading)
        }
        let store = try await DatabaseLocation.open(database)
        OpenStores.shared.add(store)
        let model = try RemindersModel(store: store, timeZone: zone())
        try accept(await Result(awaiting: { try await RemindersSchema.contents(of: store) }), at: location, reading: reading)
        try await model.migrate()
        return model
    }

    /// Refuses a database that is not ours, or an empty one to a reading command.
    private func accept(_ contents: Result<RemindersSchema.Contents, any Error>, at location: String, reading: Bool) throws {
        let shown = RemindersDatabases.redacted(location)
        let found: RemindersSchema.Contents
        do {
            found = try contents.get()
        } catch let error as DatabaseError where error.engineCode?.hasPrefix("SQLITE_NOTADB") == true {
            throw RemindersError.invalidInput("\(location) is not a reminders database (SQLite says: file is not a database)")
        }
        switch found {
        case .reminders:
            break
        case .other(let tables):
            throw RemindersError.invalidInput("\(shown) is not a reminders database (it holds \(tables.joined(separator: ", "))\(tables.count == 3 ? ", …" : "")); name another with --database")
        case .empty where reading && location != DatabaseLocation.defaultPath:
            throw RemindersError.invalidInput("\(shown) holds no reminders yet; add a list or a reminder to start it (reminders lists add TITLE --database …)")
        case .empty:
            break
        }
    }

    func zone() throws -> TimeZone {
        guard let timeZone else { return TimeZone.current }
        guard let zone = TimeZone(identifier: timeZone) else {
            throw RemindersError.invalidInput("unknown time zone \"\(timeZone)\" (try UTC or Europe/Paris)")
        }
        return zone
    }
}

/// Runs a command body: any failure becomes one line on stderr and exit status 1.
func running(_ body: () async throws -> Void) async throws {
    do {
        try await body()
        await OpenStores.shared.closeAll()
    } catch let error as ExitCode {
        await OpenStores.shared.closeAll()
        throw error
    } catch let error as DatabaseError where error.engineCode?.hasPrefix("SQLITE_READONLY") == true {
        await OpenStores.shared.closeAll()
        Output.error(RemindersError.invalidInput("cannot write to \(OpenStores.shared.location ?? "the database"): the file is read-only (reading commands work)"))
        throw ExitCode(1)
    } catch {
        await OpenStores.shared.closeAll()
        Output.error(error)
        throw ExitCode(1)
    }
}

/// The stores a command opened, closed before it exits so SQLite checkpoints its
/// write-ahead log and removes the -wal and -shm files.
final class OpenStores: @unchecked Sendable {
    static let shared = OpenStores()
    private let lock = NSLock()
    private var stores: [Store] = []
    private var openedLocation: String?

    /// The SQLite file the command opened, for messages.
    var location: String? {
        get { lock.withLock { openedLocation } }
        set { lock.withLock { openedLocation = newValue } }
    }

    func add(_ store: Store) { lock.withLock { stores.append(store) } }

    func closeAll() async {
        let open = lock.withLock { () -> [Store] in
            defer { stores.removeAll() }
            return stores
        }
        for store in open { await store.close() }
    }
}

/// Where the database is, and how to open it.
enum DatabaseLocation {
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        #if os(macOS)
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first?.path ?? NSHomeDirectory()
        #else
        // $HOME first: Foundation's NSHomeDirectory() on Linux reads the password database instead.
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share"
        #endif
        return base + "/depot-reminders/reminders.sqlite"
    }

    /// `REMINDERS_DATABASE`, when set and not empty.
    static var fromEnvironment: String? {
        ProcessInfo.processInfo.environment["REMINDERS_DATABASE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func resolve(_ option: String?) -> String {
        option ?? fromEnvironment ?? defaultPath
    }

    static func open(_ option: String?) async throws -> Store {
        let location = resolve(option)
        if let store = try await RemindersDatabases.open(location) {
            return store
        }
        guard !location.isEmpty else {
            throw RemindersError.invalidInput("--database names no file: give an SQLite file path or a postgres:// URL")
        }
        let folder = URL(fileURLWithPath: location).deletingLastPathComponent()
        if folder.path == URL(fileURLWithPath: defaultPath).deletingLastPathComponent().path {
            // Only the default folder (the default database's, the demo's) is made;
            // a path you name must be in a folder that exists.
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw RemindersError.invalidInput("cannot create the folder \(folder.path) for the database")
            }
        } else {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw RemindersError.invalidInput("there is no folder \(folder.path) for the database \(location)")
            }
        }
        do {
            let store = try Store.sqlite(at: location)
            OpenStores.shared.location = location
            return store
        } catch let error as DatabaseError where error.engineCode?.hasPrefix("SQLITE_NOTADB") == true {
            throw RemindersError.invalidInput("\(location) is not a reminders database (SQLite says: file is not a database)")
        }
    }
}

extension Result where Failure == any Error {
    /// What an async body returned, or what it threw.
    fileprivate init(awaiting body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

import ArgumentParser
import Depot
import DepotSync
import Foundation
import Reminders
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync this database with a reminders server: the same lists on every device of an account.",
        discussion: """
            Sign in once (reminders sync sign-in NAME --server URL; sign-up makes the account), then \
            'reminders sync' sends this device's changes and brings the others'. Every other command \
            works offline as before; changes wait here until the next sync. The password is read \
            from REMINDERS_PASSWORD, else from the terminal (or one line of standard input).
            """,
        subcommands: [Now.self, SignUp.self, SignIn.self, SignOut.self, Share.self, Unshare.self],
        defaultSubcommand: Now.self
    )

    struct Now: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "now", abstract: "Sync now (the default); --status tells where sync stands.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Show the server, the account, the changes waiting and the last sync, without syncing.") var status = false

        func run() async throws {
            try await running {
                let model = try await options.model(reading: status)
                let account = try await model.syncAccount()
                if status { return try await SyncCommand.showStatus(model, account, json: options.json) }
                let (client, server) = try SyncCommand.client(model, account)
                try await model.enableSync()
                let report: SyncReport
                do {
                    report = try await client.sync()
                } catch {
                    throw SyncCommand.failure(error, server: server)
                }
                try await model.recordSync(at: Date())
                print("Synced with \(server) as \(account.accountName ?? ""): sent \(report.sent) change\(report.sent == 1 ? "" : "s"); up to date.")
                for line in try await SyncCommand.reportLines(report, model) { print(line) }
            }
        }
    }

    /// What signing up and signing in take.
    struct Credentials: ParsableArguments {
        @Argument(help: "The account's name (a-z, 0-9, . _ -).") var name: String
        @Option(help: "The server's URL, such as http://127.0.0.1:8080.") var server: String
    }

    struct SignUp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign-up", abstract: "Make an account on a server and sign this device in.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var account: Credentials

        func run() async throws {
            try await running { try await SyncCommand.signIn(options, name: account.name, server: account.server, create: true) }
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign-in", abstract: "Sign this device in to an account on a server.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var account: Credentials

        func run() async throws {
            try await running { try await SyncCommand.signIn(options, name: account.name, server: account.server, create: false) }
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sign-out", abstract: "Sign this device out; its reminders stay here.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await running {
                let model = try await options.model(reading: true)
                let account = try await model.syncAccount()
                guard let server = account.server.flatMap(URL.init(string:)), let token = account.token else {
                    return print("This device is not signed in.")
                }
                do {
                    try await SyncAccountClient(server: server, token: token).signOut()
                } catch let error as SyncHTTPError where error.status == 401 {
                    // Signed out already (from another device): forget the token all the same.
                } catch {
                    throw SyncCommand.failure(error, server: server.absoluteString)
                }
                try await model.signOut()
                print("Signed out of \(server.absoluteString); the reminders stay on this device.")
            }
        }
    }

    /// What sharing and unsharing take.
    struct ShareArguments: ParsableArguments {
        @Argument(help: "The list's title or number.") var list: String
        @Option(help: "The other account's name.") var with: String
    }

    struct Share: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "share", abstract: "Share a list with another account; its devices get it at their next sync.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var share: ShareArguments

        func run() async throws {
            try await running { try await SyncCommand.share(options, list: share.list, with: share.with, shared: true) }
        }
    }

    struct Unshare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unshare", abstract: "Stop sharing a list; the other account's devices forget it at their next sync.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var share: ShareArguments

        func run() async throws {
            try await running { try await SyncCommand.share(options, list: share.list, with: share.with, shared: false) }
        }
    }
}

extension SyncCommand {
    /// A client over HTTP for a signed-in database, and the server's URL for messages.
    static func client(_ model: RemindersModel, _ account: SyncAccount) throws -> (SyncClient, String) {
        try requireDevice(model)
        guard let text = account.server, let server = URL(string: text), let token = account.token else {
            throw RemindersError.invalidInput("this device is not signed in: reminders sync sign-in NAME --server URL (or sign-up to make the account)")
        }
        let transport = HTTPSyncTransport(base: SyncAccountClient(server: server).syncBase, token: token)
        return (try model.syncClient(transport: transport), text)
    }

    /// Sync runs on a device's database, on an engine that records its
    /// writes (SQLite); a server's engine (PostgreSQL, MariaDB) serves it.
    static func requireDevice(_ model: RemindersModel) throws {
        let dialect = model.store.dialect
        guard dialect.capturesChanges else {
            throw RemindersError.invalidInput("reminders sync syncs a device's database (SQLite); a \(dialect.engineName) database is a server's: serve it with RemindersServer --sync")
        }
    }

    static func signIn(_ options: GlobalOptions, name: String, server text: String, create: Bool) async throws {
        guard let server = URL(string: text), server.scheme == "http" || server.scheme == "https", server.host != nil else {
            throw RemindersError.invalidInput("--server must be an http:// or https:// URL, such as http://127.0.0.1:8080")
        }
        let model = try await options.model()
        try requireDevice(model)
        let password = try readPassword()
        let accounts = SyncAccountClient(server: server)
        let session: SyncAccountClient.Session
        do {
            session = create ? try await accounts.signUp(name: name, password: password) : try await accounts.signIn(name: name, password: password)
        } catch let error as SyncHTTPError where error.status == 401 {
            // At sign-in a 401 is the name or the password, not a device the server forgot.
            throw RemindersError.invalidInput("\(text) does not know that name with that password (\(error.message)); check both, or sign up: reminders sync sign-up NAME --server \(text)")
        } catch {
            throw failure(error, server: text)
        }
        try await model.signIn(server: text, accountName: session.name, accountID: session.account, device: session.device, token: session.token)
        try await model.enableSync()
        print("Signed in to \(text) as \(session.name)\(create ? " (a new account)" : ""). Run reminders sync to sync.")
    }

    static func share(_ options: GlobalOptions, list: String, with name: String, shared: Bool) async throws {
        let model = try await options.model(reading: true)
        let account = try await model.syncAccount()
        let found = try await model.list(named: list)
        let (client, server) = try client(model, account)
        guard let url = URL(string: server), let token = account.token else {
            throw RemindersError.invalidInput("this device is not signed in: reminders sync sign-in NAME --server URL")
        }
        do {
            // The list must be on the server before it can be shared.
            try await model.enableSync()
            try await client.push()
            let accounts = SyncAccountClient(server: url, token: token)
            if shared { try await accounts.share(list: found.id, with: name) } else { try await accounts.unshare(list: found.id, with: name) }
        } catch {
            throw failure(error, server: server)
        }
        print(shared ? "Shared \"\(Output.safe(found.title))\" with \(name): it reaches their devices at their next sync."
                     : "Stopped sharing \"\(Output.safe(found.title))\" with \(name): their devices forget it at their next sync.")
    }

    static func showStatus(_ model: RemindersModel, _ account: SyncAccount, json: Bool) async throws {
        let pending: Int? = try await model.store.read { db in try db.sync.isReplica() ? try db.sync.pendingChangeCount() : nil }
        struct Status: Encodable { var server: String?; var account: String?; var signedIn: Bool; var pendingChanges: Int?; var lastSync: Date? }
        let status = Status(server: account.server, account: account.accountName, signedIn: account.isSignedIn, pendingChanges: pending, lastSync: account.lastSync)
        if json { return try Output.json(status) }
        Output.table([
            [("Server", .dim), (account.server ?? "none (reminders sync sign-in NAME --server URL)", nil)],
            [("Account", .dim), ((account.accountName ?? "none") + (account.isSignedIn ? "" : account.accountName == nil ? "" : " (signed out)"), nil)],
            [("Waiting", .dim), (pending.map { "\($0) change\($0 == 1 ? "" : "s") to send" } ?? "sync is not set up here", nil)],
            [("Last sync", .dim), (account.lastSync.map { ISO8601DateFormatter().string(from: $0) } ?? "never", nil)],
        ])
    }

    /// A failure to reach the server, or its refusal, in one line that says the changes are kept.
    /// One line for each change the server dropped and each value of this
    /// device another device's later edit replaced, and one when the device
    /// went on under a new identity (its database was a copy).
    static func reportLines(_ report: SyncReport, _ model: RemindersModel) async throws -> [String] {
        var lines: [String] = []
        if report.identityRenewed {
            lines.append("This database was restored from a backup or copied from another device: it now syncs as a new device; every change it held was sent.")
        }
        for row in report.dropped {
            lines.append("Not kept: \(noun(row.table)) changed here in a list that is no longer shared with you; it is as the server has it.")
        }
        for value in report.overridden {
            var name = noun(value.row.table)
            if let id = UUID(uuidString: value.row.key) {
                if value.row.table == Reminder.tableName, let reminder = try await model.store.read({ db in try db.find(Reminder.self, id: id) }) {
                    name = "reminder \(reminder.number.map(String.init) ?? "") \"\(Output.cell(reminder.title, maxWidth: 60))\""
                } else if value.row.table == RemindersList.tableName, let list = try await model.store.read({ db in try db.find(RemindersList.self, id: id) }) {
                    name = "list \"\(Output.cell(list.title, maxWidth: 60))\""
                }
            }
            lines.append("Replaced: your \(value.column) of \(name) by a later edit on another device.")
        }
        return lines
    }

    /// What a synced table's row is called.
    static func noun(_ table: String) -> String {
        switch table {
        case Reminder.tableName: "a reminder"
        case RemindersList.tableName: "a list"
        case Tag.tableName: "a tag"
        case ReminderTag.tableName: "a tag on a reminder"
        default: "a row of \(table)"
        }
    }

    static func failure(_ error: any Error, server: String) -> any Error {
        switch error {
        case let error as SyncHTTPError where error.status == 401:
            return RemindersError.invalidInput("\(server) does not know this device (\(error.message)); sign in again: reminders sync sign-in NAME --server \(server)")
        case let error as SyncHTTPError:
            return RemindersError.invalidInput("\(server) answered \(error.status): \(error.message)")
        case let error as URLError:
            return RemindersError.invalidInput("cannot reach \(server) (\(error.localizedDescription)); working offline: changes stay on this device until the next sync")
        default:
            return error
        }
    }

    /// The password: REMINDERS_PASSWORD, else asked on the terminal, else one line of standard input.
    static func readPassword() throws -> String {
        if let password = ProcessInfo.processInfo.environment["REMINDERS_PASSWORD"], !password.isEmpty { return password }
        if isatty(STDIN_FILENO) == 1, let typed = getpass("Password: ") { return String(cString: typed) }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw RemindersError.invalidInput("no password: set REMINDERS_PASSWORD or type it")
        }
        return line
    }
}

import CSQLite
import Depot
import Foundation

/// Settings of an embedded SQLite store.
public struct SQLiteConfiguration: Sendable {
    /// How long a statement waits for a lock held by another connection or
    /// process before failing with a `busy` `DatabaseError`. Default: 5 seconds.
    public var busyTimeout: Duration = .seconds(5)
    /// The most reader connections of a file store. Default: 4.
    public var maxReaders = 4
    /// Whether the store only reads the file, and leaves it exactly as it
    /// found it: byte for byte, in its own journal mode, with no `-wal` or
    /// `-shm` file made beside it. Default: false.
    ///
    /// For looking into a file another program owns before deciding to use it:
    ///
    /// ```swift
    /// var looking = SQLiteConfiguration()
    /// looking.isReadOnly = true
    /// let store = try Store.sqlite(at: path, looking)
    /// let tables = try await store.read { db in
    ///     try db.fetchAll(String.self, "SELECT name FROM sqlite_schema WHERE type = 'table'")
    /// }
    /// await store.close()
    /// ```
    ///
    /// Writes fail with a `misuse` error (`SQLITE_READONLY`). Caveat: a file
    /// with no `-wal` or `-journal` file beside it is read as immutable (SQLite
    /// takes no lock and makes no side file), so a change another process
    /// makes while the store is open may go unseen or, mid-write, be read
    /// half-made; with one beside it, the file is opened read-only, sharing
    /// the other process's locks and log.
    public var isReadOnly = false
    /// The settings every store has: coders, error verbosity, checkout timeout.
    public var store = Store.Configuration()

    /// The default settings.
    public init() {}

    /// Settings with the store's own and, optionally, SQLite's.
    ///
    /// ```swift
    /// var settings = Store.Configuration()
    /// settings.accessTimeout = .seconds(5)
    /// let store = try Store.sqlite(at: path, SQLiteConfiguration(store: settings))
    /// ```
    public init(store: Store.Configuration, busyTimeout: Duration = .seconds(5), maxReaders: Int = 4) {
        self.store = store
        self.busyTimeout = busyTimeout
        self.maxReaders = maxReaders
    }
}

extension Store {
    /// Opens (or creates) an SQLite database file.
    ///
    /// ```swift
    /// let store = try Store.sqlite(at: "/path/to/reminders.sqlite")
    /// ```
    ///
    /// The database runs in WAL mode with one writer connection and up to
    /// ``SQLiteConfiguration/maxReaders`` readers, so reads never wait for a
    /// write. Foreign keys are enforced on every connection. Caveat: open one
    /// store per file in a process; two stores on one file compete for the write
    /// lock and may wait up to the busy timeout.
    ///
    /// A file this process may not write is opened read-only: reads work, and
    /// writes fail with a `misuse` error (`SQLITE_READONLY`). When its folder is
    /// read-only too and no `-shm` file lies beside it, SQLite cannot share its
    /// write-ahead log index, so the file is read as immutable: changes another
    /// process makes while the store is open go unseen.
    ///
    /// - Throws: a `connection` ``DatabaseError`` when the file cannot be opened or is not a database.
    public static func sqlite(at path: String, _ configuration: SQLiteConfiguration = SQLiteConfiguration()) throws -> Store {
        var mode = SQLiteDriver.OpenMode.readWrite
        if configuration.isReadOnly {
            // A log or journal beside the file holds part of its content (another process has it
            // open, or crashed in a write): read it with theirs. Without one, the file is all there is.
            let beside = ["-wal", "-journal"].contains { FileManager.default.fileExists(atPath: path + $0) }
            mode = beside ? .readOnly : .immutable
        } else if FileManager.default.fileExists(atPath: path), access(path, W_OK) != 0 {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            mode = access(folder, W_OK) != 0 && !FileManager.default.fileExists(atPath: path + "-shm") ? .immutable : .readOnly
        }
        let driver = SQLiteDriver(path: path, isMemory: false, mode: mode, configuration: configuration)
        // Open the writer once now: a bad path fails here, and the file is in WAL mode before any reader opens it.
        let probe = try driver.openConnection(.writer)
        defer { probe.close() }
        do {
            try probe.execute(script: "SELECT count(*) FROM sqlite_schema")
        } catch let error as DatabaseError {
            throw DatabaseError(.connection, "cannot use the SQLite database at \(path): \(error.message)", engineCode: error.engineCode)
        }
        return Store(driver: driver, configuration: configuration.store)
    }

    /// A new, empty in-memory SQLite database that lives as long as the store.
    ///
    /// Caveat: one connection serves all its accesses in turn, so a read waits
    /// while a write is in progress (the dialect's capabilities say so). The
    /// database lives in that connection: should it break (a rollback that
    /// fails), the data is gone, and every later access fails with a
    /// `connection` error saying so; no empty database takes its place.
    public static func sqliteInMemory(_ configuration: SQLiteConfiguration = SQLiteConfiguration()) -> Store {
        Store(driver: SQLiteDriver(path: ":memory:", isMemory: true, mode: .readWrite, configuration: configuration),
              configuration: configuration.store)
    }

    /// The version of the SQLite library Depot runs on, such as `3.40.1`.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }
}

/// Opens SQLite connections for a store.
struct SQLiteDriver: DatabaseDriver {
    /// How the file is opened.
    enum OpenMode: Sendable {
        case readWrite
        /// The process may not write the file.
        case readOnly
        /// Read-only, and SQLite may not create the -shm file beside it either.
        case immutable
    }

    let path: String
    let isMemory: Bool
    let mode: OpenMode
    let configuration: SQLiteConfiguration

    var dialect: any SQLDialect {
        SQLiteDialect(capabilities: Capabilities(concurrentReadsDuringWrite: !isMemory))
    }

    var poolLayout: PoolLayout {
        isMemory ? .single : .oneWriter(readers: configuration.maxReaders)
    }

    var databaseLivesInItsConnection: Bool { isMemory }

    func openConnection(_ role: ConnectionRole) throws -> any DriverConnection {
        try SQLiteConnection(path: path, role: role, configuration: configuration, isMemory: isMemory, mode: mode)
    }
}

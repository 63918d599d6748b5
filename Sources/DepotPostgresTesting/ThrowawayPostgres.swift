import Depot
import DepotPostgres
import DepotTesting
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A PostgreSQL server of its own for a test run: `initdb` into a new
/// temporary folder, started on a free loopback port with a random password,
/// stopped and deleted by ``stop()`` (and when the process exits).
///
/// ```swift
/// let server = try ThrowawayPostgres.start()
/// let store = try await Store.postgres(url: server.url)
/// ```
///
/// It uses the server binaries of Debian's `postgresql` package
/// (`/usr/lib/postgresql/VERSION/bin`), installing the package with `apt-get`
/// when they are missing and the process runs as root; run as root, the
/// server runs as the `postgres` user, as PostgreSQL requires. Durability is
/// off (`fsync=off`): it is for tests.
public final class ThrowawayPostgres: Sendable {
    /// `postgres://depot:PASSWORD@127.0.0.1:PORT/postgres`.
    public let url: String
    /// The folder holding the cluster and its log.
    public let folder: URL
    private let binaries: String

    private init(url: String, folder: URL, binaries: String) {
        self.url = url
        self.folder = folder
        self.binaries = binaries
    }

    /// Starts a new server; throws a `connection` error saying what is missing or what failed.
    public static func start() throws -> ThrowawayPostgres {
        let binaries = try serverBinaries()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-postgres-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let password = "depot-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try Data((password + "\n").utf8).write(to: folder.appendingPathComponent("password"))
        let port = try freeLoopbackPort()
        if getuid() == 0 {
            try run("/bin/chown", ["-R", "postgres", folder.path])
        }
        let server = ThrowawayPostgres(url: "postgres://depot:\(password)@127.0.0.1:\(port)/postgres", folder: folder, binaries: binaries)
        do {
            try runAsServerUser(binaries + "/initdb", ["-D", folder.path + "/data", "-U", "depot", "--pwfile=" + folder.path + "/password",
                                                       "-A", "scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"])
            // The server outlives pg_ctl: it must not hold a pipe of ours open (its output goes to server.log).
            try runAsServerUser(binaries + "/pg_ctl", ["-D", folder.path + "/data", "-l", folder.path + "/server.log", "-w", "-t", "60",
                                                       "-o", "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                                                       "start"], detached: true)
        } catch {
            server.stop()
            throw error
        }
        Running.shared.add(server)
        return server
    }

    /// Stops the server at once and deletes its folder.
    public func stop() {
        if FileManager.default.fileExists(atPath: folder.path + "/data/postmaster.pid") {
            try? Self.runAsServerUser(binaries + "/pg_ctl", ["-D", folder.path + "/data", "-m", "immediate", "stop"])
        }
        try? FileManager.default.removeItem(at: folder)
        Running.shared.remove(self)
    }

    /// Whether the server binaries are installed (``start()`` can install them when run as root).
    public static var isInstalled: Bool { installedBinaries() != nil }

    /// The newest `/usr/lib/postgresql/VERSION/bin` with `initdb`.
    static func installedBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap { version in Int(version).map { ($0, root + "/" + version + "/bin") } }
            .filter { FileManager.default.isExecutableFile(atPath: $0.1 + "/initdb") }
            .max { $0.0 < $1.0 }?.1
    }

    /// The installed binaries; installs Debian's package first when root may.
    static func serverBinaries() throws -> String {
        func newest() -> String? { installedBinaries() }
        if let found = newest() { return found }
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/apt-get") else {
            throw DatabaseError(.connection, "PostgreSQL's server binaries are missing: install Debian's postgresql package, or name a server in DEPOT_POSTGRES_URL")
        }
        try run("/usr/bin/apt-get", ["update", "-qq"])
        try run("/usr/bin/apt-get", ["install", "-y", "-qq", "--no-install-recommends", "postgresql"])
        guard let installed = newest() else { throw DatabaseError(.connection, "apt-get installed postgresql, but no initdb was found") }
        return installed
    }

    /// A port nothing listens on now, on 127.0.0.1.
    static func freeLoopbackPort() throws -> Int {
        #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
        #else
        let stream = SOCK_STREAM
        #endif
        let descriptor = socket(AF_INET, stream, 0)
        guard descriptor >= 0 else { throw DatabaseError(.connection, "cannot open a socket to find a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        guard bound == 0, named == 0 else { throw DatabaseError(.connection, "cannot find a free port on 127.0.0.1") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a server tool, as the `postgres` user when this process is root.
    static func runAsServerUser(_ tool: String, _ arguments: [String], detached: Bool = false) throws {
        if getuid() == 0 {
            try run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments, detached: detached)
        } else {
            try run(tool, arguments, detached: detached)
        }
    }

    /// Runs a program to its end. `detached`: its output is not read (a
    /// daemon it starts would keep the pipe open); a failure then says so only.
    static func run(_ program: String, _ arguments: [String], detached: Bool = false) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DEBIAN_FRONTEND"] = "noninteractive"
        if detached {
            // Not Foundation's Process: it learns that a child ended through a
            // descriptor the child inherits, which the server (started by
            // pg_ctl, outliving it) would inherit and hold open. bash closes
            // every descriptor above 2 before it runs the program.
            let script = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@" </dev/null >/dev/null 2>&1"#
            let status = try spawnAndWait("/bin/bash", ["-c", script, "bash", program] + arguments, environment: environment)
            guard status == 0 else {
                throw DatabaseError(.connection, "\(URL(fileURLWithPath: program).lastPathComponent) failed (status \(status)); see the server's log")
            }
            return
        }
        let outcome = try ChildProcess.runOnThisThread(program, arguments, environment: environment)
        guard outcome.status == 0 else {
            let tail = outcome.output.split(separator: "\n").suffix(5).joined(separator: " | ")
            throw DatabaseError(.connection, "\(URL(fileURLWithPath: program).lastPathComponent) failed (status \(outcome.status)): \(tail)")
        }
    }

    /// posix_spawn and waitpid: the exit status, or -1 for a signal.
    static func spawnAndWait(_ program: String, _ arguments: [String], environment: [String: String]) throws -> Int32 {
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0.key + "=" + $0.value) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, nil, nil, argv, envp)
        guard spawned == 0 else { throw DatabaseError(.connection, "cannot run \(program): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw DatabaseError(.connection, "cannot wait for \(program): error \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
    }

    /// The servers this process started, stopped at exit.
    final class Running: @unchecked Sendable {
        static let shared = Running()
        private let lock = NSLock()
        private var servers: [ObjectIdentifier: ThrowawayPostgres] = [:]

        private init() {
            atexit { Running.shared.stopAll() }
        }

        func add(_ server: ThrowawayPostgres) { lock.withLock { servers[ObjectIdentifier(server)] = server } }
        func remove(_ server: ThrowawayPostgres) { lock.withLock { _ = servers.removeValue(forKey: ObjectIdentifier(server)) } }
        func stopAll() { for server in lock.withLock({ Array(servers.values) }) { server.stop() } }
    }
}

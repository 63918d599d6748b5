import Depot
import DepotPostgres
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// A Hummingbird server on PostgreSQL, on Depot and on PostgresNIO in turn,
/// under `clients` concurrent HTTP clients with keep-alive: 80% reads of one
/// item by key, 20% writes that flip one item's flag in a transaction. Each
/// library has a pool of `clients` connections. Reported: requests per second
/// and latency percentiles, per round, rounds interleaved.
enum ServerThroughput {
    struct Figures {
        var requests = 0
        var errors = 0
        var seconds = 0.0
        var latencies: [Double] = []

        var perSecond: Double { Double(requests) / seconds }
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let sorted = latencies.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
    }

    static func run(clients: Int, seconds: Int, rounds: Int) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] else {
            throw RawError.failed("the server scenario needs DEPOT_POSTGRES_URL (Benchmarks/run starts a server)")
        }
        let items = Workload.items(10_000)
        let raw = try RawPostgres(url: url, dates: .native)
        try raw.exec(postgresTableSQL(.native))
        try raw.insertCopy(items)
        let logger = { var logger = Logger(label: "bench"); logger.logLevel = .critical; return logger }()

        var configuration = try DepotPostgres.PostgresConfiguration(url: url)
        configuration.maxConnections = clients
        configuration.store.checkoutTimeout = .seconds(60)
        let store = try await Store.postgres(configuration)
        let depotRouter = Router()
        depotRouter.get("/items/:id") { _, context -> Response in
            let id = try context.parameters.require("id", as: Int64.self)
            guard let item = try await store.read(logger: logger, { db in try db.find(Item.self, id: id) }) else { return Response(status: .notFound) }
            return try json(item)
        }
        depotRouter.post("/items/:id/flag") { _, context -> Response in
            let id = try context.parameters.require("id", as: Int64.self)
            try await store.write(logger: logger) { db in
                _ = try db.execute("UPDATE items SET \"isFlagged\" = NOT \"isFlagged\" WHERE id = \(id)")
            }
            return Response(status: .noContent)
        }

        let client = PostgresClient(configuration: {
            var nio = PostgresClient.Configuration(host: configuration.host, port: configuration.port, username: configuration.user,
                                                   password: configuration.password, database: configuration.database, tls: .disable)
            nio.options.maximumConnections = clients
            return nio
        }(), backgroundLogger: logger)
        let clientTask = Task { await client.run() }
        let nioRouter = Router()
        nioRouter.get("/items/:id") { _, context -> Response in
            let id = try context.parameters.require("id", as: Int64.self)
            let rows = try await client.query("SELECT id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score FROM items WHERE id = \(id)", logger: logger)
            for try await (id, title, notes, c, f, p, due, list, created, score) in rows.decode((Int64, String, String, Bool, Bool, Int?, Date?, Int64, Date, Double).self) {
                return try json(Item(id: id, title: title, notes: notes, isCompleted: c, isFlagged: f, priority: p, dueDate: due,
                                     listID: list, createdAt: created, score: score))
            }
            return Response(status: .notFound)
        }
        nioRouter.post("/items/:id/flag") { _, context -> Response in
            let id = try context.parameters.require("id", as: Int64.self)
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("UPDATE items SET \"isFlagged\" = NOT \"isFlagged\" WHERE id = \(id)", logger: logger)
            }
            return Response(status: .noContent)
        }

        print("Server: Hummingbird \(clients) concurrent clients (keep-alive), 80% reads by key, 20% one-row write transactions, a pool of \(clients) connections each, \(seconds) s per round")
        var results: [String: Figures] = [:]
        for round in 1...rounds {
            for (name, router) in [("Depot", depotRouter), ("PostgresNIO (PostgresClient)", nioRouter)] {
                let figures = try await measure(router: router, clients: clients, seconds: seconds, ids: items.count)
                print("  round \(round), \(name): \(Int(figures.perSecond)) requests/s, p50 \(ms(figures.percentile(0.5))), p99 \(ms(figures.percentile(0.99))), \(figures.errors) errors")
                var total = results[name] ?? Figures()
                total.requests += figures.requests
                total.errors += figures.errors
                total.seconds += figures.seconds
                total.latencies += figures.latencies
                results[name] = total
            }
        }
        print("| library | requests/s | p50 | p99 | p99.9 | errors |")
        print("|---|---:|---:|---:|---:|---:|")
        for name in ["Depot", "PostgresNIO (PostgresClient)"] {
            guard let figures = results[name] else { continue }
            print("| \(name) | \(Int(figures.perSecond)) | \(ms(figures.percentile(0.5))) | \(ms(figures.percentile(0.99))) | \(ms(figures.percentile(0.999))) | \(figures.errors) |")
        }
        clientTask.cancel()
        await store.close()
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }

    static func json(_ item: Item) throws -> Response {
        let data = try JSONEncoder().encode(item)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Serves `router` on a loopback port and drives it with `clients` threads
    /// of blocking keep-alive HTTP/1.1 for `seconds`.
    static func measure(router: Router<BasicRequestContext>, clients: Int, seconds: Int, ids: Int) async throws -> Figures {
        let port = PortBox()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in port.set(channel.localAddress?.port ?? 0) },
                              logger: { var l = Logger(label: "server"); l.logLevel = .critical; return l }())
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        while port.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
        let figures = await withCheckedContinuation { (continuation: CheckedContinuation<Figures, Never>) in
            let deadline = Date().addingTimeInterval(Double(seconds))
            let total = FiguresBox()
            let group = DispatchGroup()
            let started = Date()
            let serverPort = port.value
            for client in 0..<clients {
                group.enter()
                let thread = Thread {
                    total.add(HTTPLoad.drive(port: serverPort, seed: UInt64(client + 1), ids: ids, until: deadline))
                    group.leave()
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            group.notify(queue: .global()) {
                continuation.resume(returning: total.finished(seconds: Date().timeIntervalSince(started)))
            }
        }
        server.cancel()
        _ = await server.result
        return figures
    }
}

final class FiguresBox: @unchecked Sendable {
    private let lock = NSLock()
    private var total = ServerThroughput.Figures()

    func add(_ figures: ServerThroughput.Figures) {
        lock.withLock {
            total.requests += figures.requests
            total.errors += figures.errors
            total.latencies += figures.latencies
        }
    }

    func finished(seconds: Double) -> ServerThroughput.Figures {
        lock.withLock {
            total.seconds = seconds
            return total
        }
    }
}

final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port = 0
    func set(_ value: Int) { lock.withLock { port = value } }
    var value: Int { lock.withLock { port } }
}

/// One client thread: a keep-alive connection, requests until the deadline.
enum HTTPLoad {
    static func drive(port: Int, seed: UInt64, ids: Int, until deadline: Date) -> ServerThroughput.Figures {
        var figures = ServerThroughput.Figures()
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        var socket = connect(port)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while Date() < deadline {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let id = Int(state >> 33) % ids + 1
            let write = (state >> 20) % 5 == 0
            let request = write
                ? "POST /items/\(id)/flag HTTP/1.1\r\nHost: bench\r\nContent-Length: 0\r\n\r\n"
                : "GET /items/\(id) HTTP/1.1\r\nHost: bench\r\n\r\n"
            let start = DispatchTime.now().uptimeNanoseconds
            guard socket >= 0, send(socket, request, request.utf8.count) else {
                figures.errors += 1
                if socket >= 0 { close(socket) }
                socket = connect(port)
                continue
            }
            guard let status = readResponse(socket, &buffer), status < 300 else {
                figures.errors += 1
                close(socket)
                socket = connect(port)
                continue
            }
            figures.latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            figures.requests += 1
        }
        if socket >= 0 { close(socket) }
        return figures
    }

    static func connect(_ port: Int) -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); return -1 }
        return fd
    }

    static func send(_ fd: Int32, _ text: String, _ count: Int) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var sent = 0
            while sent < count {
                let n = Glibc.send(fd, bytes.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                guard n > 0 else { return false }
                sent += n
            }
            return true
        }
    }

    /// Reads one response (headers and a Content-Length body); its status.
    static func readResponse(_ fd: Int32, _ buffer: inout [UInt8]) -> Int? {
        var received = 0
        var headerEnd: Int?
        var contentLength = 0
        while true {
            if let end = headerEnd, received >= end + contentLength {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
                return status
            }
            guard received < buffer.count else { return nil }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + received, $0.count - received, 0) }
            guard n > 0 else { return nil }
            received += n
            if headerEnd == nil, let range = find(buffer, received) {
                headerEnd = range
                let head = String(decoding: buffer[0..<range], as: UTF8.self).lowercased()
                if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) {
                    contentLength = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
        }
    }

    /// The offset just past the blank line that ends the headers.
    static func find(_ buffer: [UInt8], _ count: Int) -> Int? {
        guard count >= 4 else { return nil }
        for i in 0...(count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}

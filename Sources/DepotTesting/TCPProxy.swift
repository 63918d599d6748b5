import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP forwarder on loopback in front of a real server, to stage in a test
/// what a deployment goes through: a server that is not up yet (nothing
/// listens on the port), comes up, restarts (every connection dropped at
/// once), or drops a connection while an answer is on its way.
///
/// ```swift
/// let proxy = try TCPProxy(to: "127.0.0.1", port: 5432)
/// try proxy.start()
/// configuration.host = "127.0.0.1"
/// configuration.port = proxy.port     // the store connects through the proxy
/// // ...
/// proxy.stop()                        // the "server" is down: connections drop
/// ```
///
/// Each forwarded connection takes two threads; it is meant for tests, not for traffic.
public final class TCPProxy: @unchecked Sendable {
    /// The port clients connect to.
    public let port: Int
    private let target: (host: String, port: Int)
    private let lock = NSLock()
    private var listener: Int32 = -1
    private var sockets: Set<Int32> = []
    private var holding = false
    private var toDrop = 0
    private var delay: Duration = .zero
    private var makeReplyRewriter: (@Sendable () -> ReplyRewriter)?

    /// What a connection's replies become: given each chunk the server sent,
    /// in order, the bytes to forward instead, and whether to close the
    /// connection after them (a server that dies at that point of its answer).
    public typealias ReplyRewriter = ([UInt8]) -> (forward: [UInt8], close: Bool)

    /// How long each chunk of the server's replies waits before it is
    /// forwarded: a slow network. Zero by default.
    public var replyDelay: Duration {
        get { lock.withLock { delay } }
        set { lock.withLock { delay = newValue } }
    }

    /// Closes the next `count` connections as soon as they are accepted, as a
    /// pooler does during a restart: the client sees the server close the
    /// connection during its login.
    public func dropNextConnections(_ count: Int) {
        lock.withLock { toDrop = count }
    }

    /// While true, the server's replies wait in the proxy instead of reaching
    /// the client: a reply still on its way when the connection is lost.
    public var holdsReplies: Bool {
        get { lock.withLock { holding } }
        set { lock.withLock { holding = newValue } }
    }

    /// Rewrites the replies of each connection accepted from now on: `make`
    /// gives each connection its own rewriter (so it may keep what it has seen
    /// of its stream), nil forwards replies as they come. For a test of a
    /// protocol's edge: what a client does when the server dies between two
    /// given messages.
    ///
    /// The rewriter sees the bytes as sent: a connection it parses must not
    /// be encrypted (for PostgreSQL, `sslmode=disable`).
    public func rewriteReplies(_ make: (@Sendable () -> ReplyRewriter)?) {
        lock.withLock { makeReplyRewriter = make }
    }

    /// A proxy to `host:port`, down until ``start()``.
    public init(to host: String, port targetPort: Int) throws {
        target = (host, targetPort)
        // Bind once to learn a free port, then let it go: down means nothing listens.
        let probe = try Self.listeningSocket(port: 0)
        port = Self.localPort(probe)
        close(probe)
    }

    /// Starts listening and forwarding.
    public func start() throws {
        let socket = try Self.listeningSocket(port: port)
        lock.withLock { listener = socket }
        Thread.detachNewThread { [self] in acceptLoop(socket) }
    }

    /// Stops listening and drops every forwarded connection, as a server restart
    /// or crash does (their pumps close the sockets).
    public func stop() {
        // Under the lock: a pump closes its sockets only under it too, so no
        // descriptor shut down here can have been closed and reused meanwhile.
        lock.withLock {
            if listener >= 0 {
                shutdown(listener, Int32(SHUT_RDWR))
                close(listener)
            }
            listener = -1
            for connection in sockets { shutdown(connection, Int32(SHUT_RDWR)) }
            sockets = []
        }
    }

    private func acceptLoop(_ socket: Int32) {
        while true {
            let client = accept(socket, nil, nil)
            guard client >= 0 else { return }
            let drop = lock.withLock { () -> Bool in
                guard toDrop > 0 else { return false }
                toDrop -= 1
                return true
            }
            if drop {
                close(client)
                continue
            }
            guard let server = try? Self.connected(to: target.host, port: target.port) else {
                close(client)
                continue
            }
            // Used by the reply pump alone, one chunk after another.
            nonisolated(unsafe) let rewriter = lock.withLock { () -> ReplyRewriter? in
                sockets.formUnion([client, server])
                return makeReplyRewriter?()
            }
            let pair = Pair()
            Thread.detachNewThread { [self] in pump(from: client, to: server, isReply: false, pair: pair) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, isReply: true, pair: pair, rewriter: rewriter) }
        }
    }

    /// How many of a connection's two pumps still run: the last closes both sockets.
    private final class Pair: @unchecked Sendable {
        var running = 2
    }

    private func pump(from source: Int32, to destination: Int32, isReply: Bool, pair: Pair, rewriter: ReplyRewriter? = nil) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var closing = false
            if let rewriter {
                let (forward, close) = rewriter(Array(buffer[0..<count]))
                if forward.count > buffer.count { buffer += [UInt8](repeating: 0, count: forward.count - buffer.count) }
                buffer.replaceSubrange(0..<forward.count, with: forward)
                (count, closing) = (forward.count, close)
            }
            while isReply && holdsReplies && lock.withLock({ sockets.contains(source) }) { usleep(1_000) }
            if isReply, case let pause = replyDelay, pause > .zero {
                usleep(UInt32(clamping: pause.components.seconds * 1_000_000 + pause.components.attoseconds / 1_000_000_000_000))
            }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { bytes -> Int in
                    guard let base = bytes.baseAddress else { return -1 }
                    // MSG_NOSIGNAL: a peer that has gone is an error here, not a SIGPIPE that kills the test process.
                    return send(destination, base + sent, count - sent, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { break }
                sent += written
            }
            if sent < count || closing { break }
        }
        // Both sockets stay open until both pumps are done, and are shut down
        // and closed under the lock: a descriptor is never touched after its
        // close (its number may already belong to a new listener).
        lock.withLock {
            pair.running -= 1
            shutdown(destination, Int32(SHUT_RDWR))
            shutdown(source, Int32(SHUT_RDWR))
            if pair.running == 0 {
                sockets.remove(source)
                sockets.remove(destination)
                close(source)
                close(destination)
            }
        }
    }

    struct Failure: Error { let message: String }

    private static func listeningSocket(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(message: "socket") }
        var yes: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 64) == 0 else {
            close(socket)
            throw Failure(message: "cannot listen on 127.0.0.1:\(port)")
        }
        return socket
    }

    private static func localPort(_ socket: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func connected(to host: String, port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(message: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host == "localhost" ? "127.0.0.1" : host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw Failure(message: "cannot connect to \(host):\(port)")
        }
        return socket
    }
}

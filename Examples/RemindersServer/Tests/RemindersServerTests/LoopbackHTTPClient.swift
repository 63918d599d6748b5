import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix

// The tests' HTTP client: the app served for real on a loopback port, each
// request on a connection of its own through SwiftNIO's HTTP/1.1 codec. (The
// tests used Hummingbird's testing library before; it brings an HTTP client
// with TLS, HTTP/2 and two copies of BoringSSL into every build, for requests
// that go to 127.0.0.1.)

/// An answer as it came off the connection.
struct TestResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer
}

/// An HTTP/1.1 client of an app that listens on a loopback port.
struct LoopbackHTTPClient: Sendable {
    let port: Int

    /// Sends one request and hands its answer to `check`.
    ///
    /// A body gets its `Content-Length`; so does a POST, PUT or PATCH without one.
    func execute<Return>(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil,
                         _ check: (TestResponse) async throws -> Return) async throws -> Return {
        try await check(try await send(uri: uri, method: method, headers: headers, body: body))
    }

    /// Sends one request on a new connection and reads its whole answer.
    func send(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> TestResponse {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPClientCodec())
                    return try NIOAsyncChannel<HTTPResponsePart, HTTPRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        var fields = headers
        if fields[.contentLength] == nil, body != nil || [.post, .put, .patch].contains(method) {
            fields[.contentLength] = String(body?.readableBytes ?? 0)
        }
        let request = HTTPRequest(method: method, scheme: nil, authority: "127.0.0.1:\(port)", path: uri, headerFields: fields)
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(.head(request))
            if let body { try await outbound.write(.body(body)) }
            try await outbound.write(.end(nil))
            var head: HTTPResponse?
            var collected = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let response) where response.status.kind == .informational:
                    continue
                case .head(let response):
                    head = response
                case .body(var chunk):
                    collected.writeBuffer(&chunk)
                case .end:
                    guard let head else { throw LoopbackHTTPError.noAnswer(uri) }
                    return TestResponse(status: head.status, headers: head.headerFields, body: collected)
                }
            }
            throw LoopbackHTTPError.noAnswer(uri)
        }
    }
}

enum LoopbackHTTPError: Error, CustomStringConvertible {
    case noAnswer(String)
    case notListening

    var description: String {
        switch self {
        case .noAnswer(let uri): "the server closed the connection before a whole answer to \(uri)"
        case .notListening: "the app stopped before it listened"
        }
    }
}

/// Serves the app that `makeApp` builds (handing it the callback that learns
/// its port) for the length of `body`, with a client of it; then stops it.
///
/// The app must listen on port 0 (the system picks a free port) and call the
/// callback once it listens.
func serve<App: ApplicationProtocol>(
    _ makeApp: (_ onServerRunning: @escaping @Sendable (Int) async -> Void) async throws -> App,
    _ body: (LoopbackHTTPClient) async throws -> Void
) async throws {
    let (ports, listening) = AsyncStream.makeStream(of: Int.self)
    let app = try await makeApp { port in
        listening.yield(port)
        listening.finish()
    }
    let running = Task {
        defer { listening.finish() }
        try await app.runService()
    }
    var iterator = ports.makeAsyncIterator()
    let outcome: Result<Void, any Error>
    do {
        guard let port = await iterator.next() else { throw LoopbackHTTPError.notListening }
        try await body(LoopbackHTTPClient(port: port))
        outcome = .success(())
    } catch {
        outcome = .failure(error)
    }
    running.cancel()
    _ = try? await running.value
    try outcome.get()
}

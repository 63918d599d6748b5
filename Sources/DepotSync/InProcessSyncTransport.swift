import Foundation

/// A transport that calls a ``SyncServer`` in the same process, through the
/// wire format (JSON), and can lose requests, lose answers after the server
/// applied them, deliver requests twice, and deliver a copy of a request
/// again later, after requests sent since: for tests.
public final class InProcessSyncTransport: SyncTransport, @unchecked Sendable {
    /// The faults it injects, each a probability from 0 to 1.
    public struct Faults: Sendable {
        /// A request never reaches the server.
        public var dropRequest = 0.0
        /// The server handles a request; its answer is lost.
        public var dropAnswer = 0.0
        /// The server handles a request twice.
        public var duplicate = 0.0
        /// A copy of the request is kept and reaches the server again later,
        /// after requests sent since (out of order); its answer goes nowhere.
        public var late = 0.0
        /// No faults.
        public init() {}
    }

    /// A request or an answer that the transport lost.
    public struct Lost: Error, CustomStringConvertible {
        public var description: String
    }

    let server: SyncServer
    let account: String
    private let lock = NSLock()
    private var random: () -> Double
    public var faults: Faults {
        get { lock.withLock { storedFaults } }
        set { lock.withLock { storedFaults = newValue } }
    }
    private var storedFaults = Faults()
    private var stash: [@Sendable () async -> Void] = []
    private var lateDeliveries = 0
    /// How many requests reached the server late, out of order.
    public var lateCount: Int { lock.withLock { lateDeliveries } }
    private var counted = 0
    /// Bytes sent and received, for the figures.
    public var bytes: Int { lock.withLock { counted } }

    /// A transport to `server` for `account`'s devices, whose faults are drawn from `seed`.
    public init(server: SyncServer, account: String = "", seed: UInt64) {
        self.server = server
        self.account = account
        var state = seed
        random = {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
    }

    private func roll(_ probability: Double) -> Bool { lock.withLock { random() < probability } }
    private func count(_ data: Data) { lock.withLock { counted += data.count } }

    public func push(_ push: SyncPush) async throws -> SyncPushAnswer {
        let (server, account) = (self.server, self.account)
        return try await exchange(push) { try await server.handle($0, account: account) }
    }

    public func pull(_ pull: SyncPull) async throws -> SyncPage {
        let (server, account) = (self.server, self.account)
        return try await exchange(pull) { try await server.handle($0, account: account) }
    }

    /// Waits on the server; the request or its answer may be lost (never
    /// kept back or repeated: a wait held for seconds would hold up the
    /// requests behind it).
    public func wait(_ wait: SyncWait) async throws -> SyncWaitAnswer? {
        let faults = self.faults
        if roll(faults.dropRequest) { throw Lost(description: "the request was lost") }
        let answer = try await server.handle(wait)
        if roll(faults.dropAnswer) { throw Lost(description: "the answer was lost") }
        return answer
    }

    private func exchange<Request: SyncWireMessage, Answer: SyncWireMessage>(_ request: Request,
                                                                         _ handle: @escaping @Sendable (Request) async throws -> Answer) async throws -> Answer {
        let faults = self.faults
        let body = try request.wireJSON()
        count(body)
        // An older request, kept back, arrives first.
        let late: (@Sendable () async -> Void)? = lock.withLock {
            guard !stash.isEmpty, random() < 0.5 else { return nil }
            lateDeliveries += 1
            return stash.remove(at: Int(random() * Double(stash.count)) % stash.count)
        }
        await late?()
        if roll(faults.dropRequest) { throw Lost(description: "the request was lost") }
        let received = try Request(wireJSON: body)
        if roll(faults.late) {
            lock.withLock { stash.append { _ = try? await handle(received) } }
        }
        var answer = try await handle(received)
        if roll(faults.duplicate) { answer = try await handle(received) }
        if roll(faults.dropAnswer) { throw Lost(description: "the answer was lost") }
        let reply = try answer.wireJSON()
        count(reply)
        return try Answer(wireJSON: reply)
    }
}

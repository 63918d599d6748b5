import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// Debian's chromium, headless, driven through chromium-driver's WebDriver
/// (JSON over HTTP): the verbs the browser tests use and nothing else.
final class WebDriver: @unchecked Sendable {
    let driver: Process
    let base: URL

    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Starts chromedriver on a free loopback port, once it answers.
    /// Nil, with the reason, when chromium or its driver is not installed.
    static func start() async throws -> WebDriver {
        let executable = "/usr/bin/chromedriver"
        guard FileManager.default.isExecutableFile(atPath: executable), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            throw Failure(description: "chromium and chromium-driver are not installed (scripts/test installs them)")
        }
        let port = try freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let driver = WebDriver(driver: process, base: URL(string: "http://127.0.0.1:\(port)")!)
        // Ready when /status says so: asked until then (a refused connection means not yet).
        for _ in 0..<600 {
            if let status = try? await driver.call("GET", "/status"), (status["value"] as? [String: Any])?["ready"] as? Bool == true { return driver }
            guard process.isRunning else { throw Failure(description: "chromedriver exited at start") }
            try await Task.sleep(for: .milliseconds(50))
        }
        driver.stop()
        throw Failure(description: "chromedriver never said it was ready")
    }

    private init(driver: Process, base: URL) { (self.driver, self.base) = (driver, base) }

    /// Ends chromedriver (and the browsers it started): asked first, killed if it has not gone within 5 seconds.
    /// (`waitUntilExit` waits on a run loop a test's thread never runs.)
    func stop() {
        guard driver.isRunning else { return }
        driver.terminate()
        for _ in 0..<500 where driver.isRunning { usleep(10_000) }
        if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
    }

    /// One browser, with cookies of its own.
    func session(width: Int = 1280, height: Int = 800) async throws -> BrowserSession {
        let options: [String: Any] = ["binary": "/usr/bin/chromium",
                                      "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=\(width),\(height)"]]
        let answer = try await call("POST", "/session", ["capabilities": ["alwaysMatch": ["goog:chromeOptions": options]]])
        guard let value = answer["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            throw Failure(description: "no session: \(answer)")
        }
        return BrowserSession(driver: self, id: id)
    }

    /// A WebDriver command; a WebDriver error becomes a thrown Failure.
    @discardableResult
    func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let port = base.port ?? 80
        // Over a socket of its own: FoundationNetworking's URLSession fails on chromedriver's answers ("Failed writing header").
        let data = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try Self.exchange(method: method, path: path, port: port, body: payload) })
            }
        }
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        if let value = object["value"] as? [String: Any], let error = value["error"] as? String {
            throw Failure(description: "\(method) \(path): \(error): \((value["message"] as? String)?.prefix(300) ?? "")")
        }
        return object
    }

    /// One HTTP/1.1 request on a new connection (`Connection: close`): the answer's body.
    static func exchange(method: String, path: String, port: Int, body: Data) throws -> Data {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "no socket") }
        defer { close(socket) }
        var address = loopbackAddress(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(description: "chromedriver is not listening") }
        var request = Data("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        request.append(body)
        var sent = 0
        while sent < request.count {
            let written = request.withUnsafeBytes { send(socket, $0.baseAddress! + sent, request.count - sent, 0) }
            guard written > 0 else { throw Failure(description: "the request to chromedriver was cut") }
            sent += written
        }
        // Read to the end of the answer: its Content-Length, the last chunk, or the connection's end.
        var answer = Data(), buffer = [UInt8](repeating: 0, count: 65536)
        func complete() -> Data? {
            guard let split = answer.range(of: Data("\r\n\r\n".utf8)) else { return nil }
            let head = String(decoding: answer[..<split.lowerBound], as: UTF8.self).lowercased()
            let payload = Data(answer[split.upperBound...])
            if head.contains("transfer-encoding: chunked") {
                return payload.range(of: Data("\r\n0\r\n\r\n".utf8)) != nil || payload.starts(with: Data("0\r\n\r\n".utf8)) ? (try? dechunk(payload)) : nil
            }
            if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
               let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) {
                return payload.count >= length ? payload.prefix(length) : nil
            }
            return nil
        }
        while true {
            if let payload = complete() { return payload }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0 { throw Failure(description: "the answer from chromedriver was cut") }
            if count == 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        guard let split = answer.range(of: Data("\r\n\r\n".utf8)) else { throw Failure(description: "chromedriver answered no HTTP") }
        return Data(answer[split.upperBound...])
    }

    static func dechunk(_ data: Data) throws -> Data {
        var out = Data(), rest = data[...]
        while let line = rest.range(of: Data("\r\n".utf8)) {
            guard let size = Int(String(decoding: rest[..<line.lowerBound], as: UTF8.self).split(separator: ";")[0], radix: 16) else {
                throw Failure(description: "a malformed chunk from chromedriver")
            }
            if size == 0 { break }
            let start = line.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size else { throw Failure(description: "a cut chunk from chromedriver") }
            out.append(rest[start..<rest.index(start, offsetBy: size)])
            rest = rest[rest.index(start, offsetBy: size + 2)...]
        }
        return out
    }

    static func freePort() throws -> Int {
        let (socket, port) = try boundLoopbackSocket()
        close(socket)
        return port
    }
}

/// One browser window.
struct BrowserSession: Sendable {
    let driver: WebDriver
    let id: String

    func go(_ url: URL) async throws { try await driver.call("POST", "/session/\(id)/url", ["url": url.absoluteString]) }

    func close() async { _ = try? await driver.call("DELETE", "/session/\(id)") }

    /// The first element a CSS selector finds.
    func element(_ selector: String) async throws -> String {
        let answer = try await driver.call("POST", "/session/\(id)/element", ["using": "css selector", "value": selector])
        guard let value = answer["value"] as? [String: Any], let element = value.values.first as? String else {
            throw WebDriver.Failure(description: "no element \(selector)")
        }
        return element
    }

    func type(_ text: String, into selector: String) async throws {
        try await driver.call("POST", "/session/\(id)/element/\(try await element(selector))/value", ["text": text])
    }

    func click(_ selector: String) async throws {
        try await driver.call("POST", "/session/\(id)/element/\(try await element(selector))/click", [:])
    }

    /// Runs JavaScript in the page; its return value.
    func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await driver.call("POST", "/session/\(id)/execute/sync", ["script": script, "args": arguments])["value"]
    }

    /// Waits until `script` returns true in the page, asking again each 20 ms
    /// up to `limit` (a bound a busy machine cannot reach by accident).
    /// Returns how long it took.
    @discardableResult
    func wait(until script: String, limit: Duration = .seconds(20), _ what: String) async throws -> Duration {
        let clock = ContinuousClock(), start = clock.now
        while clock.now - start < limit {
            if try await run(script) as? Bool == true { return clock.now - start }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw WebDriver.Failure(description: "waited \(limit) for \(what)")
    }

    /// Presses the pointer on the first element `selector` finds, moves it to
    /// `target`'s point (`dy` from its middle, over about 300 ms) and lets go,
    /// as a person drags with a mouse.
    func drag(_ selector: String, to target: String, dy: Int = 0) async throws {
        let reference = "element-6066-11e4-a52e-4f735466cecf"
        let (from, to) = (try await element(selector), try await element(target))
        let steps: [[String: Any]] = [
            ["type": "pointerMove", "duration": 0, "origin": [reference: from], "x": 0, "y": 0],
            ["type": "pointerDown", "button": 0],
            ["type": "pointerMove", "duration": 150, "origin": [reference: to], "x": 0, "y": dy / 2],
            ["type": "pointerMove", "duration": 150, "origin": [reference: to], "x": 0, "y": dy],
            ["type": "pointerUp", "button": 0],
        ]
        try await driver.call("POST", "/session/\(id)/actions",
                              ["actions": [["type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"], "actions": steps]]])
        try await driver.call("DELETE", "/session/\(id)/actions")
    }

    /// Presses a key (WebDriver's code for it: Enter is `\u{E007}`) on whatever has the focus.
    func press(_ key: String) async throws {
        let steps: [[String: Any]] = [["type": "keyDown", "value": key], ["type": "keyUp", "value": key]]
        try await driver.call("POST", "/session/\(id)/actions", ["actions": [["type": "key", "id": "keyboard", "actions": steps]]])
        try await driver.call("DELETE", "/session/\(id)/actions")
    }

    /// A PNG of the window.
    func screenshot() async throws -> Data {
        let answer = try await driver.call("GET", "/session/\(id)/screenshot")
        guard let text = answer["value"] as? String, let data = Data(base64Encoded: text) else { throw WebDriver.Failure(description: "no screenshot") }
        return data
    }

    func resize(width: Int, height: Int) async throws {
        try await driver.call("POST", "/session/\(id)/window/rect", ["width": width, "height": height])
    }
}

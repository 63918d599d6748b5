import Foundation
import Hummingbird
@testable import RemindersServerApp
import Testing

/// Password guessing is slowed: five wrong sign-ins for a name in 15 minutes,
/// and that name's sign-ins wait (429, Retry-After), the right password too;
/// other names are not held up; the window passing, or a right password, starts afresh.
@Suite struct SignInThrottleTests {
    @Test func fiveWrongPasswordsMakeTheNameWaitWithoutHoldingUpOthers() async throws {
        try await withSyncServer { client, _ in
            _ = try await client.signUp("alice")
            _ = try await client.signUp("bob")
            for _ in 0..<5 {
                let wrong = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "not her password"}"#)
                #expect(wrong.status == .unauthorized)
            }
            let held = try await client.send(.post, "/sync/sessions", #"{"name": "alice", "password": "correct horse battery"}"#)
            #expect(held.status == .tooManyRequests, "\(held.text)")
            #expect(held.error?.hasPrefix("too many wrong passwords for this name; try again in ") == true, "\(held.text)")
            #expect(held.headers[.retryAfter].flatMap(Int.init).map { $0 > 0 && $0 <= 900 } == true)
            _ = try await client.signIn("bob")
        }
    }

    @Test func theWindowPassingOrARightPasswordStartsAfresh() throws {
        final class Clock: @unchecked Sendable { var now = Date(timeIntervalSince1970: 1_800_000_000) }
        let clock = Clock()
        let throttle = SignInThrottle(limit: 3, window: 60, now: { clock.now })
        for _ in 0..<3 { throttle.fail("alice") }
        #expect(throws: ServerError.self) { try throttle.check("alice") }
        clock.now += 61
        try throttle.check("alice")
        for _ in 0..<2 { throttle.fail("alice") }
        throttle.succeed("alice")
        throttle.fail("alice")
        try throttle.check("alice")
    }

    @Test func theNamesItRemembersAreBounded() throws {
        final class Clock: @unchecked Sendable { var now = Date(timeIntervalSince1970: 1_800_000_000) }
        let clock = Clock()
        let throttle = SignInThrottle(limit: 1, window: 600, maxNames: 10, now: { clock.now })
        throttle.fail("first")
        for n in 0..<20 {
            clock.now += 1
            throttle.fail("name\(n)")
        }
        try throttle.check("first")   // the oldest name was dropped past the bound
        #expect(throws: ServerError.self) { try throttle.check("name19") }
    }
}

import Foundation
import Hummingbird

/// Slows password guessing: after `limit` wrong sign-ins for one account name
/// within `window`, that name's sign-ins answer 429 (with `Retry-After`)
/// until the oldest of those failures leaves the window; a right password
/// then clears the count. Kept in memory, per server process.
///
/// Caveat: a restart forgets the counts, and the names tried are bounded
/// (the oldest are dropped past `maxNames`), so this slows guessing; it
/// does not replace a strong password.
final class SignInThrottle: @unchecked Sendable {
    let limit: Int
    let window: TimeInterval
    let maxNames: Int
    private let now: @Sendable () -> Date
    private let lock = NSLock()
    private var failures: [String: [Date]] = [:]

    init(limit: Int = 5, window: TimeInterval = 15 * 60, maxNames: Int = 10_000, now: @escaping @Sendable () -> Date = { Date() }) {
        self.limit = limit
        self.window = window
        self.maxNames = maxNames
        self.now = now
    }

    /// Throws 429 while the name has `limit` failures within the window.
    func check(_ name: String) throws {
        let wait: TimeInterval? = lock.withLock {
            let recent = recentFailures(name)
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return oldest.addingTimeInterval(window).timeIntervalSince(now())
        }
        guard let wait else { return }
        let seconds = max(1, Int(wait.rounded(.up)))
        throw ServerError(status: .tooManyRequests, message: "too many wrong passwords for this name; try again in \(seconds) s",
                          cause: "sign-in throttled", headers: [.retryAfter: String(seconds)])
    }

    /// A wrong password (or an unknown name) for `name`.
    func fail(_ name: String) {
        lock.withLock {
            failures[name] = recentFailures(name) + [now()]
            if failures.count > maxNames {
                // Forget what left the window; past the bound, the names whose last failure is oldest.
                failures = failures.compactMapValues { dates in
                    let recent = dates.filter { now().timeIntervalSince($0) < window }
                    return recent.isEmpty ? nil : recent
                }
                if failures.count > maxNames {
                    for (stale, _) in failures.sorted(by: { ($0.value.last ?? .distantPast) < ($1.value.last ?? .distantPast) }).prefix(failures.count - maxNames) {
                        failures[stale] = nil
                    }
                }
            }
        }
    }

    /// A right password: the name starts afresh.
    func succeed(_ name: String) {
        lock.withLock { failures[name] = nil }
    }

    private func recentFailures(_ name: String) -> [Date] {
        let moment = now()
        return (failures[name] ?? []).filter { moment.timeIntervalSince($0) < window }
    }
}

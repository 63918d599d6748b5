import Foundation

/// Hears about commits made outside this store while observations are live:
/// a backend's change listener (PostgreSQL's LISTEN), or a poll of the
/// writer's count of other connections' commits (SQLite's `data_version`).
final class ChangeMonitor: @unchecked Sendable {
    /// How often SQLite's writer is asked whether another process committed.
    static let pollInterval: Duration = .milliseconds(100)

    private let lock = NSLock()
    private let driver: any DatabaseDriver
    weak var store: Store?
    private var listener: (any ChangeListener)?
    private var poller: Task<Void, Never>?
    private var stopped = false
    /// Whether commits from elsewhere are heard now: the listener listens, or
    /// the poll has its first reading to compare with.
    private var hearing = false
    private var heardOnce = false
    private var gaveUp = false

    init(driver: any DatabaseDriver) {
        self.driver = driver
    }

    /// Starts or stops listening as observations come and go.
    func update() {
        lock.withLock {
            guard let store, !stopped else { return }
            let active = store.observers.isActive
            if active, listener == nil, poller == nil {
                start(store)
            } else if !active {
                stopLocked()
            }
        }
    }

    /// Stops for good: the store is closing.
    func stop() {
        lock.withLock {
            stopped = true
            stopLocked()
        }
    }

    private func start(_ store: Store) {
        let observers = store.observers
        if let listening = driver as? any ChangeListeningDriver {
            heardOnce = false
            gaveUp = false
            listener = listening.startChangeListener { [weak self] change in
                // The first connect's "may have missed changes" matters only to an
                // observation that stopped waiting for it and read first.
                if change == .unknown, let self, self.lock.withLock({
                    defer { self.heardOnce = true }
                    return !self.heardOnce && !self.gaveUp
                }) { return }
                observers.notify(change)
            }
        } else if !store.isSingleConnection {
            poller = Task { [weak store, weak self] in
                var last: Int64?
                while !Task.isCancelled {
                    guard let store else { return }
                    if let counter = try? await store.externalChangeCounter() {
                        if let last, counter != last { observers.notify(.unknown) }
                        if last == nil { self?.lock.withLock { self?.hearing = true } }
                        last = counter
                    }
                    try? await Task.sleep(for: Self.pollInterval)
                }
            }
        } else {
            hearing = true
        }
    }

    /// Waits until commits from elsewhere are heard, so that an observation's
    /// first read misses none; gives up after `limit` (the listener keeps
    /// trying, and refreshes every observation once it hears).
    func waitUntilHearing(limit: Duration = .seconds(5)) async {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, !Task.isCancelled {
            let ready = lock.withLock { hearing || stopped || (listener?.isListening ?? false) }
            if ready { return }
            try? await Task.sleep(for: .milliseconds(2))
        }
        lock.withLock { gaveUp = true }
    }

    private func stopLocked() {
        hearing = false
        listener?.stop()
        listener = nil
        poller?.cancel()
        poller = nil
    }
}

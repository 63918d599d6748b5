import Foundation

/// Hears about commits made outside this store while observations are live:
/// a backend's change listener (PostgreSQL's LISTEN), or a poll of the
/// writer's count of other connections' commits (SQLite's `data_version`).
final class ChangeMonitor: WaiterOwner, @unchecked Sendable {
    // Unchecked: the listener, poller and waiters are read and written under
    // `lock`, and `store` is set once before the monitor starts; the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
    /// How often SQLite's writer is asked whether another process committed.
    static let pollInterval: Duration = .milliseconds(100)

    private let lock = NSLock()
    var waiterLock: NSLock { lock }
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
    private var storedHearingLimit: Duration = .seconds(5)

    /// How long an observation's first read waits to hear other connections' commits.
    var hearingLimit: Duration {
        get { lock.withLock { storedHearingLimit } }
        set { lock.withLock { storedHearingLimit = newValue } }
    }

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
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            stopped = true
            stopLocked()
            return waiters.removeAll()
        }
        woken.forEach { $0.resume() }
    }

    private func start(_ store: Store) {
        let observers = store.observers
        if let listening = driver as? any ChangeListeningDriver {
            heardOnce = false
            gaveUp = false
            listener = listening.startChangeListener { [weak self] change in
                // `.unknown` comes with every (re)connect: the listener listens now.
                if change == .unknown { self?.markHearing() }
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
                        if last == nil { self?.markHearing() }
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
    /// trying, and refreshes every observation once it hears). Woken by the
    /// listener's first report or the poll's first reading; nothing polls here.
    /// The limit is ``hearingLimit`` unless given.
    func waitUntilHearing(limit: Duration? = nil) async {
        let limit = limit ?? hearingLimit
        await wait(timeout: limit, timedOut: { [self] in gaveUp = true }, cancelled: ()) { () -> Void? in
            hearing || stopped || (listener?.isListening ?? false) ? () : nil
        }
    }

    /// Observations waiting to hear.
    var waiters = Waiters<Void>()

    /// Commits from elsewhere are heard now: wakes the waiting observations.
    private func markHearing() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            hearing = true
            return waiters.removeAll()
        }
        woken.forEach { $0.resume() }
    }

    private func stopLocked() {
        hearing = false
        listener?.stop()
        listener = nil
        poller?.cancel()
        poller = nil
    }
}

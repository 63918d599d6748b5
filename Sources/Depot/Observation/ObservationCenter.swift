import Foundation

/// A store's live observations and the tables each depends on: commits mark
/// the observations they concern as needing a fresh value.
///
/// Registering never waits for a connection. The commits that land while an
/// observation fetches are kept until the fetch ends and tells the tables it
/// read: the observation is marked only if one of them is among those, so it
/// never misses a change and other tables' commits cost it no fetch.
final class ObservationCenter: @unchecked Sendable {
    // Unchecked: the registrations are read and written under `lock`; the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
    private final class Registration {
        /// The tables the last fetch read; nil: every table.
        var tables: Set<String>?
        var isFetching = false
        /// The tables changed while fetching.
        var changedWhileFetching: Set<String> = []
        let wake: AsyncStream<Void>.Continuation

        init(wake: AsyncStream<Void>.Continuation) {
            self.wake = wake
        }
    }

    private let lock = NSLock()
    private var registrations: [Int: Registration] = [:]
    private var nextID = 0
    /// Called when the first observation starts and when the last one ends.
    private let onActive: @Sendable (Bool) -> Void

    init(onActive: @escaping @Sendable (Bool) -> Void) {
        self.onActive = onActive
    }

    /// Whether any observation is live: writes skip the work of notifying when none is.
    var isActive: Bool { lock.withLock { !registrations.isEmpty } }

    /// How many observations are live.
    var count: Int { lock.withLock { registrations.count } }

    /// Registers an observation: the stream yields when it needs a fresh value
    /// (coalesced: one pending signal at most).
    func register() -> (id: Int, wakes: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let (id, first) = lock.withLock {
            nextID += 1
            registrations[nextID] = Registration(wake: continuation)
            return (nextID, registrations.count == 1)
        }
        if first { onActive(true) }
        return (id, stream)
    }

    func unregister(_ id: Int) {
        let (removed, last) = lock.withLock {
            let removed = registrations.removeValue(forKey: id)
            return (removed, removed != nil && registrations.isEmpty)
        }
        removed?.wake.finish()
        if last { onActive(false) }
    }

    /// The observation starts a fetch: the tables commits change until it ends are kept for ``fetchDidEnd(_:tables:)``.
    func fetchWillStart(_ id: Int) {
        lock.withLock {
            registrations[id]?.isFetching = true
            registrations[id]?.changedWhileFetching = []
        }
    }

    /// The fetch ended, having read `tables` (nil: unknown, every table): a
    /// commit that landed during it marks the observation if it changed one of them.
    func fetchDidEnd(_ id: Int, tables: Set<String>?) {
        lock.withLock {
            guard let registration = registrations[id] else { return }
            registration.isFetching = false
            registration.tables = tables
            let changed = registration.changedWhileFetching
            registration.changedWhileFetching = []
            guard !changed.isEmpty else { return }
            if tables.map({ Self.intersects(changed, $0) }) ?? true { registration.wake.yield() }
        }
    }

    /// Whether a changed table is one the observation read. Engines with schemas
    /// name tables `schema.table`; a name given without its schema (by hand, in
    /// ``Observation/tracking(_:)`` or ``Database/notifyChanges(in:)``) stands for that table in any schema.
    static func intersects(_ changed: Set<String>, _ read: Set<String>) -> Bool {
        for table in changed {
            if read.contains(table) { return true }
            if let dot = table.lastIndex(of: ".") {
                if read.contains(String(table[table.index(after: dot)...])) { return true }
            } else if read.contains(where: { $0.hasSuffix("." + table) }) {
                return true
            }
        }
        return false
    }

    /// Commits changed these tables, or possibly any table.
    func notify(_ change: ObservedChange) {
        lock.withLock {
            for registration in registrations.values {
                switch change {
                case .unknown:
                    registration.wake.yield()
                case .tables(let changed) where registration.isFetching:
                    registration.changedWhileFetching.formUnion(changed)
                case .tables(let changed):
                    if registration.tables.map({ Self.intersects(changed, $0) }) ?? true {
                        registration.wake.yield()
                    }
                }
            }
        }
    }
}

/// The tables read by the statements of one access, collected for an observation.
final class ReadRecorder {
    /// nil once a statement's tables could not be told: the observation depends on every table.
    var tables: Set<String>? = []

    func record(_ read: Set<String>?) {
        guard let read else {
            tables = nil
            return
        }
        tables?.formUnion(read)
    }
}

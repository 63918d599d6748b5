import Foundation

/// The fresh value of a read after every commit that could change it, as an
/// asynchronous sequence: ``Store/observe(_:)`` makes one.
///
/// ```swift
/// for try await lists in store.observe({ db in try db.fetchAll(RemindersList.all) }).removeDuplicates() {
///     render(lists)
/// }
/// ```
///
/// What it promises, on every engine:
/// - the first value is read as soon as iteration starts, from the committed state;
/// - after a commit that wrote a table the read depends on (from this store,
///   another store, or another process), a later value reflects that commit;
/// - no value ever shows data of a transaction that has not committed or was rolled back;
/// - values come in commit order; several commits in a row may give one value
///   (the latest), and a value may repeat unless you ``removeDuplicates()``.
///
/// Each value is read in one read-only transaction, so several queries in the
/// closure see one snapshot. The tables it depends on are the ones its
/// statements read (the engine says which; views count as their tables), taken
/// again at every read, so a closure that reads other tables depending on the
/// data stays correct.
///
/// Caveat: on PostgreSQL, every table the closure reads needs
/// ``Database/enableObservation(of:)`` once; reading one without it ends the
/// sequence with a `misuse` error. A write Depot cannot see (on PostgreSQL, a
/// session in `replica` role, which fires no triggers) changes nothing until a
/// write calls ``Database/notifyChanges(in:)``. An error from the closure ends the sequence.
public struct Observation<Element: Sendable>: AsyncSequence, Sendable {
    let store: Store
    let fetch: @Sendable (Database) throws -> Element
    var extraTables: Set<String> = []
    var isDuplicate: (@Sendable (Element, Element) -> Bool)?

    /// Also refreshes after commits to these tables, which the engine cannot
    /// see the read depend on (tables read inside a PostgreSQL function).
    public func tracking(_ tables: String...) -> Observation {
        var observation = self
        observation.extraTables.formUnion(tables)
        return observation
    }

    /// Leaves out a value equal to the one before it.
    public func removeDuplicates() -> Observation where Element: Equatable {
        var observation = self
        observation.isDuplicate = { $0 == $1 }
        return observation
    }

    /// Starts the observation: the first `next()` reads the first value.
    public func makeAsyncIterator() -> Iterator {
        Iterator(state: ObservationState(self))
    }

    /// Reads a fresh value each time a commit could have changed it.
    ///
    /// Copies of an iterator share one position: a value one copy returns, the others do not.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let state: ObservationState<Element>

        /// The next value: at once the first time, then after a relevant commit.
        /// Nil when the task is cancelled.
        ///
        /// - Throws: what the closure throws, or a ``DatabaseError``: the sequence ends.
        public mutating func next() async throws -> Element? {
            try await state.next()
        }
    }
}

/// One iteration's registration and last value; unregisters when the iterator goes away.
final class ObservationState<Element: Sendable>: @unchecked Sendable {
    // Unchecked: touched by the one task that iterates (an iterator is not
    // shared); Sendable so that its deinit may run wherever the iterator ends.
    private let observation: Observation<Element>
    private var registration: (id: Int, wakes: AsyncStream<Void>.Iterator)?
    private var last: Element?
    private var ended = false

    init(_ observation: Observation<Element>) {
        self.observation = observation
    }

    deinit {
        if let registration { observation.store.observers.unregister(registration.id) }
    }

    func next() async throws -> Element? {
        guard !ended else { return nil }
        let center = observation.store.observers
        if registration == nil {
            // Registered before the first read: a commit during it marks it again.
            let (id, wakes) = center.register()
            registration = (id, wakes.makeAsyncIterator())
            await observation.store.changeMonitor.waitUntilHearing()
        } else if await !waitForChange() {
            return finish()
        }
        while true {
            if Task.isCancelled { return finish() }
            let value: Element
            do {
                value = try await read()
            } catch is CancellationError {
                return finish()
            } catch {
                _ = finish()
                throw error
            }
            if let last, let isDuplicate = observation.isDuplicate, isDuplicate(last, value) {
                guard await waitForChange() else { return finish() }
                continue
            }
            last = value
            return value
        }
    }

    private func waitForChange() async -> Bool {
        guard var wakes = registration?.wakes else { return false }
        let woke = await wakes.next() != nil
        registration?.wakes = wakes
        return woke
    }

    private func read() async throws -> Element {
        guard let id = registration?.id else { throw CancellationError() }
        let center = observation.store.observers
        center.fetchWillStart(id)
        let recorder = ReadRecorder()
        let fetch = observation.fetch
        do {
            let value = try await observation.store.read(recording: recorder) { db in try fetch(db) }
            center.fetchDidEnd(id, tables: recorder.tables.map { $0.union(observation.extraTables) })
            return value
        } catch {
            center.fetchDidEnd(id, tables: nil)
            throw error
        }
    }

    private func finish() -> Element? {
        ended = true
        if let registration { observation.store.observers.unregister(registration.id) }
        registration = nil
        return nil
    }
}

// Unchecked: a recorder lives in one observation's read, on its connection's queue.
extension ReadRecorder: @unchecked Sendable {}

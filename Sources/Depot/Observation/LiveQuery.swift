import Foundation
#if canImport(Observation)
import Observation

/// A read's current value, kept fresh after every commit that could change it,
/// for a screen to hold: an `Observable` object (Swift's Observation), so a
/// SwiftUI view or any `withObservationTracking` caller redraws when it changes.
///
/// ```swift
/// @MainActor final class ListsScreen {
///     let lists: LiveQuery<[RemindersList]>
///     init(store: Store) {
///         lists = LiveQuery(store, initial: []) { db in try db.fetchAll(RemindersList.order { $0.position }) }
///     }
///     func showArchived(_ archived: Bool) {
///         lists.load { db in try db.fetchAll(RemindersList.where { $0.isArchived.eq(archived) }) }
///     }
/// }
/// ```
///
/// It reads at once, then again after each commit that wrote a table the read
/// depends on, through ``Store/observe(_:)`` (same promises, same caveat: every
/// table read must be made observable with ``Database/enableObservation(of:)``).
/// ``load(_:)`` swaps the read without a new object; a value of the previous
/// read never arrives after it. An error becomes ``error`` and stops the
/// updates until the next ``load(_:)``; the last good ``value`` stays. Released,
/// it stops: no read runs for it any more.
///
/// Caveat: values are set on the main actor, which must be free to run them;
/// equal values in a row are set once only when `Value` is `Equatable`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
public final class LiveQuery<Value: Sendable>: Observable {
    private let registrar = ObservationRegistrar()
    private let store: Store
    private let runner = Runner()
    private var storedValue: Value
    private var storedError: (any Error)?
    private var storedIsLoading = true
    /// Which read's values are taken: a value of an older read is dropped.
    private var generation = 0
    private let isSame: (@Sendable (Value, Value) -> Bool)?

    /// The latest value read; `initial` until the first read ends.
    public var value: Value {
        registrar.access(self, keyPath: \.value)
        return storedValue
    }

    /// The error that stopped the updates, or nil; cleared by ``load(_:)``.
    public var error: (any Error)? {
        registrar.access(self, keyPath: \.error)
        return storedError
    }

    /// True from a ``load(_:)`` (or the start) until its first value or error.
    public var isLoading: Bool {
        registrar.access(self, keyPath: \.isLoading)
        return storedIsLoading
    }

    /// Starts reading `read` on `store` at once; ``value`` is `initial` until the first value.
    public init(_ store: Store, initial: Value, _ read: @escaping @Sendable (Database) throws -> Value) {
        self.store = store
        storedValue = initial
        isSame = nil
        load(read)
    }

    /// Starts reading `read` on `store` at once, setting ``value`` only when it changes.
    public init(_ store: Store, initial: Value, _ read: @escaping @Sendable (Database) throws -> Value) where Value: Equatable {
        self.store = store
        storedValue = initial
        isSame = { $0 == $1 }
        load(read)
    }

    /// Reads `read` from now on instead: at once, then after each relevant commit.
    /// ``value`` keeps the previous read's value until the new read's first one.
    public func load(_ read: @escaping @Sendable (Database) throws -> Value) {
        generation += 1
        let current = generation
        if storedError != nil { set(\.error) { $0.storedError = nil } }
        if !storedIsLoading { set(\.isLoading) { $0.storedIsLoading = true } }
        let observation = store.observe(read)
        runner.replace(with: Task { [weak self] in
            do {
                for try await value in observation {
                    guard let self else { return }
                    guard self.generation == current else { return }
                    self.receive(value)
                }
            } catch is CancellationError {
                return
            } catch {
                guard let self, self.generation == current else { return }
                self.fail(error)
            }
        })
    }

    /// Stops the updates now, rather than when the object is released.
    public func stop() {
        generation += 1
        runner.replace(with: nil)
    }

    deinit {
        runner.replace(with: nil)
    }

    /// Whether a read's value has been set (`initial` is not one).
    private var hasReadValue = false

    private func receive(_ value: Value) {
        if storedIsLoading { set(\.isLoading) { $0.storedIsLoading = false } }
        if hasReadValue, let isSame, isSame(storedValue, value) { return }
        hasReadValue = true
        set(\.value) { $0.storedValue = value }
    }

    private func fail(_ error: any Error) {
        set(\.error) { $0.storedError = error }
        if storedIsLoading { set(\.isLoading) { $0.storedIsLoading = false } }
    }

    private func set<Member>(_ keyPath: KeyPath<LiveQuery, Member>, _ change: (LiveQuery) -> Void) {
        registrar.withMutation(of: self, keyPath: keyPath) { change(self) }
    }

    /// The task that iterates the current read's observation; cancelling it ends the observation.
    private final class Runner: @unchecked Sendable {
        // Unchecked: `task` is read and written under `lock`; the thread sanitizer run (`scripts/test --sanitize-thread`) covers it.
        private let lock = NSLock()
        private var task: Task<Void, Never>?

        func replace(with task: Task<Void, Never>?) {
            let old = lock.withLock { () -> Task<Void, Never>? in
                defer { self.task = task }
                return self.task
            }
            old?.cancel()
        }
    }
}

extension Store {
    /// A ``LiveQuery`` of every record a query selects, kept fresh.
    ///
    /// ```swift
    /// let open = store.liveQuery(Reminder.where { !$0.isCompleted })
    /// ```
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    public func liveQuery<Root: Record>(_ query: Query<Root>) -> LiveQuery<[Root]> where Root: Sendable {
        LiveQuery(self, initial: []) { db in try db.fetchAll(query) }
    }
}
#endif

import Foundation

/// Tasks waiting for something an owner guards with its lock: a connection,
/// the last access to leave, a listener that hears. The one waiter registry of
/// the core (the pool, the access gate and the change monitor each keep one).
///
/// Touched only under the owner's ``WaiterOwner/waiterLock``; continuations
/// it hands out are resumed after the lock is let go.
///
/// Each wait is registered before its timer starts, so a timer that fires
/// before the task is queued (a short timeout on a busy machine) still ends
/// the wait: the registration is marked expired and the task, when it comes to
/// queue, returns the timeout instead of waiting for good.
struct Waiters<Value: Sendable> {
    private enum Slot {
        /// Registered, not queued yet.
        case pending
        /// Its timer fired before it was queued.
        case expired
        case waiting(CheckedContinuation<Value, Never>)
    }

    private var slots: [UInt64: Slot] = [:]
    /// Queued ids, oldest first, from `head` on; ids removed out of turn stay until passed.
    private var order: [UInt64] = []
    private var head = 0
    private var nextID: UInt64 = 0
    /// The tasks queued now.
    private(set) var count = 0

    init() {}

    /// A new wait's id.
    mutating func register() -> UInt64 {
        nextID &+= 1
        slots[nextID] = .pending
        return nextID
    }

    func isExpired(_ id: UInt64) -> Bool {
        if case .expired? = slots[id] { return true }
        return false
    }

    /// A registered wait that ended without queuing.
    mutating func forget(_ id: UInt64) {
        slots[id] = nil
    }

    mutating func enqueue(_ id: UInt64, _ continuation: CheckedContinuation<Value, Never>) {
        slots[id] = .waiting(continuation)
        order.append(id)
        count += 1
    }

    /// The timer of `id` fired: its continuation when it is queued; a pending
    /// wait is marked expired.
    mutating func expire(_ id: UInt64) -> CheckedContinuation<Value, Never>? {
        switch slots[id] {
        case .pending?:
            slots[id] = .expired
            return nil
        case .waiting(let continuation)?:
            slots[id] = nil
            count -= 1
            if count == 0 { clearOrder() }
            return continuation
        default:
            return nil
        }
    }

    /// The continuation of a queued wait, taken out of turn (its task was cancelled).
    mutating func remove(_ id: UInt64) -> CheckedContinuation<Value, Never>? {
        guard case .waiting(let continuation)? = slots[id] else { return nil }
        slots[id] = nil
        count -= 1
        if count == 0 { clearOrder() }
        return continuation
    }

    /// No one is queued: the ids left in line (taken out of turn) go.
    private mutating func clearOrder() {
        order.removeAll(keepingCapacity: true)
        head = 0
    }

    /// The oldest queued wait's continuation.
    @inline(__always)
    mutating func removeFirst() -> CheckedContinuation<Value, Never>? {
        // The common case (a connection given back with no one in line) reads one count.
        guard count > 0 else { return nil }
        return takeFirst()
    }

    private mutating func takeFirst() -> CheckedContinuation<Value, Never>? {
        while head < order.count {
            let id = order[head]
            head += 1
            if case .waiting(let continuation)? = slots[id] {
                slots[id] = nil
                count -= 1
                if head >= 32, head * 2 >= order.count {
                    order.removeFirst(head)
                    head = 0
                }
                return continuation
            }
        }
        clearOrder()
        return nil
    }

    /// Every queued wait's continuation, oldest first. Registered waits not
    /// queued yet stay registered.
    mutating func removeAll() -> [CheckedContinuation<Value, Never>] {
        var all: [CheckedContinuation<Value, Never>] = []
        all.reserveCapacity(count)
        while let next = removeFirst() { all.append(next) }
        return all
    }
}

/// An object whose tasks wait on its ``Waiters``, guarded by its lock.
protocol WaiterOwner: AnyObject, Sendable {
    associatedtype WaitedValue: Sendable
    /// The lock that guards ``waiters`` and whatever `ready` reads.
    var waiterLock: NSLock { get }
    /// Touched only under ``waiterLock``.
    var waiters: Waiters<WaitedValue> { get set }
}

extension WaiterOwner {
    /// Waits until another task hands over a value (``Waiters/removeFirst()``,
    /// ``Waiters/removeAll()``), or until `timeout` passes, or the task is cancelled.
    ///
    /// - Parameters:
    ///   - timeout: nil waits without limit.
    ///   - timedOut: the value of a wait that timed out; runs under the lock,
    ///     so it may record that the wait gave up.
    ///   - cancelled: the value of a wait whose task is cancelled; nil when
    ///     cancellation does not end the wait.
    ///   - ready: under the lock, before queuing: a value to return at once,
    ///     or nil to wait. Reading the owner's state here and queuing are one
    ///     critical section, so a hand-over between them is not missed.
    ///   - afterRegistering: for tests, runs between the registration (when
    ///     the timer starts) and the queuing: a task held up there by a busy machine.
    func wait(timeout: Duration?, timedOut: @escaping @Sendable () -> WaitedValue, cancelled: WaitedValue?,
              afterRegistering: () async -> Void = {}, ready: () -> WaitedValue?) async -> WaitedValue {
        let id = waiterLock.withLock { waiters.register() }
        let timer = timeout.map { limit in
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled, let self else { return }
                let expired = self.waiterLock.withLock { () -> (CheckedContinuation<WaitedValue, Never>, WaitedValue)? in
                    guard let continuation = self.waiters.expire(id) else { return nil }
                    return (continuation, timedOut())
                }
                if let (continuation, value) = expired { continuation.resume(returning: value) }
            }
        }
        defer { timer?.cancel() }
        await afterRegistering()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WaitedValue, Never>) in
                let now = waiterLock.withLock { () -> WaitedValue? in
                    if let value = ready() {
                        waiters.forget(id)
                        return value
                    }
                    if waiters.isExpired(id) {
                        waiters.forget(id)
                        return timedOut()
                    }
                    // Cancelled before the handler could see this wait: it never will.
                    if let cancelled, Task.isCancelled {
                        waiters.forget(id)
                        return cancelled
                    }
                    waiters.enqueue(id, continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: { [weak self] in
            guard let cancelled, let self else { return }
            let continuation = self.waiterLock.withLock { self.waiters.remove(id) }
            continuation?.resume(returning: cancelled)
        }
    }
}

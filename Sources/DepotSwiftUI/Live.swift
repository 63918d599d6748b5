#if canImport(SwiftUI)
import Depot
import SwiftUI

/// A view's live read: the value of a ``Depot/LiveQuery``, created once for
/// the view's lifetime and redrawing the view when it changes.
///
/// ```swift
/// struct ListsView: View {
///     @Live var lists: [RemindersList]
///     init(store: Store) {
///         _lists = Live(store, initial: []) { db in try db.fetchAll(RemindersList.order { $0.position }) }
///     }
///     var body: some View {
///         List(lists, id: \.id) { Text($0.title) }
///         if let error = $lists.error { Text("\(error)") }
///     }
/// }
/// ```
///
/// `$lists` is the ``Depot/LiveQuery`` itself: its `error`, `isLoading`, and
/// `load(_:)` to swap the read. The read given to `init` runs only the first
/// time SwiftUI keeps the view's state; later inits of the same view reuse it.
///
/// Caveat: compiled only where SwiftUI exists; Depot's CI (Linux) builds the
/// holder and tests it, not this wrapper.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@propertyWrapper
public struct Live<Value: Sendable>: DynamicProperty {
    @State private var box = Box()
    private let start: @MainActor () -> LiveQuery<Value>
    private let initial: Value

    /// A live read of `read` on `store`, `initial` until its first value.
    public init(_ store: Store, initial: Value, _ read: @escaping @Sendable (Database) throws -> Value) {
        self.initial = initial
        start = { LiveQuery(store, initial: initial, read) }
    }

    /// Starts the read the first time SwiftUI installs the view's state.
    public func update() {
        if box.query == nil { box.query = start() }
    }

    /// The latest value.
    public var wrappedValue: Value { box.query?.value ?? initial }

    /// The live query: its error, whether it is loading, and `load(_:)`.
    public var projectedValue: LiveQuery<Value> {
        if let query = box.query { return query }
        let query = start()
        box.query = query
        return query
    }

    @MainActor
    private final class Box {
        var query: LiveQuery<Value>?
    }
}
#endif

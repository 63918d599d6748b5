/// What one ``SyncClient/sync()`` did, and what a person should hear of it:
/// changes the server dropped by its rules and values another device's later
/// edit replaced are never silent.
///
/// ```swift
/// let report = try await client.sync()
/// for row in report.dropped { print("not kept: \(row), its list is no longer shared with you") }
/// for value in report.overridden { print("\(value.column) of \(value.row) was changed on another device") }
/// ```
public struct SyncReport: Hashable, Sendable {
    /// How many row changes the server took from this device.
    public var sent = 0
    /// How many row changes this device took from the server.
    public var received = 0
    /// The rows whose changes from this device were dropped: made to a root
    /// (a list) no longer shared with the account before the device heard,
    /// whether the server dropped them at the push or the device forgot them
    /// at the pull that told it. Each is now as the server has it (or gone,
    /// if the server never had it, or the account no longer sees it).
    public var dropped: [SyncRowID] = []
    /// This device's values that lost to another device's later edit of the
    /// same column, made without having seen them (two offline edits).
    public var overridden: [SyncOverride] = []
    /// Whether the server found this replica to be a copy of a device
    /// (restored from a backup, or copied to another machine): it went on
    /// under a new device identity, and sent every change it held. Nothing
    /// is lost; nothing is to be done.
    public var identityRenewed = false

    /// An empty report.
    public init() {}
}

import Foundation

/// A push the server refuses whole for what it carries, not for who sent it
/// (that is ``SyncAccessDenied``): nothing of it is applied, and the answer
/// says what the device does next.
///
/// - ``Reason/stampAhead``: a stamp is further ahead of the
///   server's clock than ``SyncServer/maximumDrift``. A ``SyncClient``
///   stamps its pending changes again from ``latestAccepted`` and pushes once
///   more, so a device whose clock runs ahead still syncs, without dragging
///   everyone's clocks along.
/// - ``Reason/deviceCopied``: the push's number was used before
///   for another push: this device's database was restored from a backup or
///   copied to another machine. A ``SyncClient`` goes on under a new device
///   identity and pushes its pending changes again; nothing is lost.
/// - ``Reason/deviceNewer``: the device syncs a table or column the server
///   does not, or speaks a later protocol (``SyncSchema``): nothing is
///   applied or sent until the server is updated; the device keeps its changes.
/// - ``Reason/deviceOlder``: the device was offline past the server's
///   compaction horizon and speaks a protocol from before compaction: it
///   cannot start over, so nothing is applied or sent until the app is updated.
/// - ``Reason/malformedStamp`` and ``Reason/malformedKey``:
///   the push is not one a replica makes (a negative stamp; a key that is not
///   of its table's key type and form, or that its values do not have).
///
/// Its description names the table and column, never a value or a key.
public struct SyncPushRefused: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the server refused the push.
    public enum Reason: String, Codable, Hashable, Sendable {
        /// A stamp further ahead of the server's clock than its drift bound.
        case stampAhead = "stamp-ahead"
        /// A stamp before 1970 (negative).
        case malformedStamp = "malformed-stamp"
        /// A key that is not of its table's key type and form, or that its values do not have.
        case malformedKey = "malformed-key"
        /// A push number used before for another push: a restored or copied device.
        case deviceCopied = "device-copied"
        /// The device syncs a table or column the server does not, or speaks
        /// a later protocol: the server is to be updated first. Refuses pulls too.
        case deviceNewer = "device-newer"
        /// The device missed deletes the server has compacted away, and
        /// speaks a protocol from before compaction (version 2 or earlier):
        /// the app is to be updated. Refuses pulls too.
        case deviceOlder = "device-older"
    }

    /// Why.
    public var reason: Reason
    /// The latest stamp the server took when it refused (its clock plus its
    /// drift bound): a device stamps its pending changes again at it.
    public var latestAccepted: HybridTimestamp
    /// What was wrong, in one line, without values.
    public var message: String

    /// A refusal from its parts.
    public init(_ reason: Reason, latestAccepted: HybridTimestamp, message: String) {
        self.reason = reason
        self.latestAccepted = latestAccepted
        self.message = message
    }

    /// `the sync server refused the push (stamp-ahead): …`.
    public var description: String { "the sync server refused the push (\(reason.rawValue)): \(message)" }
}

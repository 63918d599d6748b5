import Foundation

/// A reading of a ``HybridClock``: milliseconds since 1970 in the high 48 bits
/// and a counter of events within one millisecond in the low 16, so that it
/// fits a 64-bit integer column on every engine and orders as one.
public struct HybridTimestamp: RawRepresentable, Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The packed value: `milliseconds << 16 | counter`.
    public let rawValue: Int64

    /// A timestamp from its packed value.
    public init(rawValue: Int64) {
        self.rawValue = rawValue
    }

    /// A timestamp from its parts. `milliseconds` is at least 0 and below 2^47.
    public init(milliseconds: Int64, counter: UInt16) {
        rawValue = milliseconds << 16 | Int64(counter)
    }

    /// The milliseconds since 1970 it stands for (never behind the events it follows).
    public var milliseconds: Int64 { rawValue >> 16 }
    /// Which event of its millisecond it is.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// Before every stamp a clock gives.
    public static let zero = HybridTimestamp(rawValue: 0)

    /// The largest number of milliseconds a timestamp holds: some time in the year 6429.
    public static let maximumMilliseconds: Int64 = (1 << 47) - 1

    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `milliseconds.counter`, as `1764122400123.2`.
    public var description: String { "\(milliseconds).\(counter)" }
}

/// A hybrid logical clock (Kulkarni et al., "Logical Physical Clocks", 2014):
/// stamps that follow the wall clock when they can and never run backwards,
/// however the wall clock jumps, and that come after every stamp received
/// from another node. A device's edits are ordered by them, so an edit made
/// after another on one device always wins over it, whatever its clock says.
///
/// ```swift
/// var clock = HybridClock(last: stored)          // persisted with every write that stamps
/// let stamp = try clock.tick(at: Date())         // a local edit
/// try clock.receive(serverStamp, at: Date())     // what a response carried
/// ```
///
/// Caveat: the clock is only as monotonic as its persistence: store ``last``
/// in the transaction that uses a stamp, and start from it after a restart.
public struct HybridClock: Sendable, Hashable {
    /// The latest stamp the clock gave or received.
    public private(set) var last: HybridTimestamp
    /// How far ahead of the local wall clock a received stamp may be before
    /// ``receive(_:at:)`` refuses it: a peer whose clock runs hours ahead would
    /// otherwise drag every later stamp along and win every conflict.
    public var maximumDrift: Duration

    /// A clock that continues after `last` (``HybridTimestamp/zero`` for a new one).
    public init(last: HybridTimestamp = .zero, maximumDrift: Duration = .seconds(300)) {
        self.last = last
        self.maximumDrift = maximumDrift
    }

    /// The clock's errors.
    public enum Failure: Error, Hashable, CustomStringConvertible {
        /// A received stamp is further ahead of the local wall clock than ``HybridClock/maximumDrift``.
        case clockAhead(received: HybridTimestamp, localMilliseconds: Int64)
        /// The stamps reached ``HybridTimestamp/maximumMilliseconds``.
        case exhausted

        public var description: String {
            switch self {
            case .clockAhead(let received, let local):
                "a received clock reading (\(received)) is \(received.milliseconds - local) ms ahead of this device's clock: check either clock"
            case .exhausted:
                "the hybrid clock reached its last millisecond"
            }
        }
    }

    /// A stamp for a local event at wall-clock time `now`: later than every
    /// stamp before it, even when the wall clock went back.
    public mutating func tick(at now: Date) throws -> HybridTimestamp {
        let physical = Self.milliseconds(now)
        if physical > last.milliseconds {
            last = HybridTimestamp(milliseconds: physical, counter: 0)
        } else {
            last = try Self.next(after: last)
        }
        return last
    }

    /// Takes in a stamp received from another node at wall-clock time `now`:
    /// the result, and every later ``tick(at:)``, comes after it.
    ///
    /// - Throws: ``Failure/clockAhead(received:localMilliseconds:)`` when the
    ///   stamp is more than ``maximumDrift`` ahead of `now`; the clock is unchanged.
    @discardableResult
    public mutating func receive(_ remote: HybridTimestamp, at now: Date) throws -> HybridTimestamp {
        let physical = Self.milliseconds(now)
        let drift = Self.wholeMilliseconds(maximumDrift)
        if remote.milliseconds > physical, remote.milliseconds - physical > drift {
            throw Failure.clockAhead(received: remote, localMilliseconds: physical)
        }
        let latest = max(last, remote)
        if physical > latest.milliseconds {
            last = HybridTimestamp(milliseconds: physical, counter: 0)
        } else {
            last = try Self.next(after: latest)
        }
        return last
    }

    /// The stamp right after `stamp`: the next counter, or the next millisecond when the counter is full.
    private static func next(after stamp: HybridTimestamp) throws -> HybridTimestamp {
        if stamp.counter < UInt16.max { return HybridTimestamp(rawValue: stamp.rawValue + 1) }
        guard stamp.milliseconds < HybridTimestamp.maximumMilliseconds else { throw Failure.exhausted }
        return HybridTimestamp(milliseconds: stamp.milliseconds + 1, counter: 0)
    }

    /// The whole milliseconds of a span, 0 for a negative one, at most what a timestamp holds.
    static func wholeMilliseconds(_ span: Duration) -> Int64 {
        let (seconds, attoseconds) = span.components
        guard seconds >= 0 else { return 0 }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow, scaled < HybridTimestamp.maximumMilliseconds else { return HybridTimestamp.maximumMilliseconds }
        return scaled + attoseconds / 1_000_000_000_000_000
    }

    /// The latest stamp a node may take in from elsewhere at wall-clock time
    /// `now`: the last of the millisecond `maximumDrift` ahead of it.
    static func bound(at now: Date, maximumDrift: Duration) -> HybridTimestamp {
        let milliseconds = min(HybridTimestamp.maximumMilliseconds, milliseconds(now) + wholeMilliseconds(maximumDrift))
        return HybridTimestamp(milliseconds: milliseconds, counter: UInt16.max)
    }

    /// Whole milliseconds since 1970, within what a timestamp holds.
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(HybridTimestamp.maximumMilliseconds) ? HybridTimestamp.maximumMilliseconds : Int64(value)
    }
}

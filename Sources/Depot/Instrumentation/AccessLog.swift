import Foundation
import Logging

/// What an access logs, decided once when it starts, so a statement costs one
/// `nil` check when logging is off.
///
/// - every statement at `debug`: its SQL (never its values, unless the store
///   shows bound values), its duration, the rows it changed, its error kind;
/// - a statement slower than ``Store/Configuration/slowStatementThreshold`` at `warning`;
/// - `BEGIN`, `COMMIT` and other scripts at `trace`.
///
/// A class: an access that logs nothing passes one nil reference around.
final class AccessLog: Sendable {
    let logger: Logger
    let statements: Bool
    let scripts: Bool
    let slowThreshold: Duration?
    let showsValues: Bool

    /// Nil when the logger would drop every message this access could send.
    convenience init?(_ logger: Logger, settings: StoreSettings) {
        self.init(logger, slowStatementThreshold: settings.slowStatementThreshold, showsBoundValues: settings.showsBoundValues)
    }

    init?(_ logger: Logger, slowStatementThreshold: Duration?, showsBoundValues: Bool) {
        let level = logger.logLevel
        let slow = level <= .warning ? slowStatementThreshold : nil
        guard level <= .debug || slow != nil else { return nil }
        self.logger = logger
        statements = level <= .debug
        scripts = level <= .trace
        slowThreshold = slow
        showsValues = showsBoundValues
    }

    func statement(_ text: String, values: [Value], duration: Duration, changes: Int?, error: (any Error)?) {
        let slow = slowThreshold.map { duration >= $0 } ?? false
        guard statements || slow else { return }
        var metadata: Logger.Metadata = [
            "db.statement": .string(text),
            "db.duration_ms": .stringConvertible(Self.milliseconds(duration)),
        ]
        if let changes { metadata["db.rows_changed"] = .stringConvertible(changes) }
        if showsValues, !values.isEmpty { metadata["db.values"] = .array(values.map { .string("\($0)") }) }
        if let error {
            metadata["db.error"] = .string((error as? DatabaseError).map { "\($0.kind)" } ?? "\(type(of: error))")
        }
        if slow {
            logger.warning("slow statement", metadata: metadata)
        } else {
            logger.debug("statement", metadata: metadata)
        }
    }

    func script(_ text: String) {
        guard scripts else { return }
        logger.trace("script", metadata: ["db.statement": .string(text)])
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return (Double(seconds) * 1_000 + Double(attoseconds) / 1e15).rounded(toPlaces: 3)
    }
}

private extension Double {
    func rounded(toPlaces places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}

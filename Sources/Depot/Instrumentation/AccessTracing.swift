import Foundation
import Tracing

/// The spans an access makes, when ``Store/Configuration/tracer`` is set: one
/// per access (`depot.read`, `depot.write`), a child of the caller's span, and
/// one per statement, a child of the access's, named by its operation
/// (`SELECT`, `INSERT`...), with OpenTelemetry's database attributes:
/// `db.system.name` (`sqlite`, `postgresql`), `db.operation.name` and
/// `db.query.text`, the statement's SQL with placeholders: never its values.
///
/// A class: an access that traces nothing passes one nil reference around.
final class AccessTracing: Sendable {
    let tracer: any Tracer
    let context: ServiceContext
    let system: String
    /// The access's own span.
    let span: any Span

    private init(tracer: any Tracer, system: String, span: any Span) {
        self.tracer = tracer
        self.context = span.context
        self.system = system
        self.span = span
    }

    /// Starts the access's span as a child of the caller's context.
    /// A retried write's span (``WriteRetry``) carries its attempt, from 2, as `depot.write.attempt`.
    static func start(_ tracer: any Tracer, kind: TransactionKind, engineName: String, attempt: Int = 1) -> AccessTracing {
        let system = engineName.lowercased()
        let span = tracer.startSpan(kind == .read ? "depot.read" : "depot.write", context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.attributes["db.system.name"] = system
        if attempt > 1 { span.attributes["depot.write.attempt"] = attempt }
        return AccessTracing(tracer: tracer, system: system, span: span)
    }

    /// Ends the access's span, marked as an error when the access failed.
    func end(error: (any Error)?) {
        Self.end(span, error: error)
    }

    /// Starts a statement's span, a child of the access's.
    func startStatement(_ text: String) -> any Span {
        let operation = Self.operation(text)
        let span = tracer.startSpan(operation, context: context, ofKind: .client)
        span.attributes["db.system.name"] = system
        span.attributes["db.operation.name"] = operation
        span.attributes["db.query.text"] = text
        return span
    }

    /// Ends a statement's span, marked as an error when it failed.
    static func end(_ span: any Span, error: (any Error)?) {
        if let error {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    /// The statement's first word, upper-cased: `SELECT`, `INSERT`, `WITH`...
    static func operation(_ text: String) -> String {
        let word = text.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "(" }.prefix { $0.isLetter }
        return word.isEmpty ? "statement" : word.uppercased()
    }
}

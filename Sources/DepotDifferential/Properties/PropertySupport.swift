import Depot
import Foundation
import PropertyBased

// Shared by the property checks: outcomes that compare across engines, seeds
// that replay, hostile text.

/// What one operation gave: a value (in a canonical text, so engines compare),
/// or a typed error with the cell it names.
enum Outcome: Equatable, CustomStringConvertible {
    case value(String)
    case error(DatabaseError.Kind, column: String?, index: Int?)
    /// Anything but a ``DatabaseError``: always a failure.
    case untyped(String)

    var description: String {
        switch self {
        case .value(let text): "value \(text)"
        case .error(let kind, let column, let index): "\(kind) error at \(column ?? "no column") (index \(index.map(String.init) ?? "none"))"
        case .untyped(let text): "an error that is not a DatabaseError: \(text)"
        }
    }

    var isError: Bool {
        if case .value = self { return false }
        return true
    }

    static func of(_ body: () throws -> String) -> Outcome {
        do {
            return .value(try body())
        } catch let error as DatabaseError {
            return .error(error.kind, column: error.column, index: error.columnIndex)
        } catch {
            return .untyped("\(error)")
        }
    }
}

/// A canonical text for a decoded value, equal on both engines when the values are equal.
func canonical(_ value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
        guard let wrapped = mirror.children.first?.value else { return "nil" }
        return canonical(wrapped)
    }
    switch value {
    case let d as Double: return d == 0 ? "0.0" : "\(d) (\(d.bitPattern))" // -0.0 may read back as 0.0 on SQLite (documented)
    case let f as Float: return f == 0 ? "0.0" : "\(f)"
    case let date as Date: return "date \(date.timeIntervalSinceReferenceDate.bitPattern)"
    case let data as Data: return "data " + data.map { String(format: "%02x", $0) }.joined()
    case let url as URL: return "url \(url.absoluteString)"
    case let decimal as Decimal: return "decimal \(decimal)"
    case let set as Set<String>: return "set \(set.sorted())"
    case let dictionary as [String: Double]: return "dictionary \(dictionary.sorted { $0.key < $1.key }.map { "\($0.key)=\(canonical($0.value))" })"
    default: return "\(type(of: value)) \(value)"
    }
}

/// The seed for this run: `DEPOT_PROPERTY_SEED` replays one; otherwise a fresh one, printed.
func propertySeed(_ property: String) -> Xoshiro {
    if let text = ProcessInfo.processInfo.environment["DEPOT_PROPERTY_SEED"], let replayed = Xoshiro(seed: text) {
        print("\(property): replaying seed \(text)")
        return replayed
    }
    let generator = Xoshiro()
    print("\(property): seed \(generator.currentSeed) (replay with DEPOT_PROPERTY_SEED=\(generator.currentSeed))")
    return generator
}

/// A Unicode string without U+0000, which PostgreSQL text cannot hold (a capability, tested apart).
func randomText(_ rng: inout Xoshiro, maxLength: Int = 12) -> String {
    let length = Int.random(in: 0...maxLength, using: &rng)
    var scalars = String.UnicodeScalarView()
    for _ in 0..<length {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<5: scalars.append(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &rng)))
        case 5: scalars.append(UnicodeScalar(UInt8.random(in: 1...0x1F, using: &rng)))
        case 6: scalars.append(["%", "_", "\\", "'", "\""].randomElement(using: &rng)!.unicodeScalars.first!)
        case 7: scalars.append(UnicodeScalar(UInt32.random(in: 0xA0...0x2FF, using: &rng)) ?? "é")
        case 8: scalars.append(UnicodeScalar(UInt32.random(in: 0x1F300...0x1F64F, using: &rng)) ?? "🙂")
        default: scalars.append(UnicodeScalar(UInt32.random(in: 0x4E00...0x9FFF, using: &rng)) ?? "中")
        }
    }
    return String(scalars)
}

/// A decimal literal in one canonical form (`-123e-2` for `-1.230`), or nil for
/// text that is not one: the oracle's own reading, written apart from the
/// decoder's, so a fault in the decoder cannot agree with itself.
func canonicalDecimalLiteral(_ text: String) -> String? {
    guard let match = text.wholeMatch(of: /([+-]?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]{1,6}))?/) else { return nil }
    let fraction = match.3.map(String.init) ?? ""
    var digits = String(match.2) + fraction
    var exponent = (match.4.flatMap { Int($0) } ?? 0) - fraction.count
    while digits.hasSuffix("0") {
        digits.removeLast()
        exponent += 1
    }
    let significant = digits.drop { $0 == "0" }
    guard !significant.isEmpty else { return "0" }
    return (match.1 == "-" ? "-" : "") + significant + "e\(exponent)"
}

import Foundation

/// The times of one contender in one scenario.
struct Measurement: Sendable {
    var scenario: String
    var contender: String
    var isBaseline: Bool
    var seconds: [Double]

    var median: Double {
        let sorted = seconds.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    var min: Double { seconds.min() ?? 0 }
    var max: Double { seconds.max() ?? 0 }
}

/// Runs `body` once to warm up, then `repetitions` times, each after an untimed `setUp`.
func measure(repetitions: Int, setUp: () async throws -> Void = {}, _ body: () async throws -> Void) async throws -> [Double] {
    try await setUp()
    try await body()
    var samples: [Double] = []
    for _ in 0..<repetitions {
        try await setUp()
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return samples
}

/// Fails the run loudly when a contender read back something else than was written.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    struct Mismatch: Error, CustomStringConvertible { let description: String }
    if !condition { throw Mismatch(description: message()) }
}

/// A checksum over every field of items, dates to the millisecond (the coarsest
/// precision a contender keeps), so no contender can skip work the others do.
///
/// `withDates` false leaves dates out, for a contender that keeps them to the
/// millisecond only (GRDB's text dates), where the millisecond digit itself may
/// differ by a rounding; the full check before the timings compares its dates.
func checksum(_ item: Item, withDates: Bool = true) -> Int64 {
    var sum = item.id &+ item.listID &* 3 &+ Int64(item.title.utf8.count) &+ Int64(item.notes.utf8.count) &* 5
    sum &+= Int64(item.title.utf8.last ?? 0) &+ Int64(item.notes.utf8.first ?? 0)
    sum &+= (item.isCompleted ? 1 : 0) &+ (item.isFlagged ? 2 : 0) &+ Int64(item.priority ?? -1) &* 7
    sum &+= Int64(item.score * 100) &+ (item.dueDate == nil ? 7 : 0)
    if withDates { sum &+= (item.dueDate.map(millis) ?? 0) &+ millis(item.createdAt) &* 11 }
    return sum
}

/// Milliseconds since 1970, from the nearest microsecond.
func millis(_ date: Date) -> Int64 {
    let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    return micros >= 0 ? micros / 1000 : (micros - 999) / 1000
}

/// Fails unless every item read back equals the one written, dates within `precision` seconds.
func verify(_ fetched: [Item], _ expected: [Item], precision: Double, _ who: String) throws {
    try check(fetched.count == expected.count, "\(who) read \(fetched.count) rows of \(expected.count)")
    for (a, b) in zip(fetched, expected) {
        var x = a, y = b
        let due = (x.dueDate?.timeIntervalSince1970, y.dueDate?.timeIntervalSince1970)
        let created = (x.createdAt.timeIntervalSince1970, y.createdAt.timeIntervalSince1970)
        x.dueDate = nil; y.dueDate = nil; x.createdAt = y.createdAt
        try check(x == y, "\(who) read back \(a) for \(b)")
        try check(abs(created.0 - created.1) <= precision, "\(who) read createdAt \(created.0) for \(created.1)")
        switch due {
        case (nil, nil): break
        case (let p?, let q?): try check(abs(p - q) <= precision, "\(who) read dueDate \(p) for \(q)")
        default: try check(false, "\(who) read dueDate \(String(describing: a.dueDate)) for \(String(describing: b.dueDate))")
        }
    }
}

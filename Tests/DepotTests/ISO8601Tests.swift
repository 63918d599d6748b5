@testable import Depot
import Foundation
import Testing

@Suite struct ISO8601Tests {
    @Test func formatsOneFixedWidthUTCForm() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -0.000_001)) == "1969-12-31T23:59:59.999999Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 951_782_400.25)) == "2000-02-29T00:00:00.250000Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01T00:00:00.000000Z")
    }

    @Test(arguments: [
        ("2024-03-01", 1_709_251_200.0),
        ("2024-03-01 12:34", 1_709_296_440.0),
        ("2024-03-01T12:34:56Z", 1_709_296_496.0),
        ("2024-03-01t12:34:56z", 1_709_296_496.0),
        ("2024-03-01 12:34:56.5", 1_709_296_496.5),
        ("2024-03-01T14:34:56+02:00", 1_709_296_496.0),
        ("2024-03-01T10:04:56-0230", 1_709_296_496.0),
        ("2024-03-01T13:34:56+01", 1_709_296_496.0),
        ("2024-03-01T12:34:56.123456000Z", 1_709_296_496.123456),
    ])
    func parsesTheFormsDatabasesWrite(text: String, seconds: Double) throws {
        let date = try #require(ISO8601.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.000_000_5)
    }

    @Test(arguments: ["", "2024", "2024-13-01", "2023-02-29", "2024-03-01T24:00:00Z", "2024-03-01T12:34:56.Z",
                      "2024-03-01T12:34:56.1234567Z", "2024-03-01T12:34:56 junk", "0000-01-01", "2024-3-1", "yesterday"])
    func refusesEverythingElse(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func roundTripsEveryMicrosecondItCanHold() {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let micros = Int64.random(in: ISO8601.minMicros...ISO8601.maxMicros, using: &generator)
            let text = ISO8601.format(microseconds: micros)
            let parsed = text.utf8CString.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: UInt8.self) { ISO8601.parse(bytes: UnsafeBufferPointer(rebasing: $0.dropLast())) }
            }
            #expect(parsed == micros, "\(text)")
            if parsed != micros { return }
        }
    }
}

/// A small seeded generator, so property tests repeat exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

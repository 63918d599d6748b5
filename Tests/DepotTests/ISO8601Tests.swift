@_spi(Driver) @testable import Depot
import Foundation
import Testing

@Suite struct ISO8601Tests {
    @Test func formatsSQLitesOwnUTCFormWithoutTrailingZeros() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00:00")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -0.000_001)) == "1969-12-31 23:59:59.999999")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 951_782_400.25)) == "2000-02-29 00:00:00.250")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 951_782_400.000_01)) == "2000-02-29 00:00:00.00001")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -62_135_596_800)) == "0001-01-01 00:00:00")
    }

    @Test func refusesToFormatADateNoFourDigitYearNames() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: -62_135_596_800.5)) == nil)
        #expect(ISO8601.format(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(ISO8601.format(Date(timeIntervalSince1970: .infinity)) == nil)
    }

    /// Text order is time order, and the same instant is the same text as SQLite
    /// writes it (`CURRENT_TIMESTAMP`, `datetime()`), so dates compare as text.
    @Test func textOrderIsTimeOrder() {
        var generator = SplitMix64(seed: 7)
        let micros = (0..<5_000).map { _ -> Int64 in
            let whole = Int64.random(in: 1_700_000_000...1_700_000_100, using: &generator) * 1_000_000
            return whole + [0, 1, 10, 500_000, 999_999, Int64.random(in: 0..<1_000_000, using: &generator)][Int.random(in: 0..<6, using: &generator)]
        }
        for (a, b) in zip(micros, micros.dropFirst()) {
            let (ta, tb) = (ISO8601.format(microseconds: a), ISO8601.format(microseconds: b))
            #expect((a < b) == (ta < tb) && (a == b) == (ta == tb), "\(ta) vs \(tb)")
        }
        #expect(ISO8601.format(microseconds: 1_700_000_000_000_000) == "2023-11-14 22:13:20")
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

    @Test func theWrittenFormReadsAtFixedPositionsAsTheGeneralReaderReadsIt() {
        var generator = SplitMix64(seed: 0x5EED_0001)
        for _ in 0..<20_000 {
            let micros = Int64.random(in: ISO8601.minMicros...ISO8601.maxMicros, using: &generator)
            for rounded in [micros, micros / 1000 * 1000, micros / 1_000_000 * 1_000_000] {
                var text = ISO8601.format(microseconds: rounded)
                let fast = text.withUTF8 { ISO8601.parseWritten($0) }
                let general = text.withUTF8 { ISO8601.parseAny($0) }
                #expect(fast == rounded && general == rounded, "\(text)")
            }
        }
        // Near misses are left to the general reader, which refuses or reads them.
        for text in ["2024-02-30 00:00:00", "2023-02-29 12:00:00", "2024-03-01 24:00:00", "0000-01-01 00:00:00",
                     "2024-03-01 12:34:5x", "2024-03-01T12:34:56", "2024-03-01 12:34:56.12", "2024-03-01 12:34:56.1234567"] {
            var text = text
            #expect(text.withUTF8 { ISO8601.parseWritten($0) } == nil, "\(text)")
            #expect(text.withUTF8 { ISO8601.parse(bytes: $0) } == text.withUTF8 { ISO8601.parseAny($0) }, "\(text)")
        }
    }

    @Test func anyByteChangedInTheWrittenFormIsReadAsTheGeneralReaderReadsItOrLeftToIt() {
        var generator = SplitMix64(seed: 0x5EED_0002)
        let replacements: [UInt8] = [0, 0x2F, 0x30, 0x39, 0x3A, 0x20, 0x2D, 0x3A, 0x2E, 0x54, 0x7F, 0x80, 0xB9, 0xBA, 0xFF]
        for _ in 0..<20_000 {
            let micros = Int64.random(in: ISO8601.minMicros...ISO8601.maxMicros, using: &generator)
            var bytes = Array(ISO8601.format(microseconds: micros).utf8)
            let at = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[at] = Bool.random(using: &generator)
                ? replacements[Int.random(in: 0..<replacements.count, using: &generator)]
                : UInt8.random(in: 0...255, using: &generator)
            bytes.withUnsafeBufferPointer { buffer in
                let fast = ISO8601.parseWritten(buffer)
                let general = ISO8601.parseAny(buffer)
                #expect(fast == nil || fast == general, "\(bytes) at \(at): \(String(describing: fast)) against \(String(describing: general))")
                #expect(ISO8601.parse(bytes: buffer) == general, "\(bytes)")
            }
        }
    }

    @Test func aDateReadInOneStepIsTheDateTheTwoStepsRead() {
        var generator = SplitMix64(seed: 0x5EED_0003)
        // 2001 ± 2³¹ seconds, where the one step stops trusting a Double to hold every microsecond.
        let edge: Int64 = 978_307_200_000_000 + (1 << 31) * 1_000_000
        let mirrored: Int64 = 978_307_200_000_000 - (1 << 31) * 1_000_000
        var samples = [ISO8601.minMicros, ISO8601.maxMicros, 0, -1, 978_307_200_000_000, 978_307_199_999_999]
        for center in [edge, mirrored] { samples += (-3_000_001...3_000_001).lazy.filter { $0 % 250_000 == 1 || abs($0) < 3 }.map { center + $0 } }
        samples += (0..<20_000).map { _ in Int64.random(in: ISO8601.minMicros...ISO8601.maxMicros, using: &generator) }
        for micros in samples {
            for rounded in [micros, micros / 1000 * 1000, micros / 1_000_000 * 1_000_000] {
                var text = ISO8601.format(microseconds: rounded)
                let twoSteps = text.withUTF8 { ISO8601.parse(bytes: $0) }.flatMap(ISO8601.exactDate(microseconds:))
                let oneStep = text.withUTF8 { ISO8601.parseDate(bytes: $0) }
                #expect(oneStep?.timeIntervalSinceReferenceDate.bitPattern == twoSteps?.timeIntervalSinceReferenceDate.bitPattern, "\(text)")
            }
        }
        // Other forms, and texts that are no date, read (or fail) as the two steps do.
        for text in ["2024-03-01T12:34:56Z", "2024-03-01T12:34:56.5+02:00", "2024-03-01", "2024-02-30 00:00:00", "", "9999-12-31 23:59:59.999999"] {
            var text = text
            let twoSteps = text.withUTF8 { ISO8601.parse(bytes: $0) }.flatMap(ISO8601.exactDate(microseconds:))
            #expect(text.withUTF8 { ISO8601.parseDate(bytes: $0) } == twoSteps, "\(text)")
        }
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

import Depot
import DepotSync
import Foundation
import Testing
import TestSupport

/// The merge that sync rests on: whatever order, duplicates and replays the
/// states of a row arrive in, replicas end equal.
@Suite struct SyncMergeProperties {
    static let nodes = [UUID(), UUID(), UUID()]
    static let values: [Value] = [.null, .bool(false), .bool(true), .integer(0), .integer(-1), .integer(Int64.max), .double(0), .double(-0.0),
                                  .double(1.5), .text(""), .text("a"), .text("é"), .text("A"), .blob(Data([0, 1])), .uuid(UUID()),
                                  .date(Date(timeIntervalSince1970: 1_700_000_000.5)), .json("{}"), .decimal(text: "1.10") ?? .null]

    static func seed() -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("SyncMergeProperties: seed \(seed) (replay with DEPOT_SYNC_SEED=\(seed))")
        return seed
    }

    /// A random state: few columns, few stamps (so ties happen), any causal length.
    static func randomRow(_ g: inout SeededGenerator) -> SyncRow {
        var row = SyncRow(causalLength: Int64.random(in: 0...5, using: &g))
        for column in ["a", "b", "c"] where !g.chance(3) {
            let stamp = SyncStamp(time: HybridTimestamp(milliseconds: Int64.random(in: 1...3, using: &g), counter: UInt16.random(in: 0...1, using: &g)),
                                  node: g.pick(nodes))
            row.registers[column] = SyncRegister(value: g.pick(values), stamp: stamp)
        }
        return row
    }

    @Test func mergingIsCommutativeAssociativeAndIdempotent() {
        var g = SeededGenerator(seed: Self.seed())
        for _ in 0..<20_000 {
            let (a, b, c) = (Self.randomRow(&g), Self.randomRow(&g), Self.randomRow(&g))
            #expect(a.merged(with: b) == b.merged(with: a), "commutative: \(a) \(b)")
            #expect(a.merged(with: b).merged(with: c) == a.merged(with: b.merged(with: c)), "associative")
            #expect(a.merged(with: a) == a, "idempotent")
            #expect(a.merged(with: b).merged(with: b) == a.merged(with: b), "a replay changes nothing")
        }
    }

    @Test func replicasThatSawTheSameStatesInAnyOrderWithDuplicatesAreEqual() {
        var g = SeededGenerator(seed: Self.seed())
        for _ in 0..<2_000 {
            let states = (0..<Int.random(in: 1...6, using: &g)).map { _ in Self.randomRow(&g) }
            let reference = states.reduce(SyncRow()) { $0.merged(with: $1) }
            var delivered = states + states.filter { _ in g.chance(2) }
            delivered.shuffle(using: &g)
            #expect(delivered.reduce(SyncRow()) { $0.merged(with: $1) } == reference)
        }
    }

    @Test func aLaterWriteWinsAndADeleteWinsOverAConcurrentEdit() {
        let (phone, laptop) = (Self.nodes[0], Self.nodes[1])
        var created = SyncRow()
        created.write(["title": .text("Milk")], stamp: SyncStamp(time: HybridTimestamp(milliseconds: 10, counter: 0), node: phone))
        var edited = created, deleted = created
        edited.write(["title": .text("Oat milk")], stamp: SyncStamp(time: HybridTimestamp(milliseconds: 20, counter: 0), node: laptop))
        deleted.delete()
        #expect(edited.merged(with: created).registers["title"]?.value == .text("Oat milk"), "the later write")
        let both = edited.merged(with: deleted)
        #expect(!both.exists, "deleted, though edited concurrently")
        var restored = both
        restored.write(["title": .text("Milk again")], stamp: SyncStamp(time: HybridTimestamp(milliseconds: 30, counter: 0), node: phone))
        #expect(restored.exists && restored.causalLength == 3, "an explicit restore")
        #expect(restored.merged(with: deleted).exists, "the restore wins over the old delete")

        // A deleted life's registers (whose values went with the row) never
        // win over a later life's, however late their stamps.
        var late = created
        late.write(["title": .text("Late edit")], stamp: SyncStamp(time: HybridTimestamp(milliseconds: 99, counter: 0), node: laptop))
        late.delete()
        late.registers["title"]?.value = .null
        let revived = restored.merged(with: late)
        #expect(revived.exists && revived.registers["title"]?.value == .text("Milk again"), "\(revived)")
    }

    @Test func equalStampsWithDifferentValuesPickTheSameWinnerEverywhere() {
        let stamp = SyncStamp(time: HybridTimestamp(milliseconds: 5, counter: 0), node: Self.nodes[2])
        for a in Self.values {
            for b in Self.values where a != b {
                let (x, y) = (SyncRegister(value: a, stamp: stamp), SyncRegister(value: b, stamp: stamp))
                #expect(SyncRegister.winner(x, y) == SyncRegister.winner(y, x), "\(a) against \(b)")
                #expect(SyncValueOrder.precedes(a, b) != SyncValueOrder.precedes(b, a), "a total order: \(a), \(b)")
            }
        }
    }
}

@Suite struct HybridClockProperties {
    @Test func stampsNeverRunBackwardsWhateverTheWallClockDoes() throws {
        let seed = SyncMergeProperties.seed()
        var g = SeededGenerator(seed: seed)
        var clock = HybridClock()
        var wall = 1_700_000_000.0
        var previous = HybridTimestamp.zero
        for _ in 0..<100_000 {
            switch Int.random(in: 0..<10, using: &g) {
            case 0: wall -= Double.random(in: 0...3_600, using: &g)       // a jump back (NTP, a user)
            case 1: break                                                 // a frozen clock
            case 2: wall += Double.random(in: 0...10, using: &g)
            default: wall += 0.0001
            }
            let stamp: HybridTimestamp
            if g.chance(4) {
                let remote = HybridTimestamp(milliseconds: Int64(wall * 1000) + Int64.random(in: -100_000...100_000, using: &g),
                                             counter: UInt16.random(in: 0...UInt16.max, using: &g))
                stamp = try clock.receive(remote, at: Date(timeIntervalSince1970: wall))
                #expect(stamp > remote, "after what it received")
            } else {
                stamp = try clock.tick(at: Date(timeIntervalSince1970: wall))
            }
            #expect(stamp > previous, "seed \(seed): \(stamp) after \(previous)")
            previous = stamp
        }
    }

    @Test func aStampFarAheadIsRefusedAndChangesNothing() throws {
        var clock = HybridClock(maximumDrift: .seconds(300))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let before = try clock.tick(at: now)
        let ahead = HybridTimestamp(milliseconds: 1_700_000_000_000 + 3 * 3_600_000, counter: 0)
        #expect(throws: HybridClock.Failure.clockAhead(received: ahead, localMilliseconds: 1_700_000_000_000)) {
            try clock.receive(ahead, at: now)
        }
        #expect(clock.last == before)
        let slightlyAhead = HybridTimestamp(milliseconds: 1_700_000_000_000 + 60_000, counter: 7)
        #expect(try clock.receive(slightlyAhead, at: now) == HybridTimestamp(milliseconds: 1_700_000_060_000, counter: 8))
        #expect(try clock.tick(at: now) == HybridTimestamp(milliseconds: 1_700_000_060_000, counter: 9), "the clock stays ahead with what it received")
    }

    @Test func aFullCounterMovesToTheNextMillisecond() throws {
        var clock = HybridClock(last: HybridTimestamp(milliseconds: 1_000, counter: UInt16.max))
        #expect(try clock.tick(at: Date(timeIntervalSince1970: 0.5)) == HybridTimestamp(milliseconds: 1_001, counter: 0))
    }
}

extension SyncMergeProperties {
    /// The wire form keeps every value exactly: doubles by their bits (-0.0,
    /// NaN's payload, the largest finite), dates to the last bit, text with
    /// U+0000 and emoji, integers at their edges; and malformed input is an
    /// error, never a default.
    @Test func theWireFormKeepsEveryValueExactly() throws {
        var g = SeededGenerator(seed: Self.seed())
        let edges: [Value] = [.double(.greatestFiniteMagnitude), .double(-.leastNonzeroMagnitude), .double(Double(bitPattern: 0x7FF8_0000_0000_0001)),
                              .integer(Int64.min), .text("a\u{0}b 😀 e\u{301}"), .date(Date(timeIntervalSince1970: -1e-7)),
                              .decimal(text: "-12345678901234567890.123") ?? .null, .blob(Data())]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for _ in 0..<2_000 {
            var row = Self.randomRow(&g)
            if g.chance(2) { row.registers["edge"] = SyncRegister(value: g.pick(edges), stamp: SyncStamp(time: .zero, node: g.pick(Self.nodes))) }
            let bytes = try encoder.encode(row)
            let decoded = try JSONDecoder().decode(SyncRow.self, from: bytes)
            #expect(try encoder.encode(decoded) == bytes, "the same bytes again")
            #expect(decoded.causalLength == row.causalLength && decoded.registers.count == row.registers.count)
            for (column, register) in row.registers {
                let back = try #require(decoded.registers[column])
                #expect(back.stamp == register.stamp)
                if case .double(let x) = register.value, case .double(let y) = back.value {
                    #expect(x.bitPattern == y.bitPattern)
                } else {
                    #expect(back.value == register.value, "\(register.value)")
                }
            }
        }
        for malformed in [#"{"cl":1,"writes":[{"time":1,"node":"00000000-0000-0000-0000-000000000001","values":{"a":["integer","1.5"]}}]}"#,
                          #"{"cl":1,"writes":[{"time":1,"node":"00000000-0000-0000-0000-000000000001","values":{"a":["bool","yes"]}}]}"#,
                          #"{"cl":1,"writes":[{"time":1,"node":"00000000-0000-0000-0000-000000000001","values":{"a":["text"]}}]}"#,
                          #"{"cl":1,"writes":[{"time":1,"node":"00000000-0000-0000-0000-000000000001","values":{"a":["color","red"]}}]}"#] {
            #expect(throws: DecodingError.self) { _ = try JSONDecoder().decode(SyncRow.self, from: Data(malformed.utf8)) }
        }
    }
}

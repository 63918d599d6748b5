import Depot
import DepotSync
import Foundation
import Testing
import TestSupport

/// The hand-written wire form of pushes and pages: the very bytes
/// Foundation's `JSONEncoder` writes with sorted keys (so a push's content
/// hash, and every peer of an earlier version, are unchanged), read back
/// exactly, and malformed input refused with an error that names no value.
@Suite struct SyncWireTests {
    static let sorted: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static let texts = ["", "a", "a/b", "quote \" and \\ back", "tab\tnew\nline\r\u{8}\u{c}", "\u{0}\u{1}\u{1f}\u{7f}", "é", "e\u{301}",
                        "😀 and \u{2028}", "ﬀ", String(repeating: "x", count: 300)]

    static func randomValue(_ g: inout SeededGenerator) -> Value {
        switch Int.random(in: 0..<10, using: &g) {
        case 0: return .null
        case 1: return .bool(g.chance(2))
        case 2: return .integer(g.pick([Int64.min, Int64.max, 0, -1, Int64.random(in: .min ... .max, using: &g)]))
        case 3: return .double(Double(bitPattern: UInt64.random(in: 0 ... .max, using: &g)))
        case 4: return .text(g.pick(texts))
        case 5: return .blob(Data((0..<Int.random(in: 0..<20, using: &g)).map { _ in UInt8.random(in: 0 ... 255, using: &g) }))
        case 6: return .date(Date(timeIntervalSince1970: Double(Int64.random(in: -1_000_000_000 ... 4_000_000_000, using: &g)) / 7))
        case 7: return .uuid(UUID())
        case 8: return .json(#"{"a":[1,"\u0000"]}"#)
        default: return .decimal(text: g.pick(["1.10", "-0.5", "12345678901234567890.123"])) ?? .null
        }
    }

    static func randomChange(_ g: inout SeededGenerator, columns: [String]) -> SyncChange {
        var row = SyncRow(causalLength: Int64.random(in: 0...4, using: &g))
        let nodes = [UUID(), UUID()]
        for column in columns where !g.chance(4) {
            let stamp = SyncStamp(time: HybridTimestamp(rawValue: Int64.random(in: 0 ... .max, using: &g) >> Int.random(in: 0...40, using: &g)),
                                  node: g.pick(nodes))
            row.registers[column] = SyncRegister(value: randomValue(&g), stamp: stamp)
        }
        return SyncChange(table: g.pick(["t", "syncNotes", "é/table"]), key: g.pick(texts + [UUID().uuidString.lowercased()]), row: row,
                          isEvicted: g.chance(8), wasSynced: g.chance(3), version: g.chance(2) ? Int64.random(in: 0 ... .max, using: &g) : nil)
    }

    static func randomPush(_ g: inout SeededGenerator, columns: [String]) -> SyncPush {
        SyncPush(client: UUID(), number: Int64.random(in: 1 ... .max, using: &g),
                 changes: (0..<Int.random(in: 0...6, using: &g)).map { _ in randomChange(&g, columns: columns) },
                 seen: g.chance(2) ? Int64.random(in: 0 ... .max, using: &g) : nil, protocolVersion: g.chance(2) ? 3 : nil,
                 schema: g.chance(2) ? SyncSchema([]) : nil)
    }

    static func randomPage(_ g: inout SeededGenerator, columns: [String]) -> SyncPage {
        SyncPage(changes: (0..<Int.random(in: 0...6, using: &g)).map { _ in randomChange(&g, columns: columns) },
                 next: SyncCursor(version: Int64.random(in: 0 ... .max, using: &g), table: g.pick(["", "t"]), key: g.pick(texts)),
                 head: Int64.random(in: 0 ... .max, using: &g), isCaughtUp: g.chance(2),
                 overridden: g.chance(2) ? [SyncOverride(row: SyncRowID(table: "t", key: g.pick(texts)), column: g.pick(columns))] : [],
                 startsOver: g.chance(5), horizon: g.chance(2) ? Int64.random(in: 1 ... .max, using: &g) : 0)
    }

    static func seed() -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["DEPOT_SYNC_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("SyncWireTests: seed \(seed) (replay with DEPOT_SYNC_SEED=\(seed))")
        return seed
    }

    @Test func aPushIsTheBytesFoundationWritesWithSortedKeysAndReadsBackToThem() throws {
        var g = SeededGenerator(seed: Self.seed())
        for _ in 0..<1_000 {
            var push = Self.randomPush(&g, columns: ["a", "b", "title", "Z_9"])
            if g.chance(3) {
                var schema = SyncSchema([])
                schema.tables = ["t": ["a", "b"], "syncNotes": ["title"], "é/table": []]
                push.schema = schema
            }
            let bytes = push.wireJSON()
            let foundation = try Self.sorted.encode(push)
            #expect(bytes == foundation, "\(String(decoding: bytes, as: UTF8.self))\nFoundation: \(String(decoding: foundation, as: UTF8.self))")
            #expect(try SyncPush(wireJSON: bytes).wireJSON() == bytes, "read back to the same bytes")
            #expect(try JSONDecoder().decode(SyncPush.self, from: bytes).wireJSON() == bytes, "Foundation reads them alike")
            #expect(try SyncPush(wireJSON: try JSONEncoder().encode(push)).wireJSON() == bytes, "what Foundation writes, unsorted, reads alike")
        }
    }

    @Test func aPageIsTheBytesFoundationWritesWithSortedKeysAndReadsBackToThem() throws {
        var g = SeededGenerator(seed: Self.seed())
        for _ in 0..<1_000 {
            let page = Self.randomPage(&g, columns: ["a", "b", "title"])
            let bytes = page.wireJSON()
            let foundation = try Self.sorted.encode(page)
            #expect(bytes == foundation, "\(String(decoding: bytes, as: UTF8.self))\nFoundation: \(String(decoding: foundation, as: UTF8.self))")
            #expect(try SyncPage(wireJSON: bytes).wireJSON() == bytes)
            #expect(try JSONDecoder().decode(SyncPage.self, from: bytes).wireJSON() == bytes)
            #expect(try SyncPage(wireJSON: try JSONEncoder().encode(page)).wireJSON() == bytes)
        }
    }

    @Test func columnNamesOutsideASCIIGoAndComeBackExactly() throws {
        var g = SeededGenerator(seed: Self.seed())
        for _ in 0..<200 {
            // Two names Swift calls equal (é composed and decomposed) stay two columns.
            let push = Self.randomPush(&g, columns: ["é", "e\u{301}", "列", "a/b"])
            let bytes = push.wireJSON()
            let back = try SyncPush(wireJSON: bytes)
            #expect(back.wireJSON() == bytes)
            for (change, read) in zip(push.changes, back.changes) {
                #expect(Set(change.row.registers.keys.map { Array($0.utf8) }) == Set(read.row.registers.keys.map { Array($0.utf8) }))
            }
        }
    }

    @Test func wholeNumbersAreTakenInAnyFormFoundationTakesAndNothingIsRounded() throws {
        func version(_ number: String) throws -> Int64 {
            try SyncPage(wireJSON: Data(#"{"changes":[],"head":0,"isCaughtUp":true,"next":{"key":"","table":"","version":\#(number)}}"#.utf8)).next.version
        }
        #expect(try version("42") == 42)
        #expect(try version("-0") == 0)
        #expect(try version("1.0") == 1)
        #expect(try version("1e2") == 100)
        #expect(try version("4.2E1") == 42)
        #expect(try version("-9223372036854775808") == Int64.min)
        #expect(try version("9223372036854775807") == Int64.max)
        #expect(try version("9223372036854775807.0") == Int64.max)
        for refused in ["1.5", "9223372036854775808", "-9223372036854775809", "1e19", "01", "-", "1.", ".5", "1e", "0x10", "\"1\"", "true", "null"] {
            #expect(throws: DecodingError.self, "\(refused)") { _ = try version(refused) }
        }
    }

    @Test func malformedInputIsADecodingErrorThatNamesNoValue() throws {
        let node = "00000000-0000-0000-0000-000000000001"
        let valid = #"{"changes":[{"key":"k1","row":{"cl":1,"writes":[{"node":"\#(node)","time":5,"values":{"a":["text","s3cret"]}}]},"table":"t"}],"client":"\#(node)","number":1}"#
        _ = try SyncPush(wireJSON: Data(valid.utf8))
        // Cut anywhere: an error, never a crash or a default.
        for length in 0..<valid.utf8.count {
            #expect(throws: DecodingError.self) { _ = try SyncPush(wireJSON: Data(valid.utf8.prefix(length))) }
        }
        let malformed = [
            valid.replacingOccurrences(of: #"["text","s3cret"]"#, with: #"["uuid","s3cret"]"#),
            valid.replacingOccurrences(of: #"["text","s3cret"]"#, with: #"["integer","s3cret"]"#),
            valid.replacingOccurrences(of: #"["text","s3cret"]"#, with: #"["text","s3cret","s3cret"]"#),
            valid.replacingOccurrences(of: #""s3cret""#, with: #""s3cret\ud800""#),
            valid.replacingOccurrences(of: #""s3cret""#, with: #""s3cret\q""#),
            valid.replacingOccurrences(of: #""s3cret""#, with: "\"s3cret\u{1}\""),
            valid.replacingOccurrences(of: #""number":1"#, with: #""number":"1""#),
            valid.replacingOccurrences(of: #""client":"\#(node)""#, with: #""client":"s3cret""#),
            valid.replacingOccurrences(of: #""time":5"#, with: #""time":99999999999999999999"#),
            valid + "s3cret",
            valid.replacingOccurrences(of: #""table":"t""#, with: #""table":"t","unknown":\#(String(repeating: "[", count: 10_000))"#),
        ]
        var invalidUTF8 = Data(valid.utf8)
        invalidUTF8.replaceSubrange(try #require(invalidUTF8.range(of: Data("s3cret".utf8))), with: [0x73, 0xC3, 0x28, 0x63])
        for text in malformed {
            #expect(throws: DecodingError.self, "\(text.prefix(200))") { _ = try SyncPush(wireJSON: Data(text.utf8)) }
        }
        do {
            _ = try SyncPush(wireJSON: invalidUTF8)
            Issue.record("a string that is not UTF-8 was read")
        } catch let error as DecodingError {
            guard case .dataCorrupted(let context) = error else { Issue.record("\(error)"); return }
            #expect(context.debugDescription.hasPrefix("a string that is not valid UTF-8"), "\(context.debugDescription)")
        }
        for text in [valid.replacingOccurrences(of: #"["text","s3cret"]"#, with: #"["uuid","s3cret"]"#),
                     valid.replacingOccurrences(of: #""client":"\#(node)""#, with: #""client":"s3cret""#)] {
            do {
                _ = try SyncPush(wireJSON: Data(text.utf8))
            } catch {
                #expect(!"\(error)".contains("s3cret"), "\(error)")
            }
        }
        // Unknown keys, from a newer peer, are skipped.
        let newer = valid.replacingOccurrences(of: #""number":1"#, with: #""number":1,"later":{"a":[1,2.5e3,null,true,"x"]}"#)
        #expect(try SyncPush(wireJSON: Data(newer.utf8)).number == 1)
    }
}

@testable import Depot
import Foundation
import Testing

@Suite struct RowDecoderTests {
    func row(_ pairs: KeyValuePairs<String, Value>) -> Row {
        Row(columns: ColumnSet(pairs.map(\.key)), values: pairs.map(\.value))
    }

    func message(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "no error"
        } catch let error as DecodingError {
            switch error {
            case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c), .keyNotFound(_, let c): return c.debugDescription
            @unknown default: return "\(error)"
            }
        } catch {
            return "\(error)"
        }
    }

    struct Item: Codable, Equatable { var id: Int64; var title: String; var notes: String?; var count: Int8 }

    @Test func decodesByName() throws {
        let item = try RowDecoder().decode(Item.self, from: row(["notes": .null, "count": .integer(3), "title": .text(""), "id": .integer(1)]))
        #expect(item == Item(id: 1, title: "", notes: nil, count: 3))
    }

    @Test func errorTextsArePinned() {
        #expect(message { _ = try RowDecoder().decode(Item.self, from: row(["id": .integer(1), "title": .null, "notes": .null, "count": .integer(1)])) }
                == #"column "title" (index 1): NULL cannot be decoded as non-optional String"#)
        #expect(message { _ = try RowDecoder().decode(Item.self, from: row(["id": .integer(1), "title": .text("t"), "notes": .null, "count": .integer(300)])) }
                == #"column "count" (index 3): cannot decode Int8 from INTEGER 300: out of range -128...127"#)
        #expect(message { _ = try RowDecoder().decode(Item.self, from: row(["id": .text("abc"), "title": .text("t"), "notes": .null, "count": .integer(1)])) }
                == #"column "id" (index 0): cannot decode Int64 from TEXT 'abc'"#)
        #expect(message { _ = try RowDecoder().decode(Item.self, from: row(["id": .integer(1), "title": .text("t"), "count": .integer(1)])) }
                == #"no column for key "notes"; the row has columns: id, title, count"#)
        #expect(message { _ = try RowDecoder().decode(Item.self, from: row(["id": .double(1.5), "title": .text("t"), "notes": .null, "count": .integer(1)])) }
                == #"column "id" (index 0): cannot decode Int64 from REAL 1.5: not a whole number"#)
    }

    @Test func missingColumnsMayReadAsNilWhenAsked() throws {
        var decoder = RowDecoder()
        decoder.missingColumnStrategy = .decodeOptionalAsNil
        let item = try decoder.decode(Item.self, from: row(["id": .integer(1), "title": .text("t"), "count": .integer(1)]))
        #expect(item.notes == nil)
        #expect(throws: DecodingError.self) { try decoder.decode(Item.self, from: row(["id": .integer(1), "notes": .null, "count": .integer(1)])) }
    }

    @Test func emptyTextAndNullStayDistinctAndEmptyBlobIsEmptyData() throws {
        struct S: Codable { var a: String?; var b: String?; var c: Data }
        let s = try RowDecoder().decode(S.self, from: row(["a": .text(""), "b": .null, "c": .blob(Data())]))
        #expect(s.a == "" && s.b == nil && s.c == Data())
    }

    @Test func booleansAreZeroOrOneOnly() {
        struct B: Codable { var flag: Bool }
        #expect(throws: Never.self) { try RowDecoder().decode(B.self, from: row(["flag": .integer(1)])) }
        #expect(message { _ = try RowDecoder().decode(B.self, from: row(["flag": .integer(2)])) }
                == #"column "flag" (index 0): cannot decode Bool from INTEGER 2: a stored Bool is 0 or 1"#)
    }

    @Test func uuidsReadFromEveryStoredForm() throws {
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        struct U: Codable { var u: UUID }
        for stored: Value in [.uuid(uuid), .text(uuid.uuidString), .text(uuid.uuidString.lowercased()), .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })] {
            #expect(try RowDecoder().decode(U.self, from: row(["u": stored])).u == uuid)
        }
        #expect(throws: DecodingError.self) { try RowDecoder().decode(U.self, from: row(["u": .blob(Data([1, 2]))])) }
    }

    @Test func decimalsAreExactAndStrict() throws {
        struct D: Codable { var d: Decimal }
        #expect(try RowDecoder().decode(D.self, from: row(["d": .text("12345678901234567890.5")])).d == Decimal(string: "12345678901234567890.5"))
        #expect(throws: DecodingError.self) { try RowDecoder().decode(D.self, from: row(["d": .text("12abc")])) }
        struct F: Codable { var f: Double }
        #expect(try RowDecoder().decode(F.self, from: row(["f": .decimal(Decimal(string: "2.5")!)])).f == 2.5)
        #expect(throws: DecodingError.self) { try RowDecoder().decode(F.self, from: row(["f": .decimal(Decimal(string: "0.1000000000000000000001")!)])) }
    }

    @Test func malformedJSONNamesThePathInside() {
        struct Tag: Codable { var name: String }
        struct T: Codable { var tags: [Tag] }
        let text = message { _ = try RowDecoder().decode(T.self, from: row(["tags": .json(#"[{"name": "a"}, {"nom": "b"}]"#)])) }
        #expect(text == #"column "tags" (index 0): invalid JSON for Array<Tag> at [1]: missing key "name""#)
        let broken = message { _ = try RowDecoder().decode(T.self, from: row(["tags": .text("[{")])) }
        #expect(broken.hasPrefix(#"column "tags" (index 0): invalid JSON for Array<Tag>"#))
    }

    @Test func singleValuesNeedOneColumn() throws {
        #expect(try RowDecoder().decode(Int.self, from: row(["n": .integer(4)])) == 4)
        #expect(try RowDecoder().decode(Int?.self, from: row(["n": .null])) == nil)
        #expect(message { _ = try RowDecoder().decode(Int.self, from: row(["a": .integer(4), "b": .integer(5)])) }
                == "cannot decode Int from a row of 2 columns (a, b): a single value needs exactly one column")
    }

    @Test func aClassHierarchyReadsOneRow() throws {
        class Base: Codable { var id: Int64 = 0 }
        final class Child: Base { var name = ""
            enum K: CodingKey { case name }
            required init(from decoder: any Decoder) throws {
                name = try decoder.container(keyedBy: K.self).decode(String.self, forKey: .name)
                try super.init(from: decoder.container(keyedBy: K.self).superDecoder())
            }
        }
        let child = try RowDecoder().decode(Child.self, from: row(["id": .integer(9), "name": .text("n")]))
        #expect(child.id == 9 && child.name == "n")
    }
}

@testable import Depot
import Foundation
import Testing

@Suite struct RowEncoderTests {
    enum Priority: String, Codable { case low, high }
    struct Tag: Codable, Equatable { var name: String; var weight: Int }
    struct Record1: Codable {
        var id: Int64
        var title: String
        var notes: String?
        var priority: Priority
        var tags: [Tag]
        var due: Date?
        var uuid: UUID
        var amount: Decimal
        var photo: Data
    }

    let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    @Test func propertiesBecomeColumnsInOrderWithNilAsNull() throws {
        let row = try RowEncoder().encode(Record1(id: 1, title: "t", notes: nil, priority: .high,
                                                  tags: [Tag(name: "b", weight: 2)], due: nil, uuid: uuid,
                                                  amount: Decimal(string: "1.10")!, photo: Data([1, 2])))
        #expect(row.columns.names == ["id", "title", "notes", "priority", "tags", "due", "uuid", "amount", "photo"])
        #expect(row.values == [.integer(1), .text("t"), .null, .text("high"), .json(#"[{"name":"b","weight":2}]"#),
                               .null, .uuid(uuid), .decimal(Decimal(string: "1.1")!), .blob(Data([1, 2]))])
    }

    @Test func aKeyWrittenTwiceKeepsItsLastValueAtItsFirstPlace() throws {
        struct Twice: Encodable {
            enum K: String, CodingKey { case a, b }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: K.self)
                try c.encode(1, forKey: .a)
                try c.encode(2, forKey: .b)
                try c.encode(3, forKey: .a)
            }
        }
        let row = try RowEncoder().encode(Twice())
        #expect(row.columns.names == ["a", "b"])
        #expect(row.values == [.integer(3), .integer(2)])
    }

    @Test func snakeCaseNamesColumns() throws {
        struct S: Codable { var dueDate: Int; var remindersListID: Int; var isURLValid: Bool; var a1B: Int }
        var encoder = RowEncoder()
        encoder.keyStrategy = .snakeCase
        let row = try encoder.encode(S(dueDate: 1, remindersListID: 2, isURLValid: true, a1B: 3))
        #expect(row.columns.names == ["due_date", "reminders_list_id", "is_url_valid", "a1_b"])
    }

    @Test func unsignedAboveInt64MaxIsAnEncodingErrorNamingTheProperty() throws {
        struct U: Codable { var big: UInt64 }
        #expect(throws: EncodingError.self) { try RowEncoder().encode(U(big: .max)) }
        do {
            _ = try RowEncoder().encode(U(big: .max))
        } catch let EncodingError.invalidValue(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["big"])
            #expect(context.debugDescription.hasPrefix("18446744073709551615 is above Int64.max (9223372036854775807)"))
        }
    }

    @Test func nanIsRefusedAndInfinityKept() throws {
        struct D: Codable { var d: Double }
        #expect(throws: EncodingError.self) { try RowEncoder().encode(D(d: .nan)) }
        #expect(try RowEncoder().encode(D(d: -.infinity)).values == [.double(-.infinity)])
    }

    @Test func aSingleValueIsNotARow() {
        #expect(throws: EncodingError.self) { try RowEncoder().encode(42) }
        #expect(throws: EncodingError.self) { try RowEncoder().encode([1, 2]) }
    }

    @Test func strategiesShapeValues() throws {
        struct V: Codable { var date: Date; var uuid: UUID; var data: Data }
        let value = V(date: Date(timeIntervalSince1970: 1.5), uuid: uuid, data: Data([255]))
        var encoder = RowEncoder()
        encoder.dateEncodingStrategy = .iso8601Text
        encoder.uuidEncodingStrategy = .uppercaseText
        encoder.dataEncodingStrategy = .base64Text
        #expect(try encoder.encode(value).values == [.text("1970-01-01 00:00:01.500"), .text(uuid.uuidString), .text("/w==")])
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.uuidEncodingStrategy = .blob
        #expect(try encoder.encode(value).values.prefix(2) == [.integer(1500), .blob(Data(withUnsafeBytes(of: uuid.uuid) { Array($0) }))])
        encoder.dateEncodingStrategy = .millisecondsSince1970
        #expect(throws: EncodingError.self) { try encoder.encode(V(date: Date(timeIntervalSince1970: 0.0001), uuid: uuid, data: Data())) }
    }

    @Test func singleValueWrappersStoreTheirValue() throws {
        struct Meters: Codable { var value: Double
            init(_ v: Double) { value = v }
            init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Double.self) }
            func encode(to encoder: any Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(value) }
        }
        struct Run: Codable { var distance: Meters; var optionalTags: [String]? }
        let row = try RowEncoder().encode(Run(distance: Meters(5), optionalTags: ["a"]))
        #expect(row.values == [.double(5), .json(#"["a"]"#)])
        let decoded = try RowDecoder().decode(Run.self, from: row)
        #expect(decoded.distance.value == 5 && decoded.optionalTags == ["a"])
    }
}

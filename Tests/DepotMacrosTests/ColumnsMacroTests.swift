import DepotMacrosImplementation
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// What `@Columns` writes, and what it refuses.
@Suite struct ColumnsMacroExpansion {
    let macros: [String: MacroSpec] = ["Columns": MacroSpec(type: DepotMacrosImplementation.ColumnsMacro.self, conformances: ["ColumnMapped"])]

    func expect(_ source: String, expands expanded: String, diagnostics: [DiagnosticSpec] = [],
                sourceLocation: SourceLocation = #_sourceLocation) {
        assertMacroExpansion(source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: macros) { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    @Test func storedPropertiesAreReadAndWrittenInDeclarationOrder() {
        expect("""
            @Columns
            public struct Item {
                static let tableName = "items"
                public var id: Int64?
                var title: String, notes: String
                var count: Int = 0 { didSet {} }
                var computed: Int { 1 }
                lazy var cached: Int = 2
            }
            """, expands: """
            public struct Item {
                static let tableName = "items"
                public var id: Int64?
                var title: String, notes: String
                var count: Int = 0 { didSet {} }
                var computed: Int { 1 }
                lazy var cached: Int = 2
            }

            extension Item: Depot.ColumnMapped {
                public struct Columns: Depot.QueryColumns {
                    public let id: Depot.QueryExpression<Int64?>
                    public let title: Depot.QueryExpression<String>
                    public let notes: Depot.QueryExpression<String>
                    public let count: Depot.QueryExpression<Int>
                    public init(source: Depot.QuerySource) {
                        id = .init(column: "id", source: source)
                        title = .init(column: "title", source: source)
                        notes = .init(column: "notes", source: source)
                        count = .init(column: "count", source: source)
                    }
                }
                public static var columnKeys: [String] {
                    ["id", "title", "notes", "count"]
                }
                public init(columns: inout Depot.ColumnReader) throws {
                    let read0 = try columns.decode(Int64?.self)
                    let read1 = try columns.decode(String.self)
                    let read2 = try columns.decode(String.self)
                    let read3 = try columns.decode(Int.self)
                    self.init(depotColumnValues: (read0, read1, read2, read3))
                }
                /// The value made from its columns' values, in `columnKeys` order.
                private init(depotColumnValues values: (Int64?, String, String, Int)) {
                    self.id = values.0
                    self.title = values.1
                    self.notes = values.2
                    self.count = values.3
                }
                public func encode(columns: inout Depot.ColumnWriter) throws {
                    try columns.encode(self.id)
                    try columns.encode(self.title)
                    try columns.encode(self.notes)
                    try columns.encode(self.count)
                }
            }
            """)
    }

    @Test func codingKeysRenameColumnsAndLeaveOutProperties() {
        expect("""
            @Columns
            struct Renamed {
                var id: Int64
                var displayName: String
                var cache: [Int] = []
                var when: any Sendable & Codable
                enum CodingKeys: String, CodingKey {
                    case id, displayName = "name", when
                }
            }
            """, expands: """
            struct Renamed {
                var id: Int64
                var displayName: String
                var cache: [Int] = []
                var when: any Sendable & Codable
                enum CodingKeys: String, CodingKey {
                    case id, displayName = "name", when
                }
            }

            extension Renamed: Depot.ColumnMapped {
                struct Columns: Depot.QueryColumns {
                    let id: Depot.QueryExpression<Int64>
                    let displayName: Depot.QueryExpression<String>
                    let when: Depot.QueryExpression<(any Sendable & Codable)>
                    init(source: Depot.QuerySource) {
                        id = .init(column: "id", source: source)
                        displayName = .init(column: "name", source: source)
                        when = .init(column: "when", source: source)
                    }
                }
                static var columnKeys: [String] {
                    ["id", "name", "when"]
                }
                init(columns: inout Depot.ColumnReader) throws {
                    let read0 = try columns.decode(Int64.self)
                    let read1 = try columns.decode(String.self)
                    let read2 = try columns.decode((any Sendable & Codable).self)
                    self.init(depotColumnValues: (read0, read1, read2))
                }
                /// The value made from its columns' values, in `columnKeys` order.
                private init(depotColumnValues values: (Int64, String, (any Sendable & Codable))) {
                    self.id = values.0
                    self.displayName = values.1
                    self.when = values.2
                }
                func encode(columns: inout Depot.ColumnWriter) throws {
                    try columns.encode(self.id)
                    try columns.encode(self.displayName)
                    try columns.encode(self.when)
                }
            }
            """)
    }

    @Test func aClassIsRefused() {
        expect("""
            @Columns
            class Box {
                var id: Int64 = 0
            }
            """, expands: """
            class Box {
                var id: Int64 = 0
            }
            """, diagnostics: [DiagnosticSpec(message: "@Columns applies to a struct", line: 1, column: 1)])
    }

    @Test func handWrittenCodableIsRefused() {
        expect("""
            @Columns
            struct Custom {
                var id: Int64
                init(from decoder: any Decoder) throws { id = 1 }
            }
            """, expands: """
            struct Custom {
                var id: Int64
                init(from decoder: any Decoder) throws { id = 1 }
            }
            """, diagnostics: [DiagnosticSpec(
                message: "@Columns cannot follow a hand-written init(from:) or encode(to:); remove @Columns to keep this Codable conformance",
                line: 4, column: 5)])
    }

    @Test func aLetWithAValueAndAnUntypedPropertyAreRefused() {
        expect("""
            @Columns
            struct Odd {
                let kind: String = "odd"
                var count = 0
            }
            """, expands: """
            struct Odd {
                let kind: String = "odd"
                var count = 0
            }
            """, diagnostics: [
                DiagnosticSpec(message: "'kind' is a let with an initial value, which Codable writes but never reads; make it a var, or leave it out of CodingKeys",
                               line: 3, column: 9),
                DiagnosticSpec(message: "'count' needs a type annotation for @Columns to read it", line: 4, column: 9),
            ])
    }
}
